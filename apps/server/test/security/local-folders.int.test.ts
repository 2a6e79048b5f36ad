/**
 * Issue 34, finding 1: folders on the server's own disk (the `local` kind) are open only to the
 * operator and to users the operator allows, each of those in a folder of their own; visitors never
 * get them, and the server's own files (data dir, secret, database) are never served. Every account
 * here is made by the real sign-up (`operator: false`): the install's first account is the operator.
 */
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Code,
  type Cloud,
  type OperatorUser,
  type OperatorUsersData,
  type SystemCloudKind,
  type UsersMeData,
} from '@skyferry/contract';
import { startTestApp, type SignedUpUser, type TestApp, type TestVisitor } from '../support/app.ts';

interface Reply<T> {
  status: number;
  code: number;
  msg: string;
  data: T;
}

const PASSWORD = 'correct horse battery staple';

function client(t: () => TestApp) {
  return async function call<T = unknown>(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    headers: Record<string, string> = {},
    body?: unknown,
  ): Promise<Reply<T>> {
    const res = await t().app.inject({
      method,
      url,
      headers,
      ...(body === undefined ? {} : { payload: body as Record<string, unknown> }),
    });
    return { status: res.statusCode, ...(JSON.parse(res.body) as { code: number; msg: string; data: T }) };
  };
}

