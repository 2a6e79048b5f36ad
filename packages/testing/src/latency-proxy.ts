import { createServer, connect, type NetConnectOpts, type Server, type Socket } from 'node:net';

export interface LatencyProxy {
  readonly host: string;
  readonly port: number;
  /** Connections accepted so far. */
  readonly connections: () => number;
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

/**
 * Delays every byte crossing a direction by `delay` ms, keeping order, with one timer per direction.
 * Bounded like a real link: when too much is waiting, or the receiving socket does not take more
 * (its write buffer is full), the sending side is paused until that drains. Without the second
 * check a receiver slower than its sender had the proxy buffer the difference without limit (a
 * gigabyte upload grew the proxy's process by 300 MB, whose fresh memory then slowed every byte).
 */
function delayedPipe(from: Socket, to: Socket, delay: number): { pending: () => number } {
  const queue: { due: number; chunk: Buffer }[] = [];
  let queued = 0;
  let timer: NodeJS.Timeout | undefined;
  let ended = false;
  /** The receiver's buffer is full: nothing more is written until it drains. */
  let blocked = false;
  const HIGH = 8 * 1024 * 1024;
  const flush = () => {
    timer = undefined;
    if (blocked) return;
    const now = performance.now();
    while (queue.length > 0 && (queue[0] as { due: number }).due <= now + 0.5) {
      const { chunk } = queue.shift() as { due: number; chunk: Buffer };
      queued -= chunk.length;
      if (to.destroyed) continue;
      if (!to.write(chunk)) {
        blocked = true;
        to.once('drain', () => {
          blocked = false;
          flush();
        });
        break;
      }
    }
    if (blocked) return;
    if (queued < HIGH / 2 && from.isPaused()) from.resume();
    if (queue.length > 0) timer = setTimeout(flush, Math.max(0, (queue[0] as { due: number }).due - performance.now()));
    else if (ended && !to.destroyed) to.end();
  };
  from.on('data', (chunk: Buffer) => {
    queue.push({ due: performance.now() + delay, chunk });
    queued += chunk.length;
    if (queued > HIGH || blocked) from.pause();
    if (!timer && !blocked) timer = setTimeout(flush, delay);
  });
  from.on('end', () => {
    ended = true;
    if (queue.length === 0 && !timer && !blocked && !to.destroyed) to.end();
  });
  // Bytes still queued here or in the receiver's write buffer (none once the receiver is gone).
  return { pending: () => (to.destroyed ? 0 : queue.length + (to.writableLength > 0 ? 1 : 0)) };
}

/**
 * A TCP proxy on 127.0.0.1 that adds a fixed round-trip time to every connection (netem is not
 * available in these kernels). Works for any protocol: HTTP (WebDAV, S3) and SSH alike.
 */
export async function startLatencyProxy(opts: LatencyProxyOptions): Promise<LatencyProxy> {
  const oneWay = (opts.rttMs ?? 20) / 2;
  let count = 0;
  const sockets = new Set<Socket>();
  // Up to 1 MiB waits in each socket's own buffer before the other side is paused (a link's buffer;
  // Node's default of 64 KiB would pause after every full read).
  const highWaterMark = 1024 * 1024;
  const server: Server = createServer({ noDelay: true, highWaterMark }, (client) => {
    count++;
    // (net.connect takes a stream's highWaterMark; Node's types do not list it.)
    const upstream = connect({
      host: opts.target.host,
      port: opts.target.port,
      noDelay: true,
      highWaterMark,
    } as NetConnectOpts);
    sockets.add(client);
    sockets.add(upstream);
    client.setNoDelay(true);
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    // A reset on either side resets the other at once; an orderly close goes through after the
    // bytes still on their way.
    client.on('error', close);
    upstream.on('error', close);
    const up = delayedPipe(client, upstream, oneWay);
    const down = delayedPipe(upstream, client, oneWay);
    const closeAfter = (pipe: { pending: () => number }) => {
      const wait = () => (pipe.pending() > 0 ? setTimeout(wait, oneWay + 1) : setTimeout(close, oneWay + 1000));
      wait();
    };
    client.on('close', () => closeAfter(up));
    upstream.on('close', () => closeAfter(down));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    host: '127.0.0.1',
    port,
    connections: () => count,
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
