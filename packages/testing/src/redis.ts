import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, requireProgram, startDaemon, waitFor } from './process.ts';

export interface RedisServer {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d) => {
      socket.destroy();
      resolve(d.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
  });
}

/** Starts a throwaway Redis on 127.0.0.1 (Debian's `redis-server`), no persistence. */
export async function startRedis(): Promise<RedisServer> {
  const bin = await requireProgram('redis-server', 'redis-server');
  const dir = mkdtempSync(join(tmpdir(), 'skyferry-redis-'));
  const port = await freePort();
  const daemon = startDaemon(bin, [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
    '--maxmemory-policy',
    'noeviction',
  ]);
  await waitFor(async () => {
    if (daemon.child.exitCode !== null) throw new Error(`redis exited: ${daemon.output()}`);
    return ping(port);
  }, 'Redis to answer PING');
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async stop() {
      await daemon.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
