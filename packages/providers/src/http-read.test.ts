import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { selfSignedCert } from '@skyferry/testing';
import { ProviderError } from './api/errors.ts';
import { RingHttp, type RingResponse } from './http-read.ts';
import { BufferRing, recycle } from './recycle.ts';

// RingHttp against real servers on loopback: node:http and node:https for well-formed answers,
// raw TCP servers for the framings and failures node:http will not produce on demand.

const data = randomBytes(3 * 1024 * 1024 + 777);
const closers: (() => void)[] = [];
afterEach(() => {
  for (const c of closers.splice(0)) c();
});

async function listen(server: Server | ReturnType<typeof createNetServer>): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  closers.push(() => {
    (server as Server).closeAllConnections?.();
    server.close();
  });
  return (server.address() as { port: number }).port;
}

/** Serves `data` (or a slice of it with ?bytes=N) in 100 KiB writes, Content-Length unless ?chunked. */
function dataServer(onRequest?: (req: IncomingMessage) => void): Server {
  return createHttpServer((req: IncomingMessage, res: ServerResponse) => {
    onRequest?.(req);
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/missing') {
      res.writeHead(404, { 'content-type': 'application/xml' });
      res.end('<Error><Code>NoSuchKey</Code></Error>');
      return;
    }
    const body = data.subarray(0, Number(url.searchParams.get('bytes') ?? data.length));
    res.writeHead(200, url.searchParams.has('chunked') ? {} : { 'content-length': body.length, etag: '"abc"' });
    let at = 0;
    const more = () => {
      while (at < body.length) {
        const piece = body.subarray(at, at + 100 * 1024);
        at += piece.length;
        if (!res.write(piece)) return void res.once('drain', more);
      }
      res.end();
    };
    more();
  });
}

/** A raw server: `answer` gets each connection's request heads as they come and writes what it likes. */
function rawServer(answer: (socket: Socket, request: string, n: number) => void): ReturnType<typeof createNetServer> {
  return createNetServer((socket) => {
    let pending = '';
    let n = 0;
    socket.on('data', (d) => {
      pending += d.toString('latin1');
      let end: number;
      while ((end = pending.indexOf('\r\n\r\n')) !== -1) {
        const head = pending.slice(0, end);
        pending = pending.slice(end + 4);
        answer(socket, head, n++);
      }
    });
    socket.on('error', () => undefined);
  });
}

async function readAll(res: RingResponse, give = true): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of res as AsyncIterable<Buffer>) {
    parts.push(Buffer.from(chunk));
    if (give) recycle(chunk);
  }
  return Buffer.concat(parts);
}

function client(port: number, extra: Partial<ConstructorParameters<typeof RingHttp>[0]> = {}): RingHttp {
  const c = new RingHttp({ secure: false, hostname: '127.0.0.1', port, ...extra });
  closers.push(() => c.close());
  return c;
}

const get = (c: RingHttp, path: string, more: { signal?: AbortSignal; timeoutMs?: number } = {}) =>
  c.get({ path, headers: {}, timeoutMs: more.timeoutMs ?? 10_000, what: `GET ${path}`, signal: more.signal });

