import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createContext, type AppContext } from '../../src/context.ts';

/**
 * Issue 34 (smaller items): skyferry.db and its WAL were world-readable. The data dir is 0700 and
 * everything in it 0600 (database, WAL, shared memory, secret, outbox mail), on a fresh install
 * and, fixed at start, on an install an older version left open.
 */
const mode = (path: string) => statSync(path).mode & 0o777;

describe.skipIf(process.platform === 'win32')('data dir modes', () => {
  let root: string;
  let ctx: AppContext | undefined;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'skyferry-modes-'));
  });
  afterEach(async () => {
    await ctx?.close();
    ctx = undefined;
    rmSync(root, { recursive: true, force: true });
  });

  const start = async () => {
    const config = loadConfig(
      {
        SKYFERRY_DATA_DIR: 'data',
        SKYFERRY_WORKERS: '0',
        SKYFERRY_WEB_DIST: join(root, 'no-web'),
        LOG_LEVEL: 'silent',
      },
      root,
    );
    ctx = await createContext(config, pino({ level: 'silent' }));
    // A write, so SQLite has its WAL and shared-memory files open.
    await ctx.tokens.issueVisitor();
    return config;
  };

  it('a fresh install keeps its data to the server’s user', async () => {
    const config = await start();
    const db = join(config.dataDir, 'skyferry.db');
    expect(existsSync(`${db}-wal`)).toBe(true);
    expect(existsSync(`${db}-shm`)).toBe(true);
    expect(mode(config.dataDir)).toBe(0o700);
    for (const file of [db, `${db}-wal`, `${db}-shm`, join(config.dataDir, 'secret')]) {
      expect(mode(file).toString(8), file).toBe('600');
    }
  });

  it('an older install’s open modes are fixed at start: the database, its WAL, the secret and the outbox', async () => {
    // The first start made the files; then they are opened up as an older version left them.
    const config = await start();
    await ctx?.close();
    ctx = undefined;
    const db = join(config.dataDir, 'skyferry.db');
    mkdirSync(config.outboxDir, { recursive: true });
    const mail = join(config.outboxDir, '1700000000000-abc.eml');
    writeFileSync(mail, 'To: someone@example.com\r\n\r\nhello');
    writeFileSync(`${db}-wal`, '');
    writeFileSync(`${db}-shm`, '');
    for (const file of [db, `${db}-wal`, `${db}-shm`, join(config.dataDir, 'secret'), mail]) chmodSync(file, 0o644);
    chmodSync(config.outboxDir, 0o755);
    chmodSync(config.dataDir, 0o755);

    await start();
    expect(mode(config.dataDir)).toBe(0o700);
    expect(mode(config.outboxDir)).toBe(0o700);
    for (const file of [db, `${db}-wal`, `${db}-shm`, join(config.dataDir, 'secret'), mail]) {
      expect(mode(file).toString(8), file).toBe('600');
    }
  });
});
