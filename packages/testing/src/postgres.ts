import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, requireProgram, run, startDaemon, waitFor, type Daemon } from './process.ts';

export interface PostgresServer {
  /** A URL for the maintenance database; create your own database with `createDatabase`. */
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

function postgresBinDir(): string {
  const root = '/usr/lib/postgresql';
  let versions: string[] = [];
  try {
    versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  } catch {
    // not installed
  }
  return versions[0] ? join(root, versions[0], 'bin') : '/usr/bin';
}

/**
 * Starts a throwaway PostgreSQL cluster on 127.0.0.1 (Debian's `postgresql` package).
 * PostgreSQL refuses to run as root, so as root it runs as the `postgres` system user.
 */
export async function startPostgres(): Promise<PostgresServer> {
  const bin = postgresBinDir();
  const initdb = await requireProgram('initdb', 'postgresql', [bin]);
  const postgres = await requireProgram('postgres', 'postgresql', [bin]);
  const dir = mkdtempSync(join(tmpdir(), 'skyferry-pg-'));
  const asRoot = process.getuid?.() === 0;
  const wrap = (cmd: string, args: string[]): [string, string[]] =>
    asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
  if (asRoot) {
    const { execFileSync } = await import('node:child_process');
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
  }
  const data = join(dir, 'data');
  await run(...wrap(initdb, ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C']));
  const port = await freePort();
  const daemon: Daemon = startDaemon(
    ...wrap(postgres, [
      '-D',
      data,
      '-p',
      String(port),
      '-h',
      '127.0.0.1',
      '-k',
      dir,
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
      '-c',
      'max_connections=300',
    ]),
  );
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const pg = (await import('pg')).default;
  await waitFor(async () => {
    if (daemon.child.exitCode !== null) throw new Error(`postgres exited: ${daemon.output()}`);
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.query('select 1');
      return true;
    } finally {
      await client.end().catch(() => undefined);
    }
  }, 'PostgreSQL to accept connections');
  return {
    url,
    port,
    async stop() {
      await daemon.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Creates a fresh database on the server and returns its URL. */
export async function createDatabase(serverUrl: string, name?: string): Promise<string> {
  const pg = (await import('pg')).default;
  const dbName = name ?? `t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`create database "${dbName}"`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${dbName}`;
  return url.toString();
}
