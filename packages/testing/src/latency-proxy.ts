import { Socket, createServer, connect, type NetConnectOpts, type Server, type SocketConstructorOpts } from 'node:net';

export interface LatencyProxy {
  readonly host: string;
  readonly port: number;
  /** Connections accepted so far. */
  readonly connections: () => number;
  /** Slabs allocated so far for bytes waiting out their delay (each used again once written). */
  readonly slabs: () => number;
  stop(): Promise<void>;
}

export interface LatencyProxyOptions {
  /** Where connections go. */
  target: { host: string; port: number };
  /** Round-trip time added, in ms: every byte waits half of it in each direction. Default 20. */
  rttMs?: number;
  /** Port to listen on (default: a free one). */
  port?: number;
}

/** Size of each slab waiting bytes are copied into. */
const SLAB = 4 * 1024 * 1024;
/** Largest read from a socket (into the proxy's one read buffer, used again by every read). */
const READ = 1024 * 1024;

/**
 * Where the bytes of all of a proxy's connections wait out their delay: copies in slabs of SLAB
 * bytes, each used again once every byte copied into it was written (a few spare ones are kept by
 * the pool, not by each connection: fresh memory is slow to touch on this VM). Node's own reads
 * give every read (64 KiB at most) a fresh buffer; at hundreds of MB a second those allocations and
 * their collection cost the proxy more CPU than the copying and the system calls together (2.2 s a
 * gigabyte against 0.8 here), CPU taken from the servers and clients measured behind it on a small
 * machine.
 */
class Slabs {
  private readonly spare: Buffer[] = [];
  private slab: Buffer | undefined;
  private used = 0;
  /** Per slab: copies not yet written, plus one while it is the slab being filled. */
  private readonly holds = new Map<Buffer, number>();
  /** Slabs allocated so far. */
  allocated = 0;

  /** A copy of `bytes`, and what to call once that copy was written. */
  copy(bytes: Uint8Array): { chunk: Buffer; written: () => void } {
    if (bytes.length > SLAB) return { chunk: Buffer.from(bytes), written: () => undefined };
    if (!this.slab || this.used + bytes.length > SLAB) {
      if (this.slab) this.release(this.slab);
      this.slab = this.spare.pop();
      if (!this.slab) {
        this.slab = Buffer.allocUnsafeSlow(SLAB);
        this.allocated++;
      }
      this.used = 0;
      this.holds.set(this.slab, 1);
    }
    const slab = this.slab;
    const chunk = slab.subarray(this.used, this.used + bytes.length);
    chunk.set(bytes);
    this.used += bytes.length;
    this.holds.set(slab, (this.holds.get(slab) ?? 0) + 1);
    return { chunk, written: () => this.release(slab) };
  }

  private release(slab: Buffer): void {
    const left = (this.holds.get(slab) ?? 1) - 1;
    if (left > 0) {
      this.holds.set(slab, left);
      return;
    }
    this.holds.delete(slab);
    if (this.spare.length < 8) this.spare.push(slab);
  }
}

/**
 * Delays every byte crossing one direction (read from `from`, written to `to`) by `delay` ms,
 * keeping order, with one timer. Bounded like a real link: when too much is waiting, or the
 * receiving socket does not take more (its write buffer is full), the sending side is paused
 * until that drains. Without the second check a receiver slower than its sender had the proxy
 * buffer the difference without limit (a gigabyte upload grew the proxy's process by 300 MB, whose
 * fresh memory then slowed every byte).
 */
class DelayedPipe {
  from: Socket | undefined;
  to: Socket | undefined;
  private readonly queue: { due: number; chunk: Buffer; written: () => void }[] = [];
  private queued = 0;
  private timer: NodeJS.Timeout | undefined;
  private ended = false;
  /** The receiver's buffer is full: nothing more is written until it drains. */
  private blocked = false;
  private readonly slabs: Slabs;
  private static readonly HIGH = 8 * 1024 * 1024;
  private readonly delay: number;

  constructor(delay: number, slabs: Slabs) {
    this.delay = delay;
    this.slabs = slabs;
  }

  /** Bytes read from `from` (copied: the read buffer is used again). False: pause the reading. */
  take(bytes: Uint8Array): boolean {
    const { chunk, written } = this.slabs.copy(bytes);
    this.queue.push({ due: performance.now() + this.delay, chunk, written });
    this.queued += chunk.length;
    if (!this.timer && !this.blocked) this.timer = setTimeout(this.flush, this.delay);
    return this.queued <= DelayedPipe.HIGH && !this.blocked;
  }

  /** `from` ended: `to` ends once the bytes still waiting were written. */
  end(): void {
    this.ended = true;
    if (this.queue.length === 0 && !this.timer && !this.blocked && this.to && !this.to.destroyed) this.to.end();
  }