/** Every call a cloud's owner can make on its files, each as it would read or write them. */
function fileCalls(
  cloudId: string,
  path: string,
): Array<{ method: 'GET' | 'POST' | 'PUT'; url: string; body?: unknown }> {
  const q = `cloud_id=${cloudId}&path=${encodeURIComponent(path)}`;
  return [
    { method: 'POST', url: '/api/cloud-manager/list', body: { cloud_id: cloudId, path: '/' } },
    { method: 'GET', url: `/api/cloud-manager/files?${q}` },
    { method: 'PUT', url: `/api/cloud-manager/files?${q}`, body: 'planted' },
    { method: 'POST', url: '/api/cloud-manager/mkdir', body: { cloud_id: cloudId, folder_name: 'planted' } },
    { method: 'POST', url: '/api/cloud-manager/rename', body: { cloud_id: cloudId, path, new_name: 'moved' } },
    { method: 'POST', url: '/api/cloud-manager/delete', body: { cloud_id: cloudId, files: [path] } },
    { method: 'POST', url: '/api/cloud-manager/info', body: { cloud_id: cloudId } },
    { method: 'POST', url: '/api/cloud-manager/download-link', body: { cloud_id: cloudId, paths: [path] } },
    { method: 'POST', url: '/api/cloud-manager/uploads', body: { cloud_id: cloudId, path: '/up.bin', size: 4 } },
    { method: 'GET', url: `/api/cloud-manager/thumbnail?${q}&size=128` },
  ];
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`local folders: operator, allowed users, nobody else [${dialect}]`, () => {
    let t: TestApp;
    let operator: SignedUpUser;
    let bob: SignedUpUser;
    let carol: SignedUpUser;
    let visitor: TestVisitor;
    let root: string;
    const call = client(() => t);

    const signUp = (name: string) => t.signUp(`${name}.${dialect}@example.com`, PASSWORD, { operator: false });
    const kinds = async (headers: Record<string, string>) =>
      (await call<SystemCloudKind[]>('GET', '/api/system/clouds', headers)).data.find((k) => k.cloud_name === 'local');
    const connect = (headers: Record<string, string>, path: string) =>
      call<Cloud>('POST', '/api/clouds', headers, { cloud_name: 'local', credentials: { path } });
    const grant = (uid: string, body: { granted: boolean; folder_name?: string }, headers = operator.headers) =>
      call<OperatorUser>('PUT', `/api/operator/users/${uid}/local-folder`, headers, body);
    const list = (headers: Record<string, string>, cloudId: string, path = '/') =>
      call<{ items: Array<{ name: string }> }>('POST', '/api/cloud-manager/list', headers, { cloud_id: cloudId, path });

    beforeAll(async () => {
      t = await startTestApp({ dialect });
      root = realpathSync(t.localRoot);
      operator = await signUp('operator');
      bob = await signUp('bob');
      carol = await signUp('carol');
      visitor = await t.visitor();
    });
    afterAll(async () => {
      await t?.close();
    });

    it('the first account of the install is its operator; later ones are users', async () => {
      expect(operator.data.user_info.role).toBe('operator');
      expect(bob.data.user_info.role).toBe('user');
      const me = await call<UsersMeData>('GET', '/api/users/me', carol.headers);
      expect(me.data.user_info.role).toBe('user');
      const users = await call<OperatorUsersData>('GET', '/api/operator/users', operator.headers);
      expect(users.code).toBe(0);
      expect(users.data.items.map((u) => [u.email, u.role, u.local_folder])).toEqual([
        [operator.email, 'operator', null],
        [bob.email, 'user', null],
        [carol.email, 'user', null],
      ]);
      expect(users.data.roots).toEqual([t.localRoot]);
    });

    it('only the operator reaches the operator calls: users get 403005, visitors 140013', async () => {
      const asUser = await call('GET', '/api/operator/users', bob.headers);
      expect([asUser.status, asUser.code, asUser.msg]).toEqual([
        403,
        Code.OPERATOR_REQUIRED,
        "Only the server's operator may do this.",
      ]);
      const selfGrant = await grant(bob.uid, { granted: true }, bob.headers);
      expect([selfGrant.status, selfGrant.code]).toEqual([403, Code.OPERATOR_REQUIRED]);
      expect((await call('GET', '/api/operator/users', visitor.headers)).code).toBe(Code.UNAUTHENTICATED);
      expect((await grant(bob.uid, { granted: true }, visitor.headers)).code).toBe(Code.UNAUTHENTICATED);
      expect(
        (await call<OperatorUsersData>('GET', '/api/operator/users', operator.headers)).data.items[1],
      ).toMatchObject({ local_folder: null });
    });

    it('a visitor never gets the local kind: listed unavailable with the reason, refused with 403004', async () => {
      for (const headers of [visitor.headers, {}]) {
        const local = await kinds(headers);
        expect(local).toMatchObject({ available: false });
        expect(local?.reason).toContain('not available to visitors');
        expect(local?.roots).toBeUndefined();
      }
      for (const path of [t.localRoot, t.makeLocalFolder(), t.dataDir, '/']) {
        const res = await connect(visitor.headers, path);
        expect([res.status, res.code]).toEqual([403, Code.LOCAL_FOLDER_FORBIDDEN]);
        expect(res.msg).toContain('not available to visitors');
      }
      const cloudsOfVisitor = await t.ctx.db.kysely
        .selectFrom('clouds')
        .select('id')
        .where('user_id', 'is', null)
        .execute();
      expect(cloudsOfVisitor).toEqual([]);
    });

    it("a visitor's local cloud (planted in the database) answers 403004 to every file call", async () => {
      // The operator's cloud over the folder holding the data dir, then handed to the visitor.
      const secretFolder = t.makeLocalFolder('visitor-bait');
      writeFileSync(join(secretFolder, 'id_ed25519'), 'PRIVATE KEY MATERIAL');
      const cloud = (await connect(operator.headers, secretFolder)).data;
      const visitorId = await t.ctx.tokens.authenticateVisitor(visitor.tempToken);
      await t.ctx.db.kysely
        .updateTable('clouds')
        .set({ user_id: null, visitor_id: visitorId ?? '' })
        .where('id', '=', cloud.id)
        .execute();
      for (const c of fileCalls(cloud.id, '/id_ed25519')) {
        const res = await t.app.inject({
          method: c.method,
          url: c.url,
          headers: {
            ...visitor.headers,
            'content-type': typeof c.body === 'string' ? 'application/octet-stream' : 'application/json',
          },
          ...(c.body === undefined ? {} : { payload: typeof c.body === 'string' ? c.body : JSON.stringify(c.body) }),
        });
        expect(res.body, `${c.method} ${c.url}`).not.toContain('PRIVATE KEY');
        const body = JSON.parse(res.body) as { code: number; msg: string };
        expect([res.statusCode, body.code], `${c.method} ${c.url}`).toEqual([403, Code.LOCAL_FOLDER_FORBIDDEN]);
      }
      expect(existsSync(join(secretFolder, 'planted'))).toBe(false);
      expect(existsSync(join(secretFolder, 'id_ed25519'))).toBe(true);
    });

    it('a second user is refused until the operator allows them, then gets a folder of their own', async () => {
      const before = await kinds(bob.headers);
      expect(before).toMatchObject({ available: false });
      expect(before?.reason).toContain('Ask the operator');
      const refused = await connect(bob.headers, t.makeLocalFolder());
      expect([refused.status, refused.code]).toEqual([403, Code.LOCAL_FOLDER_FORBIDDEN]);
      expect(refused.msg).toContain('Ask the operator');

      const granted = await grant(bob.uid, { granted: true });
      expect(granted.code).toBe(0);
      const own = join(root, bob.uid);
      expect(granted.data).toMatchObject({ uid: bob.uid, role: 'user', local_folder: bob.uid, local_roots: [own] });
      expect(existsSync(own)).toBe(true);
      expect(await kinds(bob.headers)).toMatchObject({ available: true, reason: null, roots: [own] });
      // The operator sees every root; the kinds list says so.
      expect(await kinds(operator.headers)).toMatchObject({ available: true, roots: [t.localRoot] });

      const outside = await connect(bob.headers, t.localRoot);
      expect([outside.status, outside.code]).toEqual([422, Code.CLOUD_CREDENTIALS_INVALID]);
      expect(outside.msg).toContain(own);
      expect(outside.msg).not.toContain(`${t.localRoot},`);
      const mine = await connect(bob.headers, own);
      expect(mine.code).toBe(0);
      writeFileSync(join(own, 'notes.txt'), 'bob');
      expect((await list(bob.headers, mine.data.id)).data.items.map((i) => i.name)).toEqual(['notes.txt']);
    });

    it("an allowed user cannot reach another user's folder, `..`, or a link out of their own", async () => {
      const carolGrant = await grant(carol.uid, { granted: true, folder_name: 'carol' });
      expect(carolGrant.data.local_roots).toEqual([join(root, 'carol')]);
      writeFileSync(join(root, 'carol', 'diary.txt'), 'carol private');
      const bobOwn = join(root, bob.uid);
      for (const path of [
        join(root, 'carol'),
        `${bobOwn}/../carol`,
        `${bobOwn}/..`,
        t.makeLocalFolder('operator-stuff'),
        t.dataDir,
      ]) {
        const res = await connect(bob.headers, path);
        expect([res.status, res.code], path).toEqual([422, Code.CLOUD_CREDENTIALS_INVALID]);
      }
      // A link inside Bob's folder that leads out (made on the disk: the API makes no links).
      symlinkSync(join(root, 'carol'), join(bobOwn, 'to-carol'));
      symlinkSync(root, join(bobOwn, 'to-root'));
      const linked = await connect(bob.headers, join(bobOwn, 'to-carol'));
      expect([linked.status, linked.code]).toEqual([422, Code.CLOUD_CREDENTIALS_INVALID]);
      const bobCloud = (await call<{ clouds: Cloud[] }>('GET', '/api/v2/clouds/me', bob.headers)).data.clouds[0];
      const id = bobCloud?.id ?? '';
      expect((await list(bob.headers, id)).data.items.map((i) => i.name)).toEqual(['notes.txt']);
      for (const path of ['/to-carol/diary.txt', '/to-root/carol/diary.txt']) {
        const res = await t.app.inject({
          method: 'GET',
          url: `/api/cloud-manager/files?cloud_id=${id}&path=${encodeURIComponent(path)}`,
          headers: bob.headers,
        });
        expect(res.statusCode, path).toBeGreaterThanOrEqual(400);
        expect(res.statusCode, path).toBeLessThan(500);
        expect(res.body).not.toContain('carol private');
        const put = await t.app.inject({
          method: 'PUT',
          url: `/api/cloud-manager/files?cloud_id=${id}&path=${encodeURIComponent(path)}`,
          headers: { ...bob.headers, 'content-type': 'application/octet-stream' },
          payload: 'overwritten',
        });
        expect([put.statusCode >= 400, put.statusCode < 500], path).toEqual([true, true]);
      }
      // `..` in a path is refused before any cloud is touched.
      const up = await list(bob.headers, id, '/../carol');
      expect(up.status).toBe(400);
      const dl = await t.app.inject({
        method: 'GET',
        url: `/api/cloud-manager/files?cloud_id=${id}&path=${encodeURIComponent('/../carol/diary.txt')}`,
        headers: bob.headers,
      });
      expect(dl.statusCode).toBe(400);
      expect(dl.body).not.toContain('carol private');
      expect(realpathSync(join(root, 'carol', 'diary.txt'))).toBe(join(root, 'carol', 'diary.txt'));
      expect(await kinds(carol.headers)).toMatchObject({ roots: [join(root, 'carol')] });
      // A cloud of Bob's over a folder outside his own (connected before a change of grant, or planted) opens nothing.
      const foreign = (await connect(operator.headers, join(root, 'carol'))).data;
      await t.ctx.db.kysely.updateTable('clouds').set({ user_id: bob.uid }).where('id', '=', foreign.id).execute();
      const planted = await list(bob.headers, foreign.id);
      expect([planted.status, planted.code]).toEqual([403, Code.LOCAL_FOLDER_FORBIDDEN]);
      expect(planted.msg).toContain(bobOwn);
      expect(JSON.stringify(planted)).not.toContain('diary');
      await t.ctx.db.kysely.deleteFrom('clouds').where('id', '=', foreign.id).execute();
    });

    it('grant names: one folder per user, plain names only, known users only', async () => {
      const taken = await grant(bob.uid, { granted: true, folder_name: 'Carol' });
      expect([taken.status, taken.code]).toEqual([409, Code.CONFLICT]);
      expect(taken.msg).toContain('Carol');
      for (const folder_name of ['..', '.hidden', 'a/b', '']) {
        const bad = await grant(bob.uid, { granted: true, folder_name });
        expect(bad.status, folder_name).toBe(400);
      }
      expect((await grant('no-such-user', { granted: true })).status).toBe(404);
      // Bob keeps the folder he had.
      expect((await grant(bob.uid, { granted: true })).data.local_folder).toBe(bob.uid);
    });

    it("taking the grant back stops the user's local clouds at once with 403004, never a 5xx", async () => {
      const id = (await call<{ clouds: Cloud[] }>('GET', '/api/v2/clouds/me', bob.headers)).data.clouds[0]?.id ?? '';
      expect((await list(bob.headers, id)).code).toBe(0); // opened, and pooled
      const revoked = await grant(bob.uid, { granted: false });
      expect(revoked.data).toMatchObject({ local_folder: null, local_roots: [] });
      const after = await list(bob.headers, id);
      expect([after.status, after.code]).toEqual([403, Code.LOCAL_FOLDER_FORBIDDEN]);
      expect(after.msg).toContain('Ask the operator');
      const download = await call('GET', `/api/cloud-manager/files?cloud_id=${id}&path=%2Fnotes.txt`, bob.headers);
      expect([download.status, download.code]).toEqual([403, Code.LOCAL_FOLDER_FORBIDDEN]);
      const task = await call('POST', '/api/tasks', bob.headers, {
        task_type: 0,
        from_cloud: { cloud_id: id, paths: ['/notes.txt'] },
        to_cloud: { cloud_id: id, path: '/copy' },
        dry_run: true,
      });
      expect([task.status, task.code]).toEqual([403, Code.LOCAL_FOLDER_FORBIDDEN]);
      expect(await kinds(bob.headers)).toMatchObject({ available: false });
      // The files stay; allowing him again brings the same folder back.
      expect(existsSync(join(root, bob.uid, 'notes.txt'))).toBe(true);
      await grant(bob.uid, { granted: true });
      expect((await list(bob.headers, id)).code).toBe(0);
    });
  });
}