describe('RingHttp', () => {
  it('reads a Content-Length body byte for byte into a few reused buffers', async () => {
    const port = await listen(dataServer());
    const ring = new BufferRing(64 * 1024, 64);
    const c = client(port, { ring });
    const res = await get(c, '/object');
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toBe('"abc"');
    expect(Number(res.headers['content-length'])).toBe(data.length);
    expect((await readAll(res)).equals(data)).toBe(true);
    // 3 MiB in 64 KiB reads is about 50 reads; given back, a handful of buffers served them all.
    expect(ring.allocated).toBeLessThan(12);
  });

  it('reads a body at least as long as the big buffers into them, and shorter or unsized ones into the small', async () => {
    const port = await listen(dataServer());
    const ring = new BufferRing(64 * 1024, 64);
    const bigRing = new BufferRing(1024 * 1024, 8);
    const c = client(port, { ring, bigRing });
    const sizes = async (path: string) => {
      const res = await get(c, path);
      const seen = new Set<number>();
      const parts: Buffer[] = [];
      for await (const chunk of res as AsyncIterable<Buffer>) {
        seen.add(chunk.buffer.byteLength);
        parts.push(Buffer.from(chunk));
        recycle(chunk);
      }
      return { seen, body: Buffer.concat(parts) };
    };
    const large = await sizes('/object');
    expect(large.body.equals(data)).toBe(true);
    // The read that held the head was a small buffer; every one after it a big one.
    expect([...large.seen].sort()).toEqual([64 * 1024, 1024 * 1024].sort());
    const small = await sizes('/object?bytes=500000');
    expect(small.body.equals(data.subarray(0, 500_000))).toBe(true);
    expect([...small.seen]).toEqual([64 * 1024]);
    const chunked = await sizes('/object?chunked');
    expect(chunked.body.equals(data)).toBe(true);
    // (a read holding a chunk boundary hands out copies of its pieces)
    expect([...chunked.seen].every((n) => n <= 64 * 1024)).toBe(true);
    // Each buffer went back to its own ring: a few of each served everything.
    expect(bigRing.allocated).toBeLessThanOrEqual(4);
    expect(ring.allocated).toBeLessThan(12);
    expect(() => client(port, { ring, bigRing: new BufferRing(64 * 1024) })).toThrow(/differ/);
  });

  it('keeps to maxConnections exchanges at once: the rest wait their turn, and a canceled wait leaves', async () => {
    let open = 0;
    let most = 0;
    const port = await listen(
      createHttpServer((req, res) => {
        open += 1;
        most = Math.max(most, open);
        // The answer's head at once, its body's end later: the exchange holds its slot till then.
        res.writeHead(200, { 'content-length': Buffer.byteLength(req.url ?? '') });
        res.write((req.url ?? '').slice(0, 1));
        setTimeout(() => {
          open -= 1;
          res.end((req.url ?? '').slice(1));
        }, 60);
      }),
    );
    const c = client(port, { maxConnections: 3 });
    const bodies = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => (await readAll(await get(c, `/n${i}`))).toString()),
    );
    expect(bodies).toEqual(Array.from({ length: 10 }, (_, i) => `/n${i}`));
    expect(most).toBe(3);
    expect(c.opened).toBeLessThanOrEqual(3);
    // A request waiting for a slot is canceled without taking one from the next.
    const held = await Promise.all([get(c, '/a'), get(c, '/b'), get(c, '/c')]);
    const ac = new AbortController();
    const waiting = get(c, '/never', { signal: ac.signal });
    ac.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'canceled' });
    for (const r of held) await readAll(r);
    expect((await readAll(await get(c, '/after'))).toString()).toBe('/after');
  });

  it('never reads into a chunk the reader still holds', async () => {
    const port = await listen(dataServer());
    const ring = new BufferRing(64 * 1024, 64);
    const c = client(port, { ring });
    const res = await get(c, '/object');
    // Keep every chunk as it is (no copies, none given back) until the end, then compare.
    const held: Buffer[] = [];
    for await (const chunk of res as AsyncIterable<Buffer>) held.push(chunk);
    expect(Buffer.concat(held).equals(data)).toBe(true);
    expect(ring.allocated).toBeGreaterThanOrEqual(held.length);
  });

  it('keeps the connection alive between requests and reads chunked bodies', async () => {
    const port = await listen(dataServer());
    const c = client(port);
    for (const path of ['/a?bytes=1000', '/b?chunked', '/c?bytes=0', '/d?bytes=70000&chunked']) {
      const res = await get(c, path);
      const n = Number(new URL(path, 'http://x').searchParams.get('bytes') ?? data.length);
      expect((await readAll(res)).equals(data.subarray(0, n)), path).toBe(true);
    }
    expect(c.opened).toBe(1);
  });

  it('sends a PUT of a body in memory with its head, byte for byte, and keeps the connection for the next request', async () => {
    const received: { method: string; length: string | undefined; body: Buffer }[] = [];
    const port = await listen(
      createHttpServer((req, res) => {
        const parts: Buffer[] = [];
        req.on('data', (d: Buffer) => parts.push(d));
        req.on('end', () => {
          received.push({
            method: req.method ?? '',
            length: req.headers['content-length'],
            body: Buffer.concat(parts),
          });
          res.writeHead(200, { etag: '"put-etag"', 'content-length': 0 });
          res.end();
        });
      }),
    );
    const c = client(port);
    const body = data.subarray(0, 70_001);
    // A stale Content-Length from the caller is replaced by the body's own.
    const res = await c.put({
      path: '/obj?partNumber=1',
      body,
      headers: { 'Content-Length': 5 },
      timeoutMs: 10_000,
      what: 'PUT',
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toBe('"put-etag"');
    expect((await readAll(res)).length).toBe(0);
    const empty = await c.put({ path: '/empty', body: Buffer.alloc(0), headers: {}, timeoutMs: 10_000, what: 'PUT' });
    await readAll(empty);
    expect(received.map((r) => [r.method, r.length, r.body.length])).toEqual([
      ['PUT', '70001', 70_001],
      ['PUT', '0', 0],
    ]);
    expect(received[0]?.body.equals(body)).toBe(true);
    expect(c.opened).toBe(1);
  });

  it('does not reuse a connection whose PUT was refused before its body was read', async () => {
    // The server answers 403 as soon as the head arrives, reading none of the body.
    const port = await listen(
      rawServer((s) => {
        s.write('HTTP/1.1 403 Forbidden\r\ncontent-length: 9\r\n\r\nforbidden');
      }),
    );
    const c = client(port);
    const res = await c.put({ path: '/obj', body: data, headers: {}, timeoutMs: 10_000, what: 'PUT' });
    expect(res.statusCode).toBe(403);
    expect((await readAll(res)).toString()).toBe('forbidden');
    // The rest of that body is still on its way: the next request goes on a new connection.
    const again = await c.put({ path: '/obj', body: Buffer.from('x'), headers: {}, timeoutMs: 10_000, what: 'PUT' });
    expect(again.statusCode).toBe(403);
    await readAll(again);
    expect(c.opened).toBe(2);
  });

  it('answers an error status with its body', async () => {
    const port = await listen(dataServer());
    const res = await get(client(port), '/missing');
    expect(res.statusCode).toBe(404);
    expect((await readAll(res)).toString()).toContain('NoSuchKey');
  });

  it('skips a 100 Continue, reads a close-delimited body, and does not reuse that connection', async () => {
    const port = await listen(
      rawServer((s) => {
        s.write('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nx-a: 1\r\nx-a: 2\r\n\r\nhello ');
        setTimeout(() => s.end('world'), 20);
      }),
    );
    const c = client(port);
    for (let i = 0; i < 2; i++) {
      const res = await get(c, '/');
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-a']).toBe('1, 2');
      expect((await readAll(res)).toString()).toBe('hello world');
    }
    expect(c.opened).toBe(2);
  });

  it('reads a head that arrives in several pieces, split inside its end mark', async () => {
    const port = await listen(
      rawServer((s) => {
        s.write('HTTP/1.1 200 OK\r\ncontent-len');
        setTimeout(() => s.write('gth: 5\r\n\r'), 20);
        setTimeout(() => s.write('\nhello'), 40);
      }),
    );
    const c = client(port);
    const res = await get(c, '/');
    expect(res.headers['content-length']).toBe('5');
    expect((await readAll(res)).toString()).toBe('hello');
  });

  it('tries again on a new connection when a kept-alive one closes before answering', async () => {
    let connections = 0;
    const port = await listen(
      rawServer((s, _req, n) => {
        if (n === 0) {
          s.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
          return;
        }
        s.destroy(); // the second request on a connection: closed unanswered
      }),
    );
    const c = client(port);
    const counting = (await get(c, '/')).on('data', () => connections++);
    expect((await readAll(counting)).toString()).toBe('ok');
    expect((await readAll(await get(c, '/'))).toString()).toBe('ok');
    expect(c.opened).toBe(2);
    expect(connections).toBe(1);
  });

  it('fails a body cut short, a stalled server and a canceled request, each with its code', async () => {
    const port = await listen(
      rawServer((s, req) => {
        if (req.startsWith('GET /short')) s.end('HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\n' + 'x'.repeat(400));
        else s.write('HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\n' + 'y'.repeat(10)); // then silence
      }),
    );
    const c = client(port);
    const short = await get(c, '/short');
    await expect(readAll(short)).rejects.toMatchObject({ code: 'network' });

    const stalled = await get(c, '/stall', { timeoutMs: 200 });
    await expect(readAll(stalled)).rejects.toMatchObject({
      code: 'network',
      message: expect.stringContaining('timeout'),
    });

    const ac = new AbortController();
    const canceled = await get(c, '/stall', { signal: ac.signal });
    setTimeout(() => ac.abort(), 30);
    await expect(readAll(canceled)).rejects.toMatchObject({ code: 'canceled' });
    const before = new AbortController();
    before.abort();
    await expect(get(c, '/stall', { signal: before.signal })).rejects.toBeInstanceOf(ProviderError);
  });

  it('refuses garbage instead of an answer, and a refused connection, as network errors', async () => {
    const port = await listen(rawServer((s) => s.end('SSH-2.0-OpenSSH\r\n\r\n')));
    await expect(get(client(port), '/')).rejects.toMatchObject({ code: 'network' });
    const closed = createNetServer();
    const freePort = await listen(closed);
    closed.close();
    await expect(get(client(freePort), '/')).rejects.toMatchObject({ code: 'network' });
  });

  describe('over TLS', () => {
    const dir = mkdtempSync(join(tmpdir(), 'skyferry-ring-tls-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('reads a body byte for byte from an https server it trusts, and refuses one it does not', async () => {
      const { pem: cert, keyPath } = await selfSignedCert(dir);
      const server = createHttpsServer({ key: readFileSync(keyPath), cert }, (req, res) => {
        res.writeHead(200, { 'content-length': data.length });
        res.end(data);
      });
      const port = await listen(server as unknown as Server);
      const ring = new BufferRing(64 * 1024, 64);
      const trusted = client(port, { secure: true, tls: { ca: cert }, ring });
      expect((await readAll(await get(trusted, '/'))).equals(data)).toBe(true);
      expect((await readAll(await get(trusted, '/'))).equals(data)).toBe(true);
      expect(trusted.opened).toBe(1);
      expect(ring.allocated).toBeLessThan(12);
      await expect(get(client(port, { secure: true }), '/')).rejects.toMatchObject({ code: 'network' });
    });
  });
});
