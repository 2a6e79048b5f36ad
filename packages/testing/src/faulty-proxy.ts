import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface FaultyProxyStats {
  requests: number;
  /** Answers the proxy made up, by status. */
  errors: Record<number, number>;
  /** Connections it reset (before answering or in the middle of an answer). */
  resets: number;
  /** Requests passed to the server, in the order they were answered: "METHOD path status". */
  passed: string[];
}

export interface FaultyProxy {
  readonly host: string;
  readonly port: number;
  readonly stats: FaultyProxyStats;
  /** Turns faults on or off (on at start). */
  setEnabled(on: boolean): void;
  stop(): Promise<void>;
}

export interface FaultyProxyOptions {
  target: { host: string; port: number };
  /** Share of requests answered 500, 503 or 429 (the last two with Retry-After). Default 0.10. */
  errorRate?: number;
  /** Share of requests whose connection is reset. Default 0.01. */
  resetRate?: number;
  /** Retry-After sent with 429 and 503, in seconds. Default 1. */
  retryAfterSeconds?: number;
  /** Seed of the fault sequence, for repeatable runs. */
  seed?: number;
  port?: number;
}

/** mulberry32: a small seeded PRNG (the same numbers for the same seed, for repeatable tests). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * An HTTP reverse proxy on 127.0.0.1 that misbehaves like a struggling service: a share of
 * requests is answered with 500, 503 or 429 (with Retry-After) without reaching the server, and a
 * share of connections is reset, either before any answer or halfway through the answer's body.
 * Everything else is passed through unchanged (Host header included, so signed requests and
 * WebDAV Destination headers stay valid).
 */
export async function startFaultyProxy(opts: FaultyProxyOptions): Promise<FaultyProxy> {
  const errorRate = opts.errorRate ?? 0.1;
  const resetRate = opts.resetRate ?? 0.01;
  const retryAfter = String(opts.retryAfterSeconds ?? 1);
  const random = seededRandom(opts.seed ?? 1);
  const stats: FaultyProxyStats = { requests: 0, errors: {}, resets: 0, passed: [] };
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const sockets = new Set<Socket>();
  let enabled = true;

  const made = (status: number) => {
    stats.errors[status] = (stats.errors[status] ?? 0) + 1;
  };

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    stats.requests++;
    const roll = enabled ? random() : 1;
    if (roll < resetRate / 2) {
      stats.resets++;
      req.socket.destroy();
      return;
    }
    const resetMidway = roll < resetRate;
    if (!resetMidway && roll < resetRate + errorRate) {
      const pick = random();
      const status = pick < 1 / 3 ? 500 : pick < 2 / 3 ? 503 : 429;
      made(status);
      // Read the request body first, as a real server would, then refuse.
      req.resume();
      req.on('end', () => {
        const headers: Record<string, string> = { 'content-type': 'text/plain', connection: 'keep-alive' };
        if (status !== 500) headers['retry-after'] = retryAfter;
        res.writeHead(status, headers);
        res.end(`injected ${status}\n`);
      });
      return;
    }
    const upstream = request(
      {
        host: opts.target.host,
        port: opts.target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
        agent,
      },
      (up) => {
        stats.passed.push(`${req.method} ${req.url} ${up.statusCode}`);
        res.writeHead(up.statusCode ?? 502, up.rawHeaders as unknown as Record<string, string>);
        if (resetMidway) {
          stats.resets++;
          let sent = 0;
          up.on('data', (c: Buffer) => {
            sent += c.length;
            res.write(c.subarray(0, Math.ceil(c.length / 2)));
            if (sent > 0) {
              up.destroy();
              req.socket.destroy();
            }
          });
          up.on('end', () => req.socket.destroy());
          return;
        }
        up.pipe(res);
        up.on('error', () => req.socket.destroy());
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else req.socket.destroy();
    });
    // A client gone before its request was all sent takes the server's request with it, as it
    // would without the proxy (the server then drops what it had received).
    req.on('close', () => {
      if (!req.complete) upstream.destroy();
    });
    req.pipe(upstream);
  };

  const server = createServer({ keepAlive: true }, handler);
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
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
    stats,
    setEnabled(on) {
      enabled = on;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}
