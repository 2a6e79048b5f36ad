import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, requireProgram, startDaemon, waitFor } from './process.ts';

export interface RcloneServer {
  readonly protocol: 'webdav' | 'sftp';
  readonly host: string;
  readonly port: number;
  /** For webdav: the base URL ending in "/". For sftp: `sftp://host:port`. */
  readonly url: string;
  readonly username: string;
  readonly password: string;
  /** The folder served. Write through the protocol: rclone's directory cache hides direct writes. */
  readonly dir: string;
  stop(): Promise<void>;
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

export interface RcloneServeOptions {
  /**
   * rclone's VFS cache for writes. SFTP defaults to `writes` (out-of-order writes work); `off` is
   * rclone's own default, where a write beyond what was written so far fails ("Illegal seek").
   */
  vfsCacheMode?: 'off' | 'writes';
  /** Serve this folder (kept by `stop`) instead of a new temporary one; a restart passes the old one. */
  dir?: string;
  /** Listen on this port (a restart passes the old one); default a free one. */
  port?: number;
  /** User and password (a restart passes the old ones); default generated. */
  username?: string;
  password?: string;
  /** More flags for `rclone serve` (`--vfs-case-insensitive`: a server that finds names whatever their case). */
  args?: string[];
  /** Refuse every change, as a read-only share does. */
  readOnly?: boolean;
}

/**
 * Starts `rclone serve webdav` or `rclone serve sftp` (Debian's `rclone`) on 127.0.0.1 over a
 * temporary folder, with a user and password. SFTP gets `--vfs-cache-mode writes` unless told
 * otherwise, so that out-of-order (pipelined) writes work.
 */
export async function startRcloneServe(
  protocol: 'webdav' | 'sftp',
  opts: RcloneServeOptions = {},
): Promise<RcloneServer> {
  const rclone = await requireProgram('rclone', 'rclone');
  const root = mkdtempSync(join(tmpdir(), `skyferry-rclone-${protocol}-`));
  const dir = opts.dir ?? join(root, 'data');
  mkdirSync(dir, { recursive: true });
  const config = join(root, 'rclone.conf');
  writeFileSync(config, '');
  const port = opts.port ?? (await freePort());
  const username = opts.username ?? 'skyferry';
  const password = opts.password ?? `pw-${Math.random().toString(36).slice(2)}`;
  const args = [
    'serve',
    protocol,
    dir,
    '--config',
    config,
    '--cache-dir',
    join(root, 'cache'),
    '--addr',
    `127.0.0.1:${port}`,
    '--user',
    username,
    '--pass',
    password,
    '--dir-cache-time',
    '1s',
    '--log-level',
    'ERROR',
    ...(opts.args ?? []),
  ];
  // Refuses every change (rclone answers PUT with 404, MKCOL and DELETE with 405, MOVE with 403).
  if (opts.readOnly) args.push('--read-only');
  // Write-back at once: files still waiting in the VFS cache get lost when their folder is renamed.
  if (protocol === 'sftp') {
    if ((opts.vfsCacheMode ?? 'writes') === 'writes') args.push('--vfs-cache-mode', 'writes', '--vfs-write-back', '0s');
    args.push('--key', await hostKey(root));
  }
  const daemon = startDaemon(rclone, args);
  await waitFor(async () => {
    if (daemon.child.exitCode !== null) throw new Error(`rclone exited: ${daemon.output()}`);
    return portOpen(port);
  }, `rclone serve ${protocol} to listen`);
  const host = '127.0.0.1';
  return {
    protocol,
    host,
    port,
    url: protocol === 'webdav' ? `http://${host}:${port}/` : `sftp://${host}:${port}`,
    username,
    password,
    dir,
    async stop() {
      await daemon.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** A throwaway host key, so rclone does not write one into the user's config folder. */
async function hostKey(root: string): Promise<string> {
  const keygen = await requireProgram('ssh-keygen', 'openssh-client');
  const path = join(root, 'host_ed25519');
  const { run } = await import('./process.ts');
  await run(keygen, ['-q', '-t', 'ed25519', '-N', '', '-f', path]);
  return path;
}