describe('the server never serves its own files through local folders, whatever the roots hold', () => {
  let t: TestApp;
  let base: string;
  let operator: SignedUpUser;
  let cloudId: string;
  const call = client(() => t);

  beforeAll(async () => {
    // The root holds everything: the data dir (with the generated secret) and, beside it, the database.
    base = realpathSync(mkdtempSync(join(tmpdir(), 'skyferry-roots-')));
    mkdirSync(join(base, 'app'));
    t = await startTestApp({
      env: {
        SKYFERRY_LOCAL_ROOTS: base,
        SKYFERRY_DATA_DIR: join(base, 'app', 'data'),
        DATABASE_URL: join(base, 'skyferry.db'),
        SKYFERRY_SECRET: '',
      },
    });
    operator = await t.signUp('owner@example.com', PASSWORD, { operator: false });
    writeFileSync(join(base, 'app', 'readme.txt'), 'hello');
    symlinkSync(join(base, 'app', 'data'), join(base, 'data-link'));
    const res = await call<Cloud>('POST', '/api/clouds', operator.headers, {
      cloud_name: 'local',
      credentials: { path: base },
    });
    expect(res.code).toBe(0);
    cloudId = res.data.id;
  });
  afterAll(async () => {
    await t?.close();
    rmSync(base, { recursive: true, force: true });
  });

  it('the secret and the database exist where the test put them', () => {
    expect(existsSync(join(base, 'app', 'data', 'secret'))).toBe(true);
    expect(existsSync(join(base, 'skyferry.db'))).toBe(true);
  });

  it('lists neither the data dir nor the database files, nor a link to them', async () => {
    const top = await call<{ items: Array<{ name: string }> }>('POST', '/api/cloud-manager/list', operator.headers, {
      cloud_id: cloudId,
      path: '/',
    });
    expect(top.data.items.map((i) => i.name)).toEqual(['app']);
    const app = await call<{ items: Array<{ name: string }> }>('POST', '/api/cloud-manager/list', operator.headers, {
      cloud_id: cloudId,
      path: '/app',
    });
    expect(app.data.items.map((i) => i.name)).toEqual(['readme.txt']);
  });

  it('reads, writes, renames and deletes nothing of them: each call a 4xx', async () => {
    const is4xx = (status: number) => status >= 400 && status < 500;
    for (const path of ['/app/data/secret', '/app/data', '/skyferry.db', '/skyferry.db-wal', '/data-link/secret']) {
      const q = `cloud_id=${cloudId}&path=${encodeURIComponent(path)}`;
      const read = await t.app.inject({
        method: 'GET',
        url: `/api/cloud-manager/files?${q}`,
        headers: operator.headers,
      });
      expect(is4xx(read.statusCode), `GET ${path}`).toBe(true);
      const thumb = await call('GET', `/api/cloud-manager/thumbnail?${q}&size=128`, operator.headers);
      expect(is4xx(thumb.status), `thumbnail ${path}`).toBe(true);
      const listed = await call('POST', '/api/cloud-manager/list', operator.headers, { cloud_id: cloudId, path });
      expect(is4xx(listed.status), `list ${path}`).toBe(true);
      const renamed = await call('POST', '/api/cloud-manager/rename', operator.headers, {
        cloud_id: cloudId,
        path,
        new_name: 'taken',
      });
      expect(is4xx(renamed.status), `rename ${path}`).toBe(true);
      const deleted = await call<{ failed: unknown[] }>('POST', '/api/cloud-manager/delete', operator.headers, {
        cloud_id: cloudId,
        files: [path],
        permanent: true,
      });
      expect(deleted.data.failed, `delete ${path}`).toHaveLength(1);
      const link = await call<{ url: string }>('POST', '/api/cloud-manager/download-link', operator.headers, {
        cloud_id: cloudId,
        paths: [path],
      });
      // No link is issued for what cannot be read; one that were issued must not serve it.
      if (link.code === 0) {
        const viaLink = await t.app.inject({ method: 'GET', url: link.data.url });
        expect(is4xx(viaLink.statusCode), `link ${path}`).toBe(true);
        expect(viaLink.body).not.toContain(t.ctx.config.secret);
      } else {
        expect(is4xx(link.status), `link ${path}`).toBe(true);
      }
    }
    const dl = await t.app.inject({
      method: 'GET',
      url: `/api/cloud-manager/files?cloud_id=${cloudId}&path=${encodeURIComponent('/app/data/secret')}`,
      headers: operator.headers,
    });
    expect(dl.body).not.toContain(t.ctx.config.secret);
    // Into the data dir, and over the database: refused.
    for (const path of ['/app/data/planted.txt', '/app/data/secret', '/skyferry.db', '/app/data/outbox/x.eml']) {
      const put = await t.app.inject({
        method: 'PUT',
        url: `/api/cloud-manager/files?cloud_id=${cloudId}&path=${encodeURIComponent(path)}`,
        headers: { ...operator.headers, 'content-type': 'application/octet-stream' },
        payload: 'overwritten',
      });
      expect(put.statusCode, path).toBe(403);
    }
    expect(existsSync(join(base, 'app', 'data', 'planted.txt'))).toBe(false);
    // Renaming a file to the database's name in its folder, or removing the folder holding the data dir.
    writeFileSync(join(base, 'decoy.db'), 'decoy');
    const rename = await call('POST', '/api/cloud-manager/rename', operator.headers, {
      cloud_id: cloudId,
      path: '/decoy.db',
      new_name: 'skyferry.db',
    });
    expect(rename.status).toBe(403);
    const wipe = await call<{ failed: unknown[] }>('POST', '/api/cloud-manager/delete', operator.headers, {
      cloud_id: cloudId,
      files: ['/app'],
      permanent: true,
    });
    expect(wipe.data.failed).toHaveLength(1);
    const rename2 = await call('POST', '/api/cloud-manager/rename', operator.headers, {
      cloud_id: cloudId,
      path: '/app',
      new_name: 'gone',
    });
    expect(rename2.status).toBe(403);
    expect(existsSync(join(base, 'app', 'data', 'secret'))).toBe(true);
    expect(existsSync(join(base, 'skyferry.db'))).toBe(true);
    expect((await call('GET', '/api/users/me', operator.headers)).code).toBe(0);
  });

  it('connecting the data dir, a folder in it, or a link to it is refused', async () => {
    for (const path of [join(base, 'app', 'data'), join(base, 'app', 'data', 'outbox'), join(base, 'data-link')]) {
      if (path.endsWith('outbox')) mkdirSync(path, { recursive: true });
      const res = await call('POST', '/api/clouds', operator.headers, { cloud_name: 'local', credentials: { path } });
      expect([res.status, res.code], path).toEqual([422, Code.CLOUD_CREDENTIALS_INVALID]);
    }
  });
});

