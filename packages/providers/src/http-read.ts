import type { IncomingHttpHeaders } from 'node:http';
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { ProviderError, toProviderError } from './api/errors.ts';
import type { OutboundGuard } from './net/guard.ts';
import { keepErrorListener } from './net/listeners.ts';
import { BufferRing } from './recycle.ts';

/**
 * HTTP/1.1 GETs whose bodies are read into recycled buffers (recycle.ts).
 *
 * node:http allocates a buffer for every socket read and copies every body piece out of it again
 * (its parser hands out copies), so a gigabyte downloaded leaves two gigabytes of garbage and V8
 * answers with dozens of full collections: about half a second of CPU per 700 MB on these
 * machines, taken from the servers and the upload running beside it. Here the socket reads
 * straight into buffers of a `BufferRing` (net's `onread` option, which TLS sockets take too), the
 * response head is parsed here, and each body piece is lent to the reader as a view of its read
 * buffer: the final writer gives it back with `recycle(chunk)` and the next read goes into it.
 *
 * Only what object transfers need: GET, and PUT of a body already in memory (sent with its head
 * in one system call: no ClientRequest, agent or parser per request, which is most of a small
 * file's cost); Content-Length, chunked and close-delimited answers, 1xx answers skipped,
 * keep-alive connections reused (a reused connection that closes before answering is tried once
 * more on a new one: GET and PUT are idempotent), a per-request idle timeout and AbortSignal.
 */

export interface RingHttpOptions {
  secure: boolean;
  hostname: string;
  port: number;
  /** TLS options for https (certificate authorities, rejectUnauthorized, servername). */
  tls?: ConnectionOptions;
  /** Idle keep-alive connections kept (default 32). */
  maxIdle?: number;
  /**
   * Exchanges at once, from request to the end of its answer (default: no limit); more wait their
   * turn. WebDAV keeps its downloads to as many connections as its other requests may use.
   */
  maxConnections?: number;
  /** An idle connection is closed after this many ms (default 4,000, under common servers' 5 s). */
  idleMs?: number;
  /** Read buffers (default 64 KiB each, 64 kept). */
  ring?: BufferRing;
  /**
   * Bigger read buffers (a size other than `ring`'s) for answers whose Content-Length is at least
   * their size: on a fast link a large download then goes in a sixteenth of the reads and hand-offs
   * (WebDAV downloads on loopback: 1 MiB reads about twice as fast as 64 KiB ones), while small
   * answers keep small buffers.
   */
  bigRing?: BufferRing;
  /** Checks the server's address on every new connection (unset: any address). */
  guard?: OutboundGuard;
}

export interface RingRequest {
  /** GET (the default), or PUT with `body`. */
  method?: 'GET' | 'PUT';
  /** A PUT's whole body (its Content-Length is set from it). */
  body?: Buffer;
  /** Path and query, already encoded. */
  path: string;
  /** Request headers (Host is added when absent). Values must not contain CR or LF. */
  headers: Record<string, string | number | undefined>;
  signal?: AbortSignal | undefined;
  /** The request fails 'network' when the connection is silent this long. */
  timeoutMs: number;
  /** Names the request in error messages. */
  what: string;
}

/** The answer to a RingHttp request: its status and headers, and its body as a stream of lent chunks. */
export class RingResponse extends Readable {
  statusCode = 0;
  statusMessage = '';
  headers: IncomingHttpHeaders = {};
  /** Called when the reader wants more after the stream was full. */
  onRead: (() => void) | undefined;
  /** Called when the stream is destroyed before its end. */
  onAbandon: ((err: Error | null) => void) | undefined;

  constructor(opts: ConstructorParameters<typeof Readable>[0]) {
    super(opts);
    // A connection lost before the reader listens must not end the process.
    keepErrorListener(this);
  }

  override _read(): void {
    this.onRead?.();
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    if (!this.readableEnded) this.onAbandon?.(err);
    cb(err);
  }
}

const CRLFCRLF = Buffer.from('\r\n\r\n');
const MAX_HEAD = 64 * 1024;
const CHUNK_LINE_MAX = 4096;

type Framing = { kind: 'length'; left: number } | { kind: 'chunked' } | { kind: 'close' } | { kind: 'none' };

/** Reads a chunked body (RFC 9112 section 7.1): hands out data pieces, reports the end. */
class ChunkedDecoder {
  private state: 'size' | 'data' | 'data-end' | 'trailer' = 'size';
  private line = '';
  private left = 0;
  done = false;