  /**
   * The connection closed: bytes still waiting are dropped and their slabs given back (a slab is
   * used again only once every copy in it is written or dropped; before, each connection closed
   * with bytes on their way kept its slabs for good, 8 MiB a connection, 420 MB of the benchmark's
   * process late in a full run).
   */
  discard(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const { written } of this.queue.splice(0)) written();
    this.queued = 0;
  }

  /** Bytes still queued here or in the receiver's write buffer (none once the receiver is gone). */
  pending(): number {
    const to = this.to;
    return !to || to.destroyed ? 0 : this.queue.length + (to.writableLength > 0 ? 1 : 0);
  }

  private readonly flush = (): void => {
    this.timer = undefined;
    const { from, to, queue } = this;
    if (this.blocked || !from || !to) return;
    const now = performance.now();
    // Everything due goes in one system call.
    to.cork();
    while (queue.length > 0 && (queue[0] as { due: number }).due <= now + 0.5) {
      const { chunk, written } = queue.shift() as { chunk: Buffer; written: () => void };
      this.queued -= chunk.length;
      if (to.destroyed) {
        written();
        continue;
      }
      if (!to.write(chunk, written)) {
        this.blocked = true;
        to.once('drain', () => {
          this.blocked = false;
          this.flush();
        });
        break;
      }
    }
    to.uncork();
    if (this.blocked) return;
    if (this.queued < DelayedPipe.HIGH / 2 && from.isPaused()) from.resume();
    if (queue.length > 0) {
      this.timer = setTimeout(this.flush, Math.max(0, (queue[0] as { due: number }).due - performance.now()));
    } else if (this.ended && !to.destroyed) to.end();
  };
}

/**
 * What a socket takes to read into `buffer` (Node's `onread`), its bytes going to `pipe`. Sockets
 * can share the buffer: each read is copied out in its callback, before the next read of any
 * socket. A full pipe pauses the socket (a false answer alone stops the reads without marking the
 * socket paused, so nothing would resume it).
 */
function readsInto(
  pipe: DelayedPipe,
  buffer: Buffer,
): {
  onread: { buffer: Buffer; callback: (n: number, buf: Uint8Array) => boolean };
} {
  const callback = (n: number, buf: Uint8Array) => {
    if (pipe.take(buf.subarray(0, n))) return true;
    pipe.from?.pause();
    return false;
  };
  return { onread: { buffer, callback } };
}

/**
 * A TCP proxy on 127.0.0.1 that adds a fixed round-trip time to every connection (netem is not
 * available in these kernels). Works for any protocol: HTTP (WebDAV, S3) and SSH alike.
 */
export async function startLatencyProxy(opts: LatencyProxyOptions): Promise<LatencyProxy> {
  const oneWay = (opts.rttMs ?? 20) / 2;
  let count = 0;
  const slabs = new Slabs();
  const readBuffer = Buffer.allocUnsafeSlow(READ);
  const sockets = new Set<Socket>();
  // Up to 1 MiB waits in each socket's own buffer before the other side is paused (a link's buffer;
  // Node's default of 64 KiB would pause after every full read).
  const highWaterMark = 1024 * 1024;
  /** Joins an accepted connection (a Socket, or the raw handle to make one of) to the target. */
  const join = (accepted: Socket | object) => {
    count++;
    const up = new DelayedPipe(oneWay, slabs);
    const down = new DelayedPipe(oneWay, slabs);
    let client: Socket;
    if (accepted instanceof Socket) {
      client = accepted;
      client.on('data', (b: Buffer) => {
        if (!up.take(b)) client.pause();
      });
    } else {
      client = new Socket({ handle: accepted, highWaterMark, ...readsInto(up, readBuffer) } as SocketConstructorOpts);
    }
    const upstream = connect({
      host: opts.target.host,
      port: opts.target.port,
      noDelay: true,
      highWaterMark,
      ...readsInto(down, readBuffer),
    } as NetConnectOpts);
    client.setNoDelay(true);
    up.from = client;
    up.to = upstream;
    down.from = upstream;
    down.to = client;
    sockets.add(client);
    sockets.add(upstream);
    const close = () => {
      client.destroy();
      upstream.destroy();
      up.discard();
      down.discard();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    // A reset on either side resets the other at once; an orderly close goes through after the
    // bytes still on their way.
    client.on('error', close);
    upstream.on('error', close);
    client.on('end', () => up.end());
    upstream.on('end', () => down.end());
    const closeAfter = (pipe: DelayedPipe) => {
      const wait = () => (pipe.pending() > 0 ? setTimeout(wait, oneWay + 1) : setTimeout(close, oneWay + 1000));
      wait();
    };
    client.on('close', () => closeAfter(up));
    upstream.on('close', () => closeAfter(down));
    // Flowing, so that 'end' comes (the bytes themselves go to the read callbacks).
    client.resume();
    upstream.resume();
  };
  const server: Server = createServer({ noDelay: true, highWaterMark, pauseOnConnect: true }, join);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  // Accepted connections read into the proxy's read buffer too (see Slabs). Node offers that only
  // to sockets it is given a handle for, so the server's accept callback (an internal of node:net)
  // makes them; without it, connections come through 'connection' and read as usual.
  const listening = (server as unknown as { _handle?: { onconnection?: unknown } })._handle;
  if (listening && typeof listening.onconnection === 'function') {
    listening.onconnection = (err: number, handle: object | undefined) => {
      if (!err && handle) join(handle);
    };
  }
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    host: '127.0.0.1',
    port,
    connections: () => count,
    slabs: () => slabs.allocated,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

// `node packages/testing/src/latency-proxy.ts <listen-port> <target-host:port> [rtt-ms]` runs it alone.
if (import.meta.url === `file://${process.argv[1]}`) {
  const [listen, target, rtt] = process.argv.slice(2);
  const [host, port] = (target ?? '').split(':');
  const p = await startLatencyProxy({
    port: Number(listen),
    target: { host: host ?? '127.0.0.1', port: Number(port) },
    rttMs: rtt === undefined ? 20 : Number(rtt),
  });
  console.log(`latency proxy on 127.0.0.1:${p.port} -> ${target}, +${rtt ?? 20} ms round trip`);
}
