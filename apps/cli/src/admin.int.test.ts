import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '@skyferry/db';
import { runCli } from './cli.ts';
import { sink } from './run.testing.ts';

// `skyferry admin grant|revoke` on the server's host: the server's environment names its database
// (here a SQLite file under SKYFERRY_DATA_DIR); the change is the billing service's, audited as `cli`.

let dir: string;
const env = () => ({
  HOME: dir,
  SKYFERRY_DATA_DIR: join(dir, 'data'),
  SKYFERRY_SECRET: 'x'.repeat(40),
  BILLING_MODE: 'test',
});

async function admin(argv: string[]) {
  const stdout = sink();
  const stderr = sink();
  const code = await runCli(['admin', ...argv], { stdout, stderr, cwd: dir, env: env() });
  return { code, out: stdout.text(), err: stderr.text() };
}

async function withDb<T>(fn: (db: ReturnType<typeof createDb>) => Promise<T>): Promise<T> {
  const db = createDb({ url: join(dir, 'data', 'skyferry.db') });
  try {
    await db.migrate();
    return await fn(db);
  } finally {
    await db.close();
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'skyferry-admin-'));
  // The server's database with one account, as the server would have made it.
  await admin(['revoke', 'nobody@example.com']);
  await withDb(async (db) => {
    const now = Date.now();
    await db.kysely
      .insertInto('users')
      .values({
        id: 'u-admin-1',
        email: 'ada@example.com',
        password_hash: 'x',
        nickname: '',
        firstname: '',
        lastname: '',
        country: '',
        mobile: '',
        avatar: '',
        notify_email: '',
        remind_me: 0,
        language: 'en',
        created_at: now,
        updated_at: now,
      })
      .execute();
  });
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('skyferry admin', () => {
  it('grants a plan until a date, then revokes it, each change audited as cli', async () => {
    const year = new Date().getUTCFullYear() + 1;
    const granted = await admin(['grant', 'ADA@example.com', 'quarter', '--until', `${year}-03-31`]);
    expect(granted).toMatchObject({ code: 0, err: '' });
    expect(granted.out).toBe(`ada@example.com: plan quarter, until ${year}-03-31T23:59:59.000Z\n`);
    const licence = await withDb((db) =>
      db.kysely.selectFrom('licenses').selectAll().where('user_id', '=', 'u-admin-1').executeTakeFirstOrThrow(),
    );
    expect(licence).toMatchObject({ plan_id: 'quarter', expires_at: Date.UTC(year, 2, 31, 23, 59, 59) });

    const revoked = await admin(['revoke', 'ada@example.com']);
    expect(revoked.out).toBe('ada@example.com: plan free, until none\n');
    const audit = await withDb((db) =>
      db.kysely.selectFrom('billing_audit').select(['actor', 'action']).where('user_id', '=', 'u-admin-1').execute(),
    );
    expect(audit.map((a) => [a.actor, a.action]).sort()).toEqual([
      ['cli', 'licence_granted'],
      ['cli', 'licence_revoked'],
    ]);
  });

  it('refuses an unknown account, an unknown plan and a malformed or past date (exit 2)', async () => {
    expect(await admin(['grant', 'nobody@example.com', 'month'])).toMatchObject({ code: 2 });
    expect((await admin(['grant', 'ada@example.com', 'week'])).err).toContain('unknown plan "week"');
    expect((await admin(['grant', 'ada@example.com', 'month', '--until', '31/12/2030'])).err).toContain('--until');
    expect((await admin(['grant', 'ada@example.com', 'month', '--until', '2001-01-01'])).err).toContain('future');
    expect((await admin(['grant', 'ada@example.com'])).code).toBe(2);
  });
});
