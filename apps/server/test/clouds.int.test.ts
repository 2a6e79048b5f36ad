import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLOUD_KINDS, Code, type Cloud, type CloudsMeData, type SystemCloudKind } from '@skyferry/contract';
import { openLocal, registeredKinds, registerKind, type ProviderContext } from '@skyferry/providers';
import { startTestApp, type SignedUpUser, type TestApp } from './support/app.ts';
import { LOOPBACK_CLOUDS_ENV, VisitorClouds } from './support/visitor-clouds.ts';

interface Reply<T> {
  status: number;
  code: number;
  msg: string;
  data: T;
}

// Watch what the server hands the local backend (the real one), to check persisted state.
const contexts: ProviderContext[] = [];
registerKind('local', async (credentials, ctx) => {
  contexts.push(ctx);
  return openLocal(credentials, ctx);
});

function client(t: () => TestApp) {
  return async function call<T = unknown>(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    options: { headers?: Record<string, string>; body?: unknown } = {},
  ): Promise<Reply<T>> {
    const res = await t().app.inject({
      method,
      url,
      headers: options.headers,
      ...(options.body === undefined ? {} : { payload: options.body as Record<string, unknown> }),
    });
    return { status: res.statusCode, ...(JSON.parse(res.body) as { code: number; msg: string; data: T }) };
  };
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`clouds registry [${dialect}]`, () => {
    let t: TestApp;
    let u: SignedUpUser;
    const call = client(() => t);
    const connectLocal = (headers: Record<string, string>, path: string, alias?: string) =>
      call<Cloud>('POST', '/api/clouds', {
        headers,
        body: { cloud_name: 'local', ...(alias === undefined ? {} : { alias }), credentials: { path } },
      });
    const list = async (headers: Record<string, string>) =>
      (await call<CloudsMeData>('GET', '/api/v2/clouds/me', { headers })).data.clouds;

    beforeAll(async () => {
      t = await startTestApp({ dialect });
      u = await t.signUp();
    });
    afterAll(async () => {
      await t?.close();
    });

    it('lists every kind with flags, fields and availability', async () => {
      const res = await call<SystemCloudKind[]>('GET', '/api/system/clouds', { headers: u.headers });
      expect(res.code).toBe(0);
      expect(res.data.map((k) => k.cloud_name)).toEqual([...CLOUD_KINDS]);
      const byName = new Map(res.data.map((k) => [k.cloud_name, k]));
      const gd = byName.get('google_drive');
      expect(gd).toMatchObject({ display_name: 'Google Drive', auth: 'oauth', available: false });
      // The reason is for the user: what is missing, in their language, never an environment variable.
      for (const name of ['google_drive', 'onedrive', 'dropbox', 'box'] as const) {
        expect(byName.get(name)?.reason, name).toBe('Not set up on this server.');
      }
      const german = await call<SystemCloudKind[]>('GET', '/api/system/clouds', { headers: { 'x-language': 'de' } });
      expect(german.data.find((k) => k.cloud_name === 'dropbox')?.reason).toBe('Auf diesem Server nicht eingerichtet.');
      for (const kind of [...res.data, ...german.data])
        expect(kind.reason ?? '', kind.cloud_name).not.toMatch(/[A-Z]+_[A-Z_]+/);
      expect(byName.get('local')).toMatchObject({ auth: 'form', available: true, reason: null, roots: [t.localRoot] });
      // Without an account the local folder is not offered (the security tests cover every identity).
      const anonymous = await call<SystemCloudKind[]>('GET', '/api/system/clouds');
      expect(anonymous.data.find((k) => k.cloud_name === 'local')).toMatchObject({ available: false });
      const s3 = byName.get('amazon_s3');
      expect(s3?.fields.map((f) => f.name)).toEqual([
        'bucket',
        'access_key_id',
        'secret_access_key',
        'endpoint',
        'region',
        'path_style',
      ]);
      expect(s3?.fields.find((f) => f.name === 'secret_access_key')).toMatchObject({ secret: true, required: true });
      for (const kind of res.data.filter((k) => k.auth === 'form' && k.cloud_name !== 'local')) {
        expect(kind.available).toBe(registeredKinds().includes(kind.cloud_name));
        expect(kind.reason === null).toBe(kind.available);
      }
    });

    it('connects a local folder after opening it; refuses a duplicate, a folder outside the roots and a missing one', async () => {
      const folder = t.makeLocalFolder('photos');
      const res = await connectLocal(u.headers, folder, '  Holiday photos ');
      expect(res.code).toBe(0);
      expect(res.data).toMatchObject({
        cloud_name: 'local',
        cloud_account: folder,
        cloud_alias_name: 'Holiday photos',
        status: 'authorized',
        type: 0,
        bound: true,
        shared: false,
        photos: false,
      });
      expect(res.data.cloud_id).toMatch(/^[0-9a-f]{32}$/);
      expect(res.data.space).toBeGreaterThan(0);
      expect(JSON.stringify(res.data)).not.toContain('credentials');
      const dup = await connectLocal(u.headers, folder + '/');
      expect([dup.status, dup.code, dup.msg]).toEqual([
        409,
        Code.CLOUD_ALREADY_BOUND,
        'This cloud drive has been bound',
      ]);
      const outside = await connectLocal(u.headers, t.dataDir);
      expect([outside.status, outside.code]).toEqual([422, Code.CLOUD_CREDENTIALS_INVALID]);
      expect(outside.msg).toContain(t.localRoot);
      const missing = await connectLocal(u.headers, join(t.localRoot, 'does-not-exist'));
      expect([missing.code, missing.msg]).toEqual([Code.CLOUD_CREDENTIALS_INVALID, 'The path does not exist.']);
      const empty = await call('POST', '/api/clouds', {
        headers: u.headers,
        body: { cloud_name: 'local', credentials: {} },
      });
      expect([empty.status, empty.msg]).toEqual([400, 'Folder path is required.']);
    });

    it('gives the object-storage messages in order: bucket, access key, secret key', async () => {
      const base = { bucket: 'b', access_key_id: 'AKIA', secret_access_key: 'secret', endpoint: 'http://127.0.0.1:1' };
      const send = (credentials: Record<string, string>) =>
        call('POST', '/api/clouds', { headers: u.headers, body: { cloud_name: 's3_compatible', credentials } });
      const noBucket = await send({ ...base, bucket: '  ' });
      expect([noBucket.status, noBucket.msg]).toEqual([400, 'Bucket Name cannot be empty.']);
      const noKey = await send({ ...base, access_key_id: '' });
      expect(noKey.msg).toBe('Access Key ID cannot be empty.');
      const noSecret = await send({ bucket: 'b', access_key_id: 'AKIA', endpoint: 'http://127.0.0.1:1' });
      expect(noSecret.msg).toBe('Secret Access Key cannot be empty.');
      const all = await call('POST', '/api/clouds', {
        headers: u.headers,
        body: { cloud_name: 'wasabi', credentials: {} },
      });
      expect(all.msg).toBe('Bucket Name cannot be empty.');
    });

    it('refuses unknown kinds and OAuth kinds without a configured client', async () => {
      const unknown = await call('POST', '/api/clouds', {
        headers: u.headers,
        body: { cloud_name: 'floppy', credentials: {} },
      });
      expect([unknown.status, unknown.msg]).toEqual([400, 'Unknown cloud drive type: floppy']);
      const oauth = await call('POST', '/api/clouds', {
        headers: u.headers,
        body: { cloud_name: 'dropbox', credentials: {} },
      });
      expect(oauth.status).toBe(400);
      expect(oauth.msg).toBe('Dropbox is not available on this server: Not set up on this server.');
    });

    it('stores space and alias, reorders, and removes; others ids are not found', async () => {
      const v = await t.signUp();
      const a = (await connectLocal(v.headers, t.makeLocalFolder(), 'A')).data;
      const b = (await connectLocal(v.headers, t.makeLocalFolder(), 'B')).data;
      const c = (await connectLocal(v.headers, t.makeLocalFolder(), 'C')).data;
      expect((await list(v.headers)).map((x) => x.id)).toEqual([a.id, b.id, c.id]);
      const put = await call<Cloud>('PUT', `/api/clouds/${b.id}`, {
        headers: v.headers,
        body: { space: 1000, used_space: 250, alias: 'Bee' },
      });
      expect(put.code).toBe(0);
      expect([put.data.space, put.data.used_space, put.data.cloud_alias_name]).toEqual([1000, 250, 'Bee']);
      const cleared = await call<Cloud>('PUT', `/api/clouds/${b.id}`, { headers: v.headers, body: { alias: '' } });
      expect(cleared.data.cloud_alias_name).toBe('');
      const control = await call('PUT', `/api/clouds/${b.id}`, {
        headers: v.headers,
        body: { alias: 'bad\u0007name' },
      });
      expect(control.status).toBe(400);
      const sort = await call('PUT', '/api/clouds/sort', {
        headers: v.headers,
        body: { sort_val: JSON.stringify([c.id, a.id, b.id]) },
      });
      expect(sort.code).toBe(0);
      expect((await list(v.headers)).map((x) => x.id)).toEqual([c.id, a.id, b.id]);
      // Listing only some keeps the rest after them, in their order.
      await call('PUT', '/api/clouds/sort', { headers: v.headers, body: { sort_val: JSON.stringify([b.id]) } });
      expect((await list(v.headers)).map((x) => x.id)).toEqual([b.id, c.id, a.id]);
      const malformed = await call('PUT', '/api/clouds/sort', { headers: v.headers, body: { sort_val: '[not json' } });
      expect([malformed.status, malformed.msg]).toEqual([400, 'sort_val is invalid.']);
      const foreign = await call('PUT', '/api/clouds/sort', {
        headers: v.headers,
        body: { sort_val: JSON.stringify(['nope', a.id]) },
      });
      expect(foreign.status).toBe(404);
      expect((await list(v.headers)).map((x) => x.id)).toEqual([b.id, c.id, a.id]);
      const del = await call('DELETE', `/api/clouds/${c.id}`, { headers: v.headers });
      expect(del.code).toBe(0);
      expect((await list(v.headers)).map((x) => x.id)).toEqual([b.id, a.id]);
      expect((await call('DELETE', `/api/clouds/${c.id}`, { headers: v.headers })).status).toBe(404);
      const row = await t.ctx.db.kysely.selectFrom('clouds').select('id').where('id', '=', c.id).executeTakeFirst();
      expect(row).toBeUndefined();
    });

    it('marks a cloud expired (kept, with status expired); reauthorising keeps its settings', async () => {
      const v = await t.signUp();
      const folder = t.makeLocalFolder();
      const first = (await connectLocal(v.headers, t.makeLocalFolder(), 'first')).data;
      const cloud = (await connectLocal(v.headers, folder, 'keep me')).data;
      await call('PUT', `/api/clouds/${cloud.id}`, { headers: v.headers, body: { space: 42 } });
      await t.ctx.clouds.markExpired(cloud.id);
      const listed = (await list(v.headers)).find((c) => c.id === cloud.id);
      expect(listed?.status).toBe('expired');
      const identity = { kind: 'user' as const, userId: v.uid };
      await expect(t.ctx.clouds.open(identity, cloud.id)).rejects.toMatchObject({
        code: Code.CLOUD_AUTH_EXPIRED,
        status: 401,
        key: 'cloud_auth_expired',
      });
      const other = await call('PUT', `/api/clouds/${cloud.id}/credentials`, {
        headers: v.headers,
        body: { credentials: { path: t.makeLocalFolder() } },
      });
      expect(other.status).toBe(400);
      const re = await call<Cloud>('PUT', `/api/clouds/${cloud.id}/credentials`, {
        headers: v.headers,
        body: { credentials: { path: folder } },
      });
      expect(re.code).toBe(0);
      expect(re.data).toMatchObject({
        id: cloud.id,
        status: 'authorized',
        cloud_alias_name: 'keep me',
        sort: cloud.sort,
      });
      expect((await list(v.headers)).map((c) => c.id)).toEqual([first.id, cloud.id]);
      const { provider } = await t.ctx.clouds.open(identity, cloud.id);
      expect((await provider.list('/')).entries).toEqual([]);
    });

    it('opens a cloud only for its owner, records use, and persists backend state encrypted', async () => {
      const v = await t.signUp();
      const w = await t.signUp();
      const cloud = (await connectLocal(v.headers, t.makeLocalFolder())).data;
      await t.ctx.db.kysely.updateTable('clouds').set({ last_used_at: 1 }).where('id', '=', cloud.id).execute();
      await expect(t.ctx.clouds.open({ kind: 'user', userId: w.uid }, cloud.id)).rejects.toMatchObject({ status: 404 });
      const before = contexts.length;
      const { cloud: record, provider } = await t.ctx.clouds.open({ kind: 'user', userId: v.uid }, cloud.id);
      expect(record.kind).toBe('local');
      expect(provider.kind).toBe('local');
      const used = await t.ctx.db.kysely
        .selectFrom('clouds')
        .select('last_used_at')
        .where('id', '=', cloud.id)
        .executeTakeFirstOrThrow();
      expect(used.last_used_at).toBeGreaterThan(Date.now() - 60_000);
      const pctx = contexts[before];
      expect(pctx?.localRoots).toEqual([t.localRoot]);
      await pctx?.saveState?.({ host_key: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHostKeyMarker' });
      const row = await t.ctx.db.kysely
        .selectFrom('clouds')
        .select('state_enc')
        .where('id', '=', cloud.id)
        .executeTakeFirstOrThrow();
      expect(row.state_enc).toMatch(/^v1\./);
      expect(row.state_enc).not.toContain('HostKeyMarker');
      await t.ctx.clouds.open({ kind: 'user', userId: v.uid }, cloud.id);
      expect(contexts.at(-1)?.state).toEqual({ host_key: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHostKeyMarker' });
    });

    it('leaves out clouds of unknown kinds', async () => {
      const v = await t.signUp();
      const cloud = (await connectLocal(v.headers, t.makeLocalFolder())).data;
      await t.ctx.db.kysely.updateTable('clouds').set({ kind: 'retired_kind' }).where('id', '=', cloud.id).execute();
      expect(await list(v.headers)).toEqual([]);
    });
  });
}

describe('cloud limits with billing on (test mode)', () => {
  let t: TestApp;
  let dav: VisitorClouds;
  const call = client(() => t);
  beforeAll(async () => {
    [t, dav] = await Promise.all([
      startTestApp({ env: { BILLING_MODE: 'test', ...LOOPBACK_CLOUDS_ENV } }),
      VisitorClouds.start(),
    ]);
  });
  afterAll(async () => {
    await t?.close();
    await dav?.stop();
  });

  it('a free account connects 5 clouds; a licensed one 20; then the maximum message', async () => {
    const u = await t.signUp();
    const me = await call<{ user_info: { type: number; is_paid: boolean } }>('GET', '/api/users/me', {
      headers: u.headers,
    });
    expect(me.data.user_info).toMatchObject({ type: 0, is_paid: false });
    expect(await t.ctx.users.isPremium(u.uid)).toBe(false);
    const add = () =>
      call('POST', '/api/clouds', {
        headers: u.headers,
        body: { cloud_name: 'local', credentials: { path: t.makeLocalFolder() } },
      });
    for (let i = 0; i < 5; i++) expect((await add()).code).toBe(0);
    const sixth = await add();
    expect([sixth.status, sixth.code]).toEqual([403, Code.CLOUD_LIMIT_REACHED]);
    expect(sixth.msg).toBe('A free account can connect up to 5 cloud drives. Upgrade to connect more.');
    await t.ctx.users.grantLicense(u.uid, 'month');
    expect(await t.ctx.users.isPremium(u.uid)).toBe(true);
    for (let i = 5; i < 20; i++) expect((await add()).code).toBe(0);
    const over = await add();
    expect([over.code, over.msg]).toEqual([
      Code.CLOUD_LIMIT_REACHED,
      "You've reached the maximum number of cloud drives, please arrange them in Management.",
    ]);
  });

  it('a visitor on a billed server keeps at most 5 temporary clouds', async () => {
    const v = await t.visitor();
    const add = async () => dav.tryConnect(t, v.headers, await dav.folder());
    for (let i = 0; i < 5; i++) expect((await add()).code).toBe(0);
    expect((await add()).code).toBe(Code.CLOUD_LIMIT_REACHED);
  });

  it('binding respects a free account’s room', async () => {
    const u = await t.signUp();
    for (let i = 0; i < 4; i++) {
      await call('POST', '/api/clouds', {
        headers: u.headers,
        body: { cloud_name: 'local', credentials: { path: t.makeLocalFolder() } },
      });
    }
    const v = await t.visitor();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await dav.connect(t, v.headers)).id);
    const bind = await call<{ bound: string[]; discarded: string[] }>('POST', '/api/clouds/bind', {
      headers: { ...u.headers, ...v.headers },
      body: { relation_id: ids.join(','), sign_in_nonce: u.signInNonce },
    });
    expect(bind.data.bound).toHaveLength(1);
    expect(bind.data.discarded).toHaveLength(2);
  });
});

describe('OAuth kinds with a configured client', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      env: { GOOGLE_CLIENT_ID: 'id.apps.example', GOOGLE_CLIENT_SECRET: 'client-secret-value' },
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('no longer names the missing client; availability then depends on the backend', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/system/clouds' });
    const kinds = (JSON.parse(res.body) as { data: SystemCloudKind[] }).data;
    for (const name of ['google_drive', 'google_drive_shared', 'google_photos'] as const) {
      const kind = kinds.find((k) => k.cloud_name === name);
      expect(kind?.reason ?? '').not.toBe('Not set up on this server.');
      expect(kind?.available).toBe(registeredKinds().includes(name));
    }
    expect(kinds.find((k) => k.cloud_name === 'onedrive')?.reason).toBe('Not set up on this server.');
    expect(t.logs()).not.toContain('client-secret-value');
  });
});