  /** Feeds bytes [start, end) of buf; calls piece() for each data range; throws on bad framing. */
  feed(buf: Buffer, start: number, end: number, piece: (s: number, e: number) => void): void {
    let i = start;
    while (i < end && !this.done) {
      if (this.state === 'data') {
        const n = Math.min(this.left, end - i);
        piece(i, i + n);
        i += n;
        this.left -= n;
        if (this.left === 0) this.state = 'data-end';
        continue;
      }
      // A line: the chunk size, the CRLF after data, or a trailer line.
      const nl = buf.indexOf(10, i);
      const stop = nl === -1 || nl >= end ? end : nl;
      this.line += buf.toString('latin1', i, stop);
      if (this.line.length > CHUNK_LINE_MAX) throw new Error('chunk line too long');
      i = stop;
      if (stop === end) break;
      i += 1; // the LF
      const line = this.line.replace(/\r$/, '');
      this.line = '';
      if (this.state === 'data-end') {
        if (line !== '') throw new Error('missing CRLF after chunk data');
        this.state = 'size';
      } else if (this.state === 'size') {
        const hex = line.split(';')[0]?.trim() ?? '';
        if (!/^[0-9a-fA-F]{1,15}$/.test(hex)) throw new Error(`bad chunk size "${line.slice(0, 40)}"`);
        this.left = parseInt(hex, 16);
        this.state = this.left === 0 ? 'trailer' : 'data';
      } else if (line === '') {
        this.done = true; // the empty line after the trailers
      }
    }
    if (i < end) throw new Error('bytes after the end of a chunked body');
  }
}

