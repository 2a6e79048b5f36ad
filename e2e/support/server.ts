import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export interface RunningSkyferry {
  url: string;
  dataDir: string;
  child: ChildProcess;
  logs(): string;
  stop(): Promise<void>;
}

const MAIN = resolve(import.meta.dirname, '../../apps/server/src/main.ts');

/**
 * Starts the real Skyferry server (embedded defaults) on a free port (or env.PORT) with its own data
 * folder, or `dataDir` to start it again over the data of an earlier one (kept when it stops).
 */
export async function startSkyferry(env: Record<string, string> = {}, dataDirOf?: string): Promise<RunningSkyferry> {
  const dataDir = dataDirOf ?? mkdtempSync(join(tmpdir(), 'skyferry-e2e-'));
  let logs = '';
  const child = fork(MAIN, [], {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      SKYFERRY_DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      // The journeys' protocol servers listen on loopback, which the outbound guard refuses by default.
      SKYFERRY_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8,::1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  child.stdout?.on('data', (c: Buffer) => (logs += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (logs += c.toString()));
  const url = await new Promise<string>((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${logs}`)), 30_000);
    child.on('message', (msg: { type?: string; url?: string }) => {
      if (msg.type === 'listening' && msg.url) {
        clearTimeout(timer);
        resolvePromise(msg.url);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${logs}`));
    });
  });
  return {
    url,
    dataDir,
    child,
    logs: () => logs,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      if (!dataDirOf) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A new visitor of the server, with a cloud of the given kind connected as `alias` through the API
 * (visitors get no local folders: a loopback WebDAV server serves their test files). Returns the
 * visitor's token, which a page uses as its `skyferry.temp_token`.
 */
export async function visitorWithCloud(
  server: RunningSkyferry,
  alias: string,
  cloud: { cloud_name: string; credentials: Record<string, unknown> },
): Promise<string> {
  const token = ((await (await fetch(`${server.url}/api/token`)).json()) as { data: { access_token: string } }).data
    .access_token;
  const connect = (await (
    await fetch(`${server.url}/api/clouds`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-temp-authorization': token },
      body: JSON.stringify({ ...cloud, alias }),
    })
  ).json()) as { code: number; msg: string };
  if (connect.code !== 0) throw new Error(`connect failed: ${connect.msg}`);
  return token;
}
