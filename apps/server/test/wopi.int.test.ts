/**
 * The WOPI host (issue 37), driven over HTTP by a WOPI client written here from Microsoft's
 * published WOPI protocol documentation (the Cloud Storage Partner Program's REST reference for
 * CheckFileInfo, GetFile, PutFile, Lock, GetLock, RefreshLock, Unlock and UnlockAndRelock, and
 * [MS-WOPI] sections 3.3.5.1.x): calls, headers (X-WOPI-Override, X-WOPI-Lock, X-WOPI-OldLock,
 * X-WOPI-MaxExpectedSize, X-WOPI-ItemVersion) and status codes as documented there. No office server
 * (Collabora Online, OnlyOffice) can be reached here, so this client stands in for one.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, type EcologyApp, type InitData, type OfficeOpenData, type WopiSessionData } from '@skyferry/contract';
import { WopiService } from '../src/services/wopi/index.ts';
import { WopiLocksRepository } from '../src/repositories/wopi-locks.ts';
import { envelope, startTestApp, type SignedUpUser, type TestApp } from './support/app.ts';

interface WopiAnswer {
  status: number;
  headers: Headers;
  body: Buffer;
}

/** A WOPI client: what an office server sends to a host, per the protocol documentation. */
class WopiClient {
  readonly src: string;
  readonly token: string;
  constructor(src: string, token: string) {
    this.src = src;
    this.token = token;
  }

  private async send(
    path: string,
    init: { method: string; headers?: Record<string, string>; body?: Buffer },
  ): Promise<WopiAnswer> {
    const url = `${this.src}${path}?access_token=${encodeURIComponent(this.token)}`;
    const res = await fetch(url, { method: init.method, headers: init.headers, body: init.body });
    return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
  }

  /** GET /wopi/files/(file_id): JSON with BaseFileName, OwnerId, Size, UserId, Version and the capabilities. */
  async checkFileInfo(): Promise<{ status: number; info: Record<string, unknown> }> {
    const r = await this.send('', { method: 'GET' });
    return {
      status: r.status,
      info: r.status === 200 ? (JSON.parse(r.body.toString()) as Record<string, unknown>) : {},
    };
  }

  /** GET /wopi/files/(file_id)/contents, optionally with X-WOPI-MaxExpectedSize. */
  getFile(maxExpectedSize?: number): Promise<WopiAnswer> {
    const headers: Record<string, string> = {};
    if (maxExpectedSize !== undefined) headers['X-WOPI-MaxExpectedSize'] = String(maxExpectedSize);
    return this.send('/contents', { method: 'GET', headers });
  }

  /** POST /wopi/files/(file_id)/contents with X-WOPI-Override: PUT and the lock the client holds. */
  putFile(content: Buffer, lock?: string): Promise<WopiAnswer> {
    const headers: Record<string, string> = { 'X-WOPI-Override': 'PUT', 'content-type': 'application/octet-stream' };
    if (lock !== undefined) headers['X-WOPI-Lock'] = lock;
    return this.send('/contents', { method: 'POST', headers, body: content });
  }

  override(override: string, extra: Record<string, string> = {}): Promise<WopiAnswer> {
    return this.send('', { method: 'POST', headers: { 'X-WOPI-Override': override, ...extra } });
  }

  lock(lock: string) {
    return this.override('LOCK', { 'X-WOPI-Lock': lock });
  }
  /** LOCK with X-WOPI-OldLock: UnlockAndRelock, atomic. */
  unlockAndRelock(oldLock: string, lock: string) {
    return this.override('LOCK', { 'X-WOPI-Lock': lock, 'X-WOPI-OldLock': oldLock });
  }
  getLock() {
    return this.override('GET_LOCK');
  }
  refreshLock(lock: string) {
    return this.override('REFRESH_LOCK', { 'X-WOPI-Lock': lock });
  }
  unlock(lock: string) {
    return this.override('UNLOCK', { 'X-WOPI-Lock': lock });
  }
}

/** 409 "lock mismatch" answers always name the current lock ('' when there is none). */
const mismatch = (r: WopiAnswer) => [r.status, r.headers.get('x-wopi-lock')];