function parseHead(text: string): { status: number; message: string; headers: IncomingHttpHeaders; http10: boolean } {
  const lines = text.split('\r\n');
  const m = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/.exec(lines[0] ?? '');
  if (!m) throw new Error(`not an HTTP/1.x answer: "${(lines[0] ?? '').slice(0, 60)}"`);
  const headers: IncomingHttpHeaders = {};
  for (const line of lines.slice(1)) {
    if (line === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new Error(`bad header line "${line.slice(0, 60)}"`);
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    const had = headers[name];
    if (name === 'set-cookie') headers[name] = [...((had as string[] | undefined) ?? []), value];
    else headers[name] = had === undefined ? value : `${had as string}, ${value}`;
  }
  return { status: Number(m[2]), message: m[3] ?? '', headers, http10: m[1] === '0' };
}

/** One connection; its reads go to the exchange under way (`onBytes`), if any. */
interface Conn {
  socket: Socket;
  /** Takes ownership of `buf` (nread bytes); returns false to stop reading for now. */
  onBytes: ((buf: Buffer, nread: number) => boolean) | undefined;
  /** The connection ended, failed or timed out. */
  onGone: ((err: Error) => void) | undefined;
  /** The buffer the socket reads into next (given back when the connection closes). */
  next: Buffer | undefined;
  /** The next reads go into the big ring (a large answer's body). */
  big: boolean;
  idleTimer: NodeJS.Timeout | undefined;
  gone: boolean;
}

export class RingHttp {
  private readonly opts: RingHttpOptions;
  readonly ring: BufferRing;
  private readonly bigRing: BufferRing | undefined;
  private readonly idle: Conn[] = [];
  /** Exchanges under way (each holds a slot from request to the end of its answer; see slot()). */
  private busy = 0;
  /** Requests waiting for a slot, first come first served. */
  private readonly waiting: (() => void)[] = [];
  private closed = false;
  /** Connections opened so far (tests and benchmarks look at reuse). */
  opened = 0;

  constructor(opts: RingHttpOptions) {
    this.opts = opts;
    this.ring = opts.ring ?? new BufferRing(64 * 1024, 64);
    this.bigRing = opts.bigRing;
    if (this.bigRing && this.bigRing.size === this.ring.size) throw new Error('bigRing must differ in size from ring');
  }

  /** The ring a read buffer came from (told apart by size). */
  private ringOf(buf: Buffer): BufferRing {
    return this.bigRing && buf.length === this.bigRing.size ? this.bigRing : this.ring;
  }

  private putBack(buf: Buffer): void {
    this.ringOf(buf).putBack(buf);
  }

  /** Closes the idle connections (requests under way finish on theirs). */
  close(): void {
    this.closed = true;
    for (const c of this.idle.splice(0)) this.drop(c);
  }

  private drop(c: Conn): void {
    if (c.idleTimer) clearTimeout(c.idleTimer);
    c.idleTimer = undefined;
    c.socket.destroy();
  }

  private open(): Conn {
    const { ring, bigRing } = this;
    const c: Conn = {
      socket: undefined as unknown as Socket,
      onBytes: undefined,
      onGone: undefined,
      next: undefined,
      big: false,
      idleTimer: undefined,
      gone: false,
    };
    const onread = {
      buffer: () => (c.next = (c.big && bigRing ? bigRing : ring).take()),
      callback: (nread: number, buf: Buffer) => {
        c.next = undefined;
        if (c.onBytes) return c.onBytes(buf, nread);
        // Bytes on an idle connection: nothing asked for them.
        this.putBack(buf);
        c.socket.destroy();
        return false;
      },
    };
    const { hostname, port, guard } = this.opts;
    // Through the guard, the socket connects only to an address it checked (see request()).
    const target: { host: string; lookup?: ConnectionOptions['lookup'] } = guard
      ? guard.connectTarget(hostname)
      : { host: hostname };
    c.socket = this.opts.secure
      ? tlsConnect({
          ...target,
          port,
          ...(isIP(hostname) ? {} : { servername: hostname }),
          ...this.opts.tls,
          onread,
        } as ConnectionOptions)
      : netConnect({ ...target, port, onread, noDelay: true });
    keepErrorListener(c.socket);
    this.opened += 1;
    const gone = (err: Error) => {
      if (c.gone) return;
      c.gone = true;
      if (c.idleTimer) clearTimeout(c.idleTimer);
      const i = this.idle.indexOf(c);
      if (i >= 0) this.idle.splice(i, 1);
      if (c.next) this.putBack(c.next);
      c.next = undefined;
      c.socket.destroy();
      c.onGone?.(err);
    };
    c.socket.on('error', (err) => gone(toProviderError(err)));
    c.socket.on('end', () => gone(new ProviderError('network', 'connection closed by the server')));
    c.socket.on('close', () => gone(new ProviderError('network', 'connection closed')));
    c.socket.on('timeout', () => gone(Object.assign(new ProviderError('network', 'timeout'), { timeout: true })));
    return c;
  }

  private release(c: Conn): void {
    c.big = false;
    c.onBytes = undefined;
    c.onGone = undefined;
    c.socket.setTimeout(0);
    if (this.closed || c.gone || this.idle.length >= (this.opts.maxIdle ?? 32)) {
      this.drop(c);
      return;
    }
    c.socket.unref();
    c.idleTimer = setTimeout(() => {
      const i = this.idle.indexOf(c);
      if (i >= 0) this.idle.splice(i, 1);
      this.drop(c);
    }, this.opts.idleMs ?? 4000);
    c.idleTimer.unref();
    this.idle.push(c);
  }

  private acquire(): { conn: Conn; reused: boolean } {
    for (;;) {
      const c = this.idle.pop();
      if (!c) return { conn: this.open(), reused: false };
      if (c.idleTimer) clearTimeout(c.idleTimer);
      c.idleTimer = undefined;
      if (c.gone || c.socket.destroyed) continue;
      c.socket.ref();
      return { conn: c, reused: true };
    }
  }

  /** The request's head: its line and headers, Host added when absent. */
  private requestHead(req: RingRequest): string {
    if (/[\r\n ]/.test(req.path)) throw new ProviderError('unknown', `${req.what}: a bad request path`);
    let lines = `${req.method ?? 'GET'} ${req.path} HTTP/1.1\r\n`;
    const headers: Record<string, string | number | undefined> = { ...req.headers };
    if (req.body) {
      for (const k of Object.keys(headers)) if (k.toLowerCase() === 'content-length') delete headers[k];
      headers['content-length'] = req.body.length;
    }
    if (!Object.keys(headers).some((k) => k.toLowerCase() === 'host')) {
      const { hostname, port, secure } = this.opts;
      headers.host = port === (secure ? 443 : 80) ? hostname : `${hostname}:${port}`;
    }
    for (const [k, v] of Object.entries(headers)) {
      if (v === undefined) continue;
      const value = String(v);
      if (/[\r\n]/.test(k) || /[\r\n]/.test(value))
        throw new ProviderError('unknown', `${req.what}: a line break in header ${k}`);
      lines += `${k}: ${value}\r\n`;
    }
    return lines + '\r\n';
  }

  /** Sends a GET; resolves once the answer's head arrives, whatever its status. */
  get(req: RingRequest): Promise<RingResponse> {
    return this.request({ ...req, method: 'GET', body: undefined });
  }

  /** Sends a PUT of `body`; resolves once the answer's head arrives, whatever its status. */
  put(req: RingRequest & { body: Buffer }): Promise<RingResponse> {
    return this.request({ ...req, method: 'PUT' });
  }

  private async request(req: RingRequest): Promise<RingResponse> {
    if (req.signal?.aborted) throw new ProviderError('canceled', 'canceled');
    // An IP literal is judged here, before a slot is taken; names when each connection is made.
    this.opts.guard?.checkHost(this.opts.hostname);
    const lines = this.requestHead(req);
    await this.slot(req.signal);
    const first = this.acquire();
    try {
      return await this.exchange(first.conn, req, lines, first.reused);
    } catch (err) {
      // A kept-alive connection the server closed before it answered: once more on a new one.
      if (first.reused && (err as { beforeAnswer?: boolean }).beforeAnswer) {
        await this.slot(req.signal);
        return this.exchange(this.open(), req, lines, false);
      }
      throw err;
    }
  }

  /** Waits for a free slot while `maxConnections` exchanges are under way (first come, first served). */
  private slot(signal: AbortSignal | undefined): Promise<void> {
    if (this.busy < (this.opts.maxConnections ?? Infinity)) {
      this.busy += 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const go = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve(); // the slot is handed over as it is (busy unchanged)
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(go);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(new ProviderError('canceled', 'canceled'));
      };
      this.waiting.push(go);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** An exchange ended (its answer read, or failed): its slot goes to the next waiting request. */
  private freeSlot(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.busy -= 1;
  }

  private exchange(c: Conn, req: RingRequest, lines: string, reused: boolean): Promise<RingResponse> {
    const lend = (buf: Buffer, end: number, start: number) => this.ringOf(buf).lend(buf, end, start);
    const putBack = (buf: Buffer) => this.putBack(buf);
    const res = new RingResponse({ highWaterMark: 128 * 1024 });

    return new Promise<RingResponse>((resolve, reject) => {
      let phase: 'head' | 'body' | 'done' = 'head';
      /** The start of a head that has not arrived whole yet (a copy: reads go back to the ring). */
      let head: Buffer = Buffer.alloc(0);
      let framing: Framing = { kind: 'none' };
      let keepAlive = true;
      let answered = false;
      let paused = false;
      const chunked = new ChunkedDecoder();
      const signal = req.signal;

      const finish = () => {
        if (phase === 'done') return;
        phase = 'done';
        this.freeSlot();
        signal?.removeEventListener('abort', onAbort);
        res.onRead = undefined;
        res.onAbandon = undefined;
        res.push(null);
        if (keepAlive) this.release(c);
        else this.drop(c);
      };
      const fail = (err: Error) => {
        if (phase === 'done') return;
        phase = 'done';
        this.freeSlot();
        signal?.removeEventListener('abort', onAbort);
        c.onBytes = undefined;
        c.onGone = undefined;
        this.drop(c);
        if (!answered) reject(err);
        else res.destroy(err);
      };
      const onAbort = () => fail(new ProviderError('canceled', 'canceled'));
      signal?.addEventListener('abort', onAbort, { once: true });

      /** Hands body bytes [s, e) of buf to the reader; returns whether the reader wants more. */
      const body = (buf: Buffer, s: number, e: number): boolean => {
        if (framing.kind === 'chunked') {
          const pieces: [number, number][] = [];
          chunked.feed(buf, s, e, (a, b) => pieces.push([a, b]));
          let more = true;
          if (pieces.length === 1) {
            const [a, b] = pieces[0] as [number, number];
            more = res.push(lend(buf, b, a));
          } else {
            for (const [a, b] of pieces) more = res.push(Buffer.from(buf.subarray(a, b))) && more;
            putBack(buf);
          }
          if (chunked.done) finish();
          return more;
        }
        let stop = e;
        if (framing.kind === 'length') {
          stop = Math.min(e, s + framing.left);
          framing.left -= stop - s;
          if (stop < e) keepAlive = false; // bytes beyond the body: never reuse this connection
        }
        const more = stop > s ? res.push(lend(buf, stop, s)) : (putBack(buf), true);
        if (framing.kind === 'length' && framing.left === 0) finish();
        return more;
      };

      /**
       * Parses the head from bytes [from, nread) of buf and the reads before; returns where the
       * body starts in buf, or -1 while the head is incomplete. Interim answers (100 Continue,
       * 103 Early Hints) are skipped: the real answer follows them.
       */
      const onHead = (buf: Buffer, from: number, nread: number): number => {
        let pos = from;
        while (pos < nread) {
          const before = head.length;
          // Searched in place; copied only while the head is incomplete.
          const all = before === 0 ? buf.subarray(pos, nread) : Buffer.concat([head, buf.subarray(pos, nread)]);
          const at = all.indexOf(CRLFCRLF, Math.max(0, before - 3));
          if (at === -1) {
            if (all.length > MAX_HEAD) throw new Error('answer head too large');
            head = before === 0 ? Buffer.from(all) : all;
            return -1;
          }
          const parsed = parseHead(all.toString('latin1', 0, at));
          pos += at + 4 - before;
          head = Buffer.alloc(0);
          if (parsed.status < 200) continue;
          res.statusCode = parsed.status;
          res.statusMessage = parsed.message;
          res.headers = parsed.headers;
          const conn = String(parsed.headers.connection ?? '').toLowerCase();
          keepAlive = !parsed.http10 && !conn.split(',').some((t) => t.trim() === 'close');
          // A refusal may come before the server read the whole body, whose rest would then open
          // the next request on this connection: never reuse it.
          if (req.body && (parsed.status >= 300 || c.socket.writableLength > 0)) keepAlive = false;
          const te = String(parsed.headers['transfer-encoding'] ?? '').toLowerCase();
          const len = parsed.headers['content-length'];
          if (parsed.status === 204 || parsed.status === 304) framing = { kind: 'none' };
          else if (te.includes('chunked')) framing = { kind: 'chunked' };
          else if (len !== undefined) {
            const n = Number(len);
            if (!Number.isSafeInteger(n) || n < 0) throw new Error(`bad content-length ${len}`);
            framing = n === 0 ? { kind: 'none' } : { kind: 'length', left: n };
            c.big = this.bigRing !== undefined && n >= this.bigRing.size;
          } else {
            framing = { kind: 'close' };
            keepAlive = false;
          }
          phase = 'body';
          answered = true;
          resolve(res);
          return pos;
        }
        return -1;
      };

      /** The reads of this exchange; returns whether the socket should go on reading. */
      const onBytes = (buf: Buffer, nread: number): boolean => {
        if (phase === 'head') {
          const start = onHead(buf, 0, nread);
          if (start < 0 || start === nread || framing.kind === 'none') {
            putBack(buf);
            if (start >= 0 && framing.kind === 'none') {
              if (start < nread) keepAlive = false;
              finish();
            }
            return true;
          }
          return body(buf, start, nread);
        }
        return body(buf, 0, nread);
      };
      c.onBytes = (buf, nread) => {
        if (phase === 'done') {
          putBack(buf);
          return true;
        }
        try {
          const more = onBytes(buf, nread);
          // A finished exchange leaves its connection reading (an idle one must see its close).
          paused = !more && phase === 'body';
          return !paused;
        } catch (err) {
          putBack(buf);
          fail(new ProviderError('network', `${req.what}: ${(err as Error).message}`));
          return false;
        }
      };
      c.onGone = (err) => {
        if (phase === 'body' && framing.kind === 'close') {
          finish();
          return;
        }
        if (ProviderError.is(err, 'address_not_allowed')) {
          fail(err);
          return;
        }
        const e = (err as { timeout?: boolean }).timeout
          ? new ProviderError('network', `timeout: ${req.what}`)
          : new ProviderError('network', `${req.what}: ${err.message}`, { cause: err });
        if (!answered && reused && head.length === 0) Object.assign(e, { beforeAnswer: true });
        fail(e);
      };
      res.onRead = () => {
        if (paused && phase === 'body') {
          paused = false;
          c.socket.resume();
        }
      };
      res.onAbandon = () => fail(new ProviderError('canceled', 'body abandoned'));
      c.socket.setTimeout(req.timeoutMs);
      if (!req.body) c.socket.write(lines);
      else {
        // Head and body in one system call.
        c.socket.cork();
        c.socket.write(lines);
        c.socket.write(req.body);
        c.socket.uncork();
      }
    });
  }
}
