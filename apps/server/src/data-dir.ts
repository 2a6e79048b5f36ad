import { chmodSync, existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from './config.ts';

function setMode(path: string, mode: number, log: Logger): void {
  try {
    if ((statSync(path).mode & 0o777) !== mode) chmodSync(path, mode);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    // Not ours to change (a volume owned by another user): say so rather than refuse to start.
    log.warn({ path, code }, 'could not make a data file private');
  }
}

/**
 * The data dir holds the secret, the database and mail with users' addresses: it is 0700 and its
 * files 0600, for this server's user only. Also fixes the modes an older install left (the
 * database and its WAL created world-readable), at every start. The SQLite files themselves are
 * created private by @skyferry/db.
 */
export function secureDataDir(config: Config, log: Logger): void {
  if (process.platform === 'win32') return;
  setMode(config.dataDir, 0o700, log);
  setMode(join(config.dataDir, 'secret'), 0o600, log);
  if (existsSync(config.outboxDir)) {
    setMode(config.outboxDir, 0o700, log);
    for (const entry of readdirSync(config.outboxDir, { withFileTypes: true })) {
      if (entry.isFile()) setMode(join(config.outboxDir, entry.name), 0o600, log);
    }
  }
}
