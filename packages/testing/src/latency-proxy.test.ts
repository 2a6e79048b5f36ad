import { createHash, randomBytes } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startLatencyProxy, type LatencyProxy } from './latency-proxy.ts';

const MiB = 1024 * 1024;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function listen(onConnection: (s: Socket) => void): Promise<{ server: Server; port: number }> {
  const server = createServer(onConnection);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const addr = server.address();
  return { server, port: typeof addr === 'object' && addr ? addr.port : 0 };
}

async function proxyTo(port: number, rttMs: number): Promise<LatencyProxy> {
  const proxy = await startLatencyProxy({ target: { host: '127.0.0.1', port }, rttMs });
  cleanups.push(() => proxy.stop());
  return proxy;
}

async function dial(port: number): Promise<Socket> {
  const socket = connect({ host: '127.0.0.1', port });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  cleanups.push(() => void socket.destroy());
  return socket;
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** The SHA-256 of the next `bytes` bytes `socket` receives, once they all came. */
function digestOfNext(socket: Socket, bytes: number): Promise<string> {
  const hash = createHash('sha256');
  let got = 0;
  return new Promise((resolve) => {
    const onData = (b: Buffer) => {
      hash.update(b);
      got += b.length;
      if (got < bytes) return;
      socket.off('data', onData);
      resolve(hash.digest('hex'));
    };
    socket.on('data', onData);
  });
}

describe('latency proxy', () => {
  it('adds its round trip to every exchange and carries the bytes unchanged, in order', async () => {
    const { port } = await listen((s) => s.pipe(s)); // echo
    const proxy = await proxyTo(port, 40);
    const socket = await dial(proxy.port);

    const started = performance.now();
    socket.write('ping');
    await new Promise((resolve) => socket.once('data', resolve));
    expect(performance.now() - started).toBeGreaterThanOrEqual(38);

    const payload = randomBytes(3 * MiB);
    const received = digestOfNext(socket, payload.length);
    socket.write(payload);
    expect(await received).toBe(sha256(payload));
    expect(proxy.connections()).toBe(1);
  });

  it('carries 64 MiB each way in a few slabs used again, not memory of its own per read', async () => {
    const { port } = await listen((s) => s.pipe(s)); // echo
    const proxy = await proxyTo(port, 4);
    const socket = await dial(proxy.port);
    const payload = randomBytes(64 * MiB);
    const received = digestOfNext(socket, payload.length);
    for (let off = 0; off < payload.length; off += MiB) {
      if (!socket.write(payload.subarray(off, off + MiB))) {
        await new Promise((resolve) => socket.once('drain', resolve));
      }
    }
    expect(await received).toBe(sha256(payload));
    // 32 slabs of 4 MiB would hold 128 MiB; at most 8 MiB waits per direction, plus the slab
    // being filled and a few written but not yet given back.
    expect(proxy.slabs()).toBeGreaterThan(0);
    expect(proxy.slabs()).toBeLessThanOrEqual(12);
  });

  it('gives back the slabs of connections closed with bytes still on their way', async () => {
    // A server that sends 16 MiB at once; each client takes 2 MB and hangs up.
    const { port } = await listen((s) => {
      s.on('error', () => undefined);
      s.write(Buffer.alloc(16 * MiB, 7));
    });
    const proxy = await proxyTo(port, 20);
    for (let i = 0; i < 20; i++) {
      const socket = await dial(proxy.port);
      await new Promise<void>((resolve) => {
        let got = 0;
        socket.on('data', (b: Buffer) => {
          got += b.length;
          if (got < 2_000_000) return;
          socket.destroy();
          resolve();
        });
      });
      await new Promise((r) => setTimeout(r, 50));
    }
    // Before, every such connection kept two slabs for good (40 here); now they are used again.
    expect(proxy.connections()).toBe(20);
    expect(proxy.slabs()).toBeLessThanOrEqual(12);
  });

  it('holds back a sender whose receiver does not read, like a real link, and delivers everything once it does', async () => {
    let upstream: Socket | undefined;
    const arrived: Buffer[] = [];
    let arrivedBytes = 0;
    const { port } = await listen((s) => {
      upstream = s;
      s.pause(); // a receiver that takes nothing for now
      s.on('data', (b: Buffer) => {
        arrived.push(b);
        arrivedBytes += b.length;
      });
    });
    const proxy = await proxyTo(port, 10);
    const socket = await dial(proxy.port);

    // Write for a second, as fast as the connection takes it (respecting its backpressure); a
    // chunk counts once handed to the socket.
    const chunk = randomBytes(256 * 1024);
    let accepted = 0;
    const until = performance.now() + 1000;
    while (performance.now() < until && accepted < 512 * MiB) {
      const more = socket.write(chunk);
      accepted += chunk.length;
      if (!more) {
        const drained = await Promise.race([
          new Promise<boolean>((resolve) => socket.once('drain', () => resolve(true))),
          new Promise<boolean>((resolve) => setTimeout(() => resolve(false), Math.max(1, until - performance.now()))),
        ]);
        if (!drained) break;
      }
    }
    // Before, the proxy read all of it into its own memory (hundreds of MB in a second); now only
    // its queue, a socket buffer and the kernel's buffers can hold any.
    expect(accepted).toBeLessThan(64 * MiB);
    expect(accepted).toBeGreaterThan(0);

    // The receiver reads again: every byte arrives, in order.
    upstream?.resume();
    const deadline = Date.now() + 20_000;
    while (arrivedBytes < accepted && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(arrivedBytes).toBe(accepted);
    const all = Buffer.concat(arrived);
    for (let off = 0; off < accepted; off += chunk.length) {
      expect(all.subarray(off, off + chunk.length).equals(chunk)).toBe(true);
    }
  });
});