describe('SKYFERRY_ADMIN_EMAILS names operators besides the first account', () => {
  let t: TestApp;
  const call = client(() => t);
  beforeAll(async () => {
    t = await startTestApp({ env: { SKYFERRY_ADMIN_EMAILS: 'someone@example.org, Boss@Example.com' } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('an account of the list is an operator (any case); others are users', async () => {
    const first = await t.signUp('first@example.com', PASSWORD, { operator: false });
    const boss = await t.signUp('BOSS@example.com', PASSWORD, { operator: false });
    const plain = await t.signUp('plain@example.com', PASSWORD, { operator: false });
    expect([first, boss, plain].map((u) => u.data.user_info.role)).toEqual(['operator', 'operator', 'user']);
    const users = await call<OperatorUsersData>('GET', '/api/operator/users', boss.headers);
    expect(users.data.items.map((u) => u.role)).toEqual(['operator', 'operator', 'user']);
    const folder = t.makeLocalFolder();
    expect(
      (await call('POST', '/api/clouds', boss.headers, { cloud_name: 'local', credentials: { path: folder } })).code,
    ).toBe(0);
    expect((await call('GET', '/api/operator/users', plain.headers)).code).toBe(Code.OPERATOR_REQUIRED);
  });
});

describe('the home-folder default applies to a single-user install only', () => {
  let t: TestApp;
  let home: string;
  let savedHome: string | undefined;
  const call = client(() => t);

  beforeAll(async () => {
    // SKYFERRY_LOCAL_ROOTS unset and HOST on loopback: the roots are the server user's home (a stand-in here).
    home = realpathSync(mkdtempSync(join(tmpdir(), 'skyferry-home-')));
    mkdirSync(join(home, 'Documents'));
    writeFileSync(join(home, 'Documents', 'a.txt'), 'a');
    savedHome = process.env.HOME;
    process.env.HOME = home;
    t = await startTestApp({ unset: ['SKYFERRY_LOCAL_ROOTS'], env: { HOST: '127.0.0.1' } });
  });
  afterAll(async () => {
    await t?.close();
    if (savedHome === undefined) delete process.env.HOME;
    else process.env.HOME = savedHome;
    rmSync(home, { recursive: true, force: true });
  });

  it('one account: the operator may use the home folder; a second account ends that, with a clear error', async () => {
    expect(t.ctx.config.localRootsDefault).toBe(true);
    const owner = await t.signUp('me@example.com', PASSWORD, { operator: false });
    const local = async (headers: Record<string, string>) =>
      (await call<SystemCloudKind[]>('GET', '/api/system/clouds', headers)).data.find((k) => k.cloud_name === 'local');
    expect(await local(owner.headers)).toMatchObject({ available: true, roots: [home] });
    const cloud = await call<Cloud>('POST', '/api/clouds', owner.headers, {
      cloud_name: 'local',
      credentials: { path: join(home, 'Documents') },
    });
    expect(cloud.code).toBe(0);
    const listing = () =>
      call<{ items: Array<{ name: string }> }>('POST', '/api/cloud-manager/list', owner.headers, {
        cloud_id: cloud.data.id,
        path: '/',
      });
    expect((await listing()).data.items.map((i) => i.name)).toEqual(['a.txt']);

    const second = await t.signUp('guest@example.com', PASSWORD, { operator: false });
    const now = await local(owner.headers);
    expect(now).toMatchObject({ available: false });
    // The reason speaks to the user, with no environment variable name in it.
    expect(now?.reason).toContain('single account');
    expect(now?.reason).not.toMatch(/SKYFERRY_/);
    const stopped = await listing();
    expect([stopped.status, stopped.code]).toEqual([403, Code.LOCAL_FOLDER_FORBIDDEN]);
    expect(stopped.msg).toContain('single account');
    const refused = await call('POST', '/api/clouds', second.headers, {
      cloud_name: 'local',
      credentials: { path: home },
    });
    expect([refused.status, refused.code]).toEqual([403, Code.LOCAL_FOLDER_FORBIDDEN]);
  });
});
