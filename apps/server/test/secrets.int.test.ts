import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, type Cloud } from '@skyferry/contract';
import { sql } from '@skyferry/db';
import { startRcloneServe, type RcloneServer } from '@skyferry/testing';
import { startTestApp, type TestApp } from './support/app.ts';

/**
 * Secrets never at rest in clear and never in logs: connect a password-protected WebDAV server
 * (rclone serve) with tracing on, use the cloud, fail a few times, then search the database and
 * the captured logs for the password and the tokens.
 */
for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`secrets stay secret [${dialect}]`, () => {
    let t: TestApp;
    let dav: RcloneServer;
    const responses: string[] = [];

    const send = async (
      method: 'GET' | 'POST' | 'PUT',
      url: string,
      headers: Record<string, string>,
      body?: unknown,
    ) => {
      const res = await t.app.inject({
        method,
        url,
        headers,
        ...(body === undefined ? {} : { payload: body as Record<string, unknown> }),
      });
      responses.push(res.body);
      return { status: res.statusCode, ...(JSON.parse(res.body) as { code: number; msg: string; data: unknown }) };
    };

    /** Everything the database holds, as text: the SQLite files, or every row of every table. */
    async function databaseText(): Promise<string> {
      if (dialect === 'sqlite') {
        return readdirSync(t.dataDir)
          .filter((f) => f.startsWith('skyferry.db'))
          .map((f) => readFileSync(join(t.dataDir, f)).toString('latin1'))
          .join('\n');
      }
      const tables = await sql<{
        tablename: string;
      }>`select tablename from pg_tables where schemaname = 'public'`.execute(t.ctx.db.kysely);
      let text = '';
      for (const { tablename } of tables.rows) {
        const rows = await sql<{ r: string }>`select row_to_json(x)::text as r from ${sql.table(tablename)} x`.execute(
          t.ctx.db.kysely,
        );
        text += rows.rows.map((r) => r.r).join('\n');
      }
      return text;
    }

    beforeAll(async () => {
      [t, dav] = await Promise.all([
        startTestApp({ dialect, env: { LOG_LEVEL: 'trace' } }),
        startRcloneServe('webdav'),
      ]);
    });
    afterAll(async () => {
      await Promise.all([t?.close(), dav?.stop()]);
    });

    it('keeps the cloud password and the tokens out of the database, the logs and every answer', async () => {
      const u = await t.signUp();
      const creds = { url: dav.url, username: dav.username, password: dav.password };
      const wrong = await send('POST', '/api/clouds', u.headers, {
        cloud_name: 'webdav',
        credentials: { ...creds, password: `${dav.password}-wrong` },
      });
      expect([wrong.status, wrong.code]).toEqual([422, Code.CLOUD_CREDENTIALS_INVALID]);
      expect(wrong.msg).toBe('The address, user name or password is incorrect, please try again');
      const invalid = await send('POST', '/api/clouds', u.headers, {
        cloud_name: 'webdav',
        credentials: { ...creds, url: 'ftp://not-http' },
      });
      expect(invalid.status).toBe(400);
      const connected = await send('POST', '/api/clouds', u.headers, { cloud_name: 'webdav', credentials: creds });
      expect(connected.code).toBe(0);
      const cloud = connected.data as Cloud;
      expect(cloud.cloud_account).toBe(`${dav.username}@${new URL(dav.url).host}`);
      await send('GET', '/api/v2/clouds/me', u.headers);
      const re = await send('PUT', `/api/clouds/${cloud.id}/credentials`, u.headers, { credentials: creds });
      expect(re.code).toBe(0);
      // The service layer decrypts and really uses them.
      const { provider } = await t.ctx.clouds.open({ kind: 'user', userId: u.uid }, cloud.id);
      await provider.mkdir('/made-by-test');
      expect((await provider.list('/')).entries.map((e) => e.name)).toContain('made-by-test');
      await provider.close?.();
      const refreshed = await send(
        'POST',
        '/api/v2/authorizations',
        {},
        { grant_type: 'refresh_token', refresh_token: u.refreshToken },
      );
      expect(refreshed.code).toBe(0);

      const stored = await databaseText();
      expect(stored.length).toBeGreaterThan(1000);
      expect(stored).toContain(cloud.id);
      expect(stored).not.toContain(dav.password);
      for (const token of [u.accessToken, u.refreshToken, u.autoLoginToken]) expect(stored).not.toContain(token);

      const logs = t.logs();
      expect(logs).toContain('cloud connected');
      expect(logs).not.toContain(dav.password);
      for (const token of [u.accessToken, u.refreshToken, u.autoLoginToken]) expect(logs).not.toContain(token);

      for (const body of responses) expect(body).not.toContain(dav.password);
    });
  });
}
