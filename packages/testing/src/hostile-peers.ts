import { randomBytes } from 'node:crypto';
import { connect, createServer, type Socket } from 'node:net';

/**
 * How a hostile peer treats connections:
 * - `pass`: forwards to the real server behind it (so a cloud can be connected first);
 * - `tarpit`: accepts and stays silent, reading and dropping whatever comes;
 * - `close-mid-handshake`: lets the start of the server's first answer through (half of it: an
 *   SSH banner, an FTP greeting, an HTTP head cut short), then closes; without a server behind
 *   it, sends `greeting` and closes;
 * - `garbage`: answers every connection and every request with random bytes, and stays open;
 * - `half-open`: forwards until `halfOpenAfter` bytes have passed (both ways), then stops reading
 *   and sending: the other side's writes are no longer acknowledged once the buffers fill, and
 *   nothing more arrives, while the connection stays open (a peer gone mid-transfer).
 */
export type HostileMode = 'pass' | 'tarpit' | 'close-mid-handshake' | 'garbage' | 'half-open';

export const HOSTILE_MODES: readonly Exclude<HostileMode, 'pass'>[] = [
  'tarpit',
  'close-mid-handshake',
  'garbage',
  'half-open',
];

export interface HostilePeerOptions {
  mode: HostileMode;
  /** The real server behind the peer (needed for `pass` and `half-open`). */
  target?: { host: string; port: number };
  /** `close-mid-handshake` without a target: what is sent before closing. */
  greeting?: string | Buffer;
  /** `half-open`: bytes passed (both ways, per connection, from the switch on) before it stops. Default 64 KiB. */
  halfOpenAfter?: number;
}

export interface HostilePeer {
  readonly host: string;
  readonly port: number;
  readonly mode: HostileMode;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Switches the behaviour for new connections and for those already open. */
  setMode(mode: HostileMode): void;
  stop(): Promise<void>;
}

interface Conn {
  client: Socket;
  upstream: Socket | undefined;
  /** Bytes passed since the mode became half-open. */
  passed: number;
  frozen: boolean;
  /** close-mid-handshake: the server's first answer was cut and the connection closed. */
  cut: boolean;
}

const quiet = (): void => undefined;

/** 16 KiB of random bytes, with line breaks now and then (line-based protocols read lines of junk). */
function garbage(): Buffer {
  const b = randomBytes(16 * 1024);
  for (let i = 97; i < b.length; i += 211) b[i] = 0x0a;
  return b;
}

/**
 * A TCP peer on 127.0.0.1 that misbehaves the ways a hostile or broken server does (see
 * HostileMode), optionally in front of a real server so that a cloud can be connected through it
 * before it turns. Used to show that no such peer can take a Skyferry process down.
 */
export async function startHostilePeer(opts: HostilePeerOptions): Promise<HostilePeer> {
  let mode = opts.mode;
  const limit = opts.halfOpenAfter ?? 64 * 1024;
  const conns = new Set<Conn>();
  let accepted = 0;

  const freeze = (c: Conn) => {
    c.frozen = true;
    c.client.pause();
    c.upstream?.pause();
  };
  const destroy = (c: Conn) => {
    c.client.destroy();
    c.upstream?.destroy();
  };
  /** Counts bytes passing in half-open mode; false (and frozen) once the limit is reached. */
  const mayPass = (c: Conn, chunk: Buffer): Buffer | undefined => {
    if (mode !== 'half-open') return chunk;
    if (c.frozen) return undefined;
    const room = limit - c.passed;
    const part = chunk.length <= room ? chunk : chunk.subarray(0, Math.max(0, room));
    c.passed += part.length;
    if (c.passed >= limit) freeze(c);
    return part.length > 0 ? part : undefined;
  };

  /** Sends `last` and closes cleanly (FIN, no reset): what comes after is read and dropped. */
  const closeGracefully = (c: Conn, last: Buffer) => {
    c.cut = true;
    c.client.end(last);
    setTimeout(() => c.client.destroy(), 2000).unref();
  };

  const openUpstream = (c: Conn) => {
    if (!opts.target || c.upstream) return;
    const up = connect({ host: opts.target.host, port: opts.target.port });
    c.upstream = up;
    up.on('error', quiet);
    up.on('close', () => {
      if (mode === 'pass' || (mode === 'half-open' && !c.frozen)) c.client.destroy();
    });
    up.on('data', (chunk: Buffer) => {
      if (mode === 'pass') c.client.write(chunk);
      else if (mode === 'half-open') {
        const part = mayPass(c, chunk);
        if (part) c.client.write(part);
      } else if (mode === 'close-mid-handshake' && !c.cut) {
        c.cut = true;
        up.destroy();
        closeGracefully(c, chunk.subarray(0, Math.max(1, Math.floor(chunk.length / 2))));
      }
    });
  };

  const server = createServer((client) => {
    accepted += 1;
    const c: Conn = { client, upstream: undefined, passed: 0, frozen: false, cut: false };
    conns.add(c);
    client.on('error', quiet);
    client.on('close', () => {
      conns.delete(c);
      c.upstream?.destroy();
    });
    client.on('data', (chunk: Buffer) => {
      switch (mode) {
        case 'pass':
          c.upstream?.write(chunk);
          break;
        case 'half-open': {
          const part = mayPass(c, chunk);
          if (part) c.upstream?.write(part);
          break;
        }
        case 'garbage':
          client.write(garbage());
          break;
        case 'close-mid-handshake':
          if (!c.cut) c.upstream?.write(chunk);
          break;
        case 'tarpit':
          break;
      }
    });
    switch (mode) {
      case 'pass':
      case 'half-open':
        openUpstream(c);
        break;
      case 'close-mid-handshake':
        if (opts.target) openUpstream(c);
        else closeGracefully(c, Buffer.from(opts.greeting ?? ''));
        break;
      case 'garbage':
        client.write(garbage());
        break;
      case 'tarpit':
        break;
    }
  });
  server.on('error', quiet);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;

  return {
    host: '127.0.0.1',
    port,
    get mode() {
      return mode;
    },
    get accepted() {
      return accepted;
    },
    setMode(next) {
      mode = next;
      for (const c of conns) {
        if (next === 'close-mid-handshake') destroy(c);
        else if (next === 'garbage') c.client.write(garbage());
        else if (next === 'half-open') c.passed = 0;
        // A connection that was frozen or cut stays so; tarpit simply stops forwarding.
      }
    },
    async stop() {
      for (const c of conns) destroy(c);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