const OFFICE = { SKYFERRY_WOPI_CLIENT_URL: 'https://office.example.test' };

// Locks are shared through the database: both stores keep them.
for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`WOPI host with an office server configured [${dialect}]`, () => {
    let t: TestApp;
    let u: SignedUpUser;
    let base = '';
    let folder = '';
    let cloudId = '';

    const session = async (path: string, mode?: 'view' | 'edit', who: SignedUpUser = u, cloud = cloudId) => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/wopi/sessions',
        headers: who.headers,
        payload: { cloud_id: cloud, path, ...(mode ? { mode } : {}) },
      });
      return { status: res.statusCode, ...envelope<WopiSessionData>(res) };
    };
    const client = async (path: string, mode?: 'view' | 'edit') => {
      const s = await session(path, mode);
      expect(s.code).toBe(0);
      return new WopiClient(s.data.wopi_src, s.data.access_token);
    };

    beforeAll(async () => {
      t = await startTestApp({ dialect, env: OFFICE });
      base = await t.app.listen({ port: 0, host: '127.0.0.1' });
      u = await t.signUp();
      folder = t.makeLocalFolder();
      writeFileSync(join(folder, 'report.docx'), 'first version');
      writeFileSync(join(folder, 'other.docx'), 'another document');
      writeFileSync(join(folder, 'new.docx'), '');
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/clouds',
        headers: u.headers,
        payload: { cloud_name: 'local', credentials: { path: folder } },
      });
      cloudId = envelope<{ id: string }>(res).data.id;
    });
    afterAll(async () => {
      await t?.close();
    });

    it('init advertises the WOPI host, and a session names the file under it with an expiring token', async () => {
      const init = envelope<InitData>(await t.app.inject({ method: 'GET', url: '/api/v2/init' }));
      expect(new URL(init.data.wopi_url).pathname).toBe('/wopi');
      const s = await session('/report.docx');
      expect(s.code).toBe(0);
      expect(s.data.wopi_src).toBe(`${init.data.wopi_url}/files/${s.data.file_id}`);
      expect(s.data.file_id).toMatch(/^[A-Za-z0-9_-]{20,}$/);
      expect(s.data.office_url).toBe(OFFICE.SKYFERRY_WOPI_CLIENT_URL);
      expect(s.data.access_token_ttl).toBeGreaterThan(Date.now() + 60 * 60_000);
      // The same file gets the same id (so its lock is the file's); a folder is no document.
      expect((await session('/report.docx')).data.file_id).toBe(s.data.file_id);
      expect((await session('/')).status).toBe(404);
      expect((await session('/missing.docx')).status).toBe(404);
    });

    it('CheckFileInfo answers the required properties and the lock capabilities', async () => {
      const c = await client('/report.docx');
      const { status, info } = await new WopiClient(`${base}${new URL(c.src).pathname}`, c.token).checkFileInfo();
      expect(status).toBe(200);
      expect(info).toMatchObject({
        BaseFileName: 'report.docx',
        OwnerId: u.uid,
        UserId: u.uid,
        Size: 'first version'.length,
        UserCanWrite: true,
        SupportsLocks: true,
        SupportsGetLock: true,
        SupportsUpdate: true,
      });
      expect(typeof info.Version).toBe('string');
      for (const value of Object.values(info)) expect(value).not.toBeNull();
    });

    /** The client as the office server sees the host: at its listening address. */
    const live = async (path: string, mode?: 'view' | 'edit') => {
      const c = await client(path, mode);
      return new WopiClient(`${base}${new URL(c.src).pathname}`, c.token);
    };

    it('GetFile answers the bytes with the version; 412 when they are more than X-WOPI-MaxExpectedSize', async () => {
      const c = await live('/report.docx');
      const got = await c.getFile();
      expect(got.status).toBe(200);
      expect(got.body.toString()).toBe('first version');
      expect(got.headers.get('x-wopi-itemversion')).toBe((await c.checkFileInfo()).info.Version);
      expect((await c.getFile(5)).status).toBe(412);
      expect((await c.getFile(1000)).status).toBe(200);
    });

    it('locks: Lock, GetLock, a second client refused (409 with the lock), PutFile under the lock, RefreshLock, UnlockAndRelock, Unlock', async () => {
      const c = await live('/report.docx');
      const before = (await c.checkFileInfo()).info.Version;
      // Unlocked and not empty: PutFile is a lock mismatch with an empty X-WOPI-Lock.
      expect(mismatch(await c.putFile(Buffer.from('nope')))).toEqual([409, '']);
      expect((await c.lock('lock-A')).status).toBe(200);
      expect((await c.lock('lock-A')).status).toBe(200); // the same lock again refreshes it
      expect((await c.getLock()).headers.get('x-wopi-lock')).toBe('lock-A');
      expect(mismatch(await c.lock('lock-B'))).toEqual([409, 'lock-A']);
      expect(mismatch(await c.putFile(Buffer.from('from B'), 'lock-B'))).toEqual([409, 'lock-A']);
      expect(readFileSync(join(folder, 'report.docx'), 'utf8')).toBe('first version');

      const saved = await c.putFile(Buffer.from('second version, saved by the office server'), 'lock-A');
      expect(saved.status).toBe(200);
      expect(readFileSync(join(folder, 'report.docx'), 'utf8')).toBe('second version, saved by the office server');
      const after = await c.checkFileInfo();
      expect(after.info.Size).toBe('second version, saved by the office server'.length);
      expect(after.info.Version).not.toBe(before);
      expect(saved.headers.get('x-wopi-itemversion')).toBe(after.info.Version);

      expect((await c.refreshLock('lock-A')).status).toBe(200);
      expect(mismatch(await c.refreshLock('lock-B'))).toEqual([409, 'lock-A']);
      expect(mismatch(await c.unlockAndRelock('lock-B', 'lock-C'))).toEqual([409, 'lock-A']);
      expect((await c.unlockAndRelock('lock-A', 'lock-C')).status).toBe(200);
      expect((await c.getLock()).headers.get('x-wopi-lock')).toBe('lock-C');
      expect(mismatch(await c.unlock('lock-A'))).toEqual([409, 'lock-C']);
      expect((await c.unlock('lock-C')).status).toBe(200);
      expect((await c.getLock()).headers.get('x-wopi-lock')).toBe('');
      // Unlocked: every lock operation but Lock is a mismatch with an empty X-WOPI-Lock.
      expect(mismatch(await c.unlock('lock-C'))).toEqual([409, '']);
      expect(mismatch(await c.refreshLock('lock-C'))).toEqual([409, '']);
      expect(mismatch(await c.unlockAndRelock('lock-C', 'lock-D'))).toEqual([409, '']);
      // A lock operation without X-WOPI-Lock is a bad request; an operation the host does not offer is 501.
      expect((await c.override('LOCK')).status).toBe(400);
      expect((await c.override('PUT_RELATIVE')).status).toBe(501);
    });

    it('a lock expires after 30 minutes: another client may then take it', async () => {
      const c = await live('/other.docx');
      expect((await c.lock('old-editor')).status).toBe(200);
      await t.ctx.db.kysely
        .updateTable('wopi_locks')
        .set({ expires_at: Date.now() - 1 })
        .execute();
      expect((await c.getLock()).headers.get('x-wopi-lock')).toBe('');
      expect((await c.lock('new-editor')).status).toBe(200);
      expect((await c.unlock('new-editor')).status).toBe(200);
    });

    it('an empty, unlocked file may be written without a lock (a new document)', async () => {
      const c = await live('/new.docx');
      expect((await c.putFile(Buffer.from('created'))).status).toBe(200);
      expect(readFileSync(join(folder, 'new.docx'), 'utf8')).toBe('created');
    });

    it('PutFile without a Content-Length (chunked) is refused: the size must be known', async () => {
      const c = await live('/other.docx');
      expect((await c.lock('chunked')).status).toBe(200);
      const url = new URL(`${c.src}/contents?access_token=${encodeURIComponent(c.token)}`);
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          url,
          { method: 'POST', headers: { 'X-WOPI-Override': 'PUT', 'X-WOPI-Lock': 'chunked' } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.write('part one, ');
        req.end('part two');
      });
      expect(status).toBe(400);
      expect(readFileSync(join(folder, 'other.docx'), 'utf8')).toBe('another document');
      expect((await c.unlock('chunked')).status).toBe(200);
    });

    it('a view token reads but cannot lock or write', async () => {
      const c = await live('/other.docx', 'view');
      expect((await c.checkFileInfo()).info).toMatchObject({ UserCanWrite: false, ReadOnly: true });
      expect((await c.getFile()).status).toBe(200);
      expect((await c.lock('viewer')).status).toBe(401);
      expect((await c.putFile(Buffer.from('x'), 'viewer')).status).toBe(401);
      expect(readFileSync(join(folder, 'other.docx'), 'utf8')).toBe('another document');
    });

    it('DeleteFile removes the document, but not while it is locked (409 with the lock) nor with a view token', async () => {
      writeFileSync(join(folder, 'draft.docx'), 'a draft');
      const c = await live('/draft.docx');
      expect((await c.checkFileInfo()).info.SupportsDeleteFile).toBe(true);
      expect((await (await live('/draft.docx', 'view')).override('DELETE')).status).toBe(401);
      expect((await c.lock('lock-D')).status).toBe(200);
      expect(mismatch(await c.override('DELETE'))).toEqual([409, 'lock-D']);
      expect(existsSync(join(folder, 'draft.docx'))).toBe(true);
      expect((await c.unlock('lock-D')).status).toBe(200);
      expect((await c.override('DELETE')).status).toBe(200);
      expect(existsSync(join(folder, 'draft.docx'))).toBe(false);
      expect((await c.checkFileInfo()).status).toBe(404);
    });

    it('tokens: one file only, not forged, not expired, and not past the session they were issued in', async () => {
      const report = await live('/report.docx');
      const other = await live('/other.docx');
      // The report's token on the other file's address.
      const crossed = new WopiClient(other.src, report.token);
      expect((await crossed.checkFileInfo()).status).toBe(401);
      expect((await crossed.getFile()).status).toBe(401);
      // A changed token, and none.
      const [body, mac] = report.token.split('.') as [string, string];
      const claims = JSON.parse(Buffer.from(body, 'base64url').toString()) as Record<string, unknown>;
      const forged = Buffer.from(JSON.stringify({ ...claims, w: 1, e: Date.now() + 1e9 })).toString('base64url');
      expect((await new WopiClient(report.src, `${forged}.${mac}`).checkFileInfo()).status).toBe(401);
      expect((await new WopiClient(report.src, '').checkFileInfo()).status).toBe(401);
      // Past its time (the same host, a day later).
      const later = new WopiService({
        files: t.ctx.files,
        box: t.ctx.secrets,
        locks: new WopiLocksRepository(t.ctx.db.kysely),
        sessionActive: async () => true,
        officeUrl: OFFICE.SKYFERRY_WOPI_CLIENT_URL,
        tokenTtlMs: t.ctx.config.wopiTokenTtlMs,
        maxBytes: 1e9,
        now: () => Date.now() + 86_400_000,
      });
      const fileId = new URL(report.src).pathname.split('/').pop() ?? '';
      await expect(later.authorize(fileId, report.token)).rejects.toMatchObject({ status: 401 });
      // Another user cannot open the owner's file; after logout the owner's tokens stop working.
      const stranger = await t.signUp();
      expect((await session('/report.docx', 'edit', stranger)).status).toBe(404);
      const logout = await t.app.inject({ method: 'POST', url: '/api/account/logout', headers: u.headers });
      expect(envelope(logout).code).toBe(0);
      expect((await report.checkFileInfo()).status).toBe(401);
      expect((await report.getFile()).status).toBe(401);
    });
  });
}

describe('WOPI host without an office server', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('init advertises no wopi_url, and the WOPI calls answer 404', async () => {
    const init = envelope<InitData>(await t.app.inject({ method: 'GET', url: '/api/v2/init' }));
    expect(init.data.wopi_url).toBe('');
    const u = await t.signUp();
    const s = await t.app.inject({
      method: 'POST',
      url: '/api/wopi/sessions',
      headers: u.headers,
      payload: { cloud_id: 'any', path: '/a.docx' },
    });
    expect([s.statusCode, envelope(s).code]).toEqual([404, Code.NOT_FOUND]);
    const r = await t.app.inject({ method: 'GET', url: '/wopi/files/abc?access_token=x' });
    expect([r.statusCode, envelope(r).code]).toEqual([404, Code.NOT_FOUND]);
  });

  it('an operator’s office-type app (state 2) opens a file at its office path with the encoded token, and the WOPI host serves it', async () => {
    const operator = await t.signUp();
    const folder = t.makeLocalFolder();
    writeFileSync(join(folder, 'plan.docx'), 'the plan');
    writeFileSync(join(folder, 'notes.txt'), 'not for the office app');
    const cloud = envelope<{ id: string }>(
      await t.app.inject({
        method: 'POST',
        url: '/api/clouds',
        headers: operator.headers,
        payload: { cloud_name: 'local', credentials: { path: folder } },
      }),
    ).data.id;
    const registered = envelope<EcologyApp>(
      await t.app.inject({
        method: 'POST',
        url: '/api/operator/apps',
        headers: operator.headers,
        payload: {
          name: 'Docs',
          url: 'https://office.example.com/editor/',
          state: 2,
          functions: [{ name: 'Edit', action: 'edit', extensions: ['docx'] }],
        },
      }),
    );
    expect(registered.code).toBe(0);
    expect(registered.data.office).toEqual({ name: 'Docs', token: '' });
    const open = (payload: Record<string, unknown>, headers = operator.headers) =>
      t.app.inject({ method: 'POST', url: '/ecology/v1/office/open', headers, payload });
    const opened = envelope<OfficeOpenData>(
      await open({ app_id: registered.data.app_id, cloud_id: cloud, path: '/plan.docx' }),
    );
    expect(opened.code).toBe(0);
    const url = new URL(opened.data.url);
    expect(url.origin).toBe('https://office.example.com');
    expect(url.pathname).toBe(`/editor/Docs/${encodeURIComponent(opened.data.office.token)}`);
    expect(url.searchParams.get('WOPISrc')).toBe(opened.data.wopi_src);
    expect([opened.data.office.name, opened.data.file_name]).toEqual(['Docs', 'plan.docx']);
    // The office server, told the token and WOPISrc, reads and saves the file (no global office server is configured).
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const c = new WopiClient(`${base}${new URL(opened.data.wopi_src).pathname}`, opened.data.office.token);
    const info = await c.checkFileInfo();
    expect([info.status, info.info.BaseFileName, info.info.UserCanWrite]).toEqual([200, 'plan.docx', true]);
    expect((await c.getFile()).body.toString()).toBe('the plan');
    expect((await c.lock('office-lock')).status).toBe(200);
    expect((await c.putFile(Buffer.from('the plan, edited'), 'office-lock')).status).toBe(200);
    expect(readFileSync(join(folder, 'plan.docx'), 'utf8')).toBe('the plan, edited');
    // A type the app does not take, an app that is not an office app, a cloud that is not yours: clear 4xx.
    expect((await open({ app_id: registered.data.app_id, cloud_id: cloud, path: '/notes.txt' })).statusCode).toBe(400);
    expect((await open({ app_id: 1, cloud_id: cloud, path: '/plan.docx' })).statusCode).toBe(400);
    const stranger = await t.signUp(undefined, undefined, { operator: false });
    expect(
      (await open({ app_id: registered.data.app_id, cloud_id: cloud, path: '/plan.docx' }, stranger.headers))
        .statusCode,
    ).toBe(404);
    // Without an office server configured, other WOPI tokens still answer 404 (the host is off for them).
    const forged = new WopiClient(`${base}${new URL(opened.data.wopi_src).pathname}`, 'x.y');
    expect((await forged.checkFileInfo()).status).toBe(404);
  });
});
