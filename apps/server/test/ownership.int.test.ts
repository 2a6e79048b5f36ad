/**
 * Ownership: every user-owned endpoint, called by someone else against the first user's
 * resources, answers "not found" (or "please log in" for a visitor on a signed-in-only call), and
 * nothing of the owner's changes. To cover a new endpoint, append one entry to OWNED_ENDPOINTS
 * (and, when it needs a resource of its own, a SETUPS entry that creates it as the owner and an
 * OWNED_TABLES entry so the snapshot sees its rows).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code } from '@skyferry/contract';
import { sql } from '@skyferry/db';
import { startTestApp, type SignedUpUser, type TestApp, type TestVisitor } from './support/app.ts';
import { LOOPBACK_CLOUDS_ENV, VisitorClouds } from './support/visitor-clouds.ts';

/** The owner's side: a signed-up user and a visitor (the same person before signing in). */
export interface Owner {
  user: SignedUpUser;
  visitor: TestVisitor;
}

export interface SetupContext {
  t: TestApp;
  owner: Owner;
  /** Where the owner's visitor connects a temporary cloud (visitors get no local folders). */
  dav: VisitorClouds;
  /** Sends a request as the owner (user headers plus the visitor header); throws unless code 0. */
  asOwner<T>(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    body?: unknown,
    as?: 'user' | 'visitor',
  ): Promise<T>;
}

/** Resources the owner creates before the walk; each returns an id stored under its key. */
/** The checkout id of the owner's order (buying, issue 38). */
const ORDER_CHECKOUT = 'tc_ownership-order-checkout-id';

export const SETUPS: Record<string, (s: SetupContext) => Promise<string>> = {
  cloud: async (s) =>
    (
      await s.asOwner<{ id: string }>('POST', '/api/clouds', {
        cloud_name: 'local',
        alias: 'owner cloud',
        credentials: { path: s.t.makeLocalFolder() },
      })
    ).id,
  tempCloud: async (s) => (await s.dav.connect(s.t, s.owner.visitor.headers, { alias: 'owner temp' })).id,
  /** A resumable upload the owner opened on a cloud of theirs (file calls, issue 8). */
  upload: async (s) => {
    const me = await s.asOwner<{ clouds: Array<{ id: string }> }>('GET', '/api/v2/clouds/me');
    return (
      await s.asOwner<{ upload_id: string }>('POST', '/api/cloud-manager/uploads', {
        cloud_id: me.clouds[0]?.id,
        path: '/owner.bin',
        size: 10,
      })
    ).upload_id;
  },
  /** An image in the owner's cloud, so a refused thumbnail is refused for ownership, not for a missing file. */
  photo: async (s) => {
    const me = await s.asOwner<{ clouds: Array<{ id: string }> }>('GET', '/api/v2/clouds/me');
    const res = await s.t.app.inject({
      method: 'PUT',
      url: `/api/cloud-manager/files?cloud_id=${me.clouds[0]?.id}&path=/photo.png`,
      headers: { ...s.owner.user.headers, 'content-type': 'application/octet-stream' },
      payload: Buffer.from('not really a png'),
    });
    if (JSON.parse(res.body).code !== 0) throw new Error(`setup upload failed: ${res.body}`);
    return '/photo.png';
  },
  /** A clean-up scan of the owner's cloud (issue 10); without workers it stays queued. */
  cleanup: async (s) => {
    const me = await s.asOwner<{ clouds: Array<{ id: string }> }>('GET', '/api/v2/clouds/me');
    return (await s.asOwner<{ task_id: string }>('POST', '/api/cleanup/run', { cloud_id: me.clouds[0]?.id })).task_id;
  },
  /** A scheduled task between two folders of the owner's cloud (issue 6); it waits for next year. */
  task: async (s) => {
    const me = await s.asOwner<{ clouds: Array<{ id: string }> }>('GET', '/api/v2/clouds/me');
    const cloudId = me.clouds[0]?.id;
    await s.asOwner('POST', '/api/cloud-manager/mkdir', { cloud_id: cloudId, folder_name: 'TaskSource' });
    const next = new Date(Date.now() + 365 * 86_400_000).toISOString().slice(0, 19).replace('T', ' ');
    const created = await s.asOwner<{ task: { id: string } }>('POST', '/api/tasks', {
      task_type: 0,
      from_cloud: { cloud_id: cloudId, paths: ['/TaskSource'] },
      to_cloud: { cloud_id: cloudId, path: '/TaskTarget' },
      confirm_same_cloud: true,
      schedule: { start_date: next, repeat_type: 0 },
    });
    return created.task.id;
  },
  /** A verification of the owner's task (the Tasks page, issue 35): a run in its history, queued. */
  run: async (s) => {
    const tasks = await s.asOwner<{ items: Array<{ id: string }> }>('POST', '/api/tasks/list', { page: 1 });
    const taskId = tasks.items[0]?.id ?? '';
    return (await s.asOwner<{ id: string }>('POST', `/api/tasks/${taskId}/verify`)).id;
  },
  /** An export into the owner's cloud (issue 37), finished before the walk. */
  export: async (s) => {
    const me = await s.asOwner<{ clouds: Array<{ id: string }> }>('GET', '/api/v2/clouds/me');
    const started = await s.asOwner<{ task_id: string }>('POST', '/api/third-api/start-upload', {
      token_id: me.clouds[0]?.id,
      file_name: 'exported.txt',
      parent: '/TaskSource',
      base64_data: Buffer.from('exported').toString('base64'),
    });
    for (let i = 0; i < 100; i += 1) {
      const p = await s.asOwner<{ status: number }>('GET', `/api/third-api/poll-progress/${started.task_id}`);
      if (p.status !== 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    return started.task_id;
  },
  /** One of the owner's signed-in devices (Settings > Account). */
  session: async (s) =>
    (await s.asOwner<{ items: Array<{ id: string }> }>('GET', '/api/account/sessions')).items[0]?.id ?? '',
  /** A token the owner handed the editor for a note of theirs (apps, issue 37); the owner also used the app. */
  appToken: async (s) => {
    const me = await s.asOwner<{ clouds: Array<{ id: string }> }>('GET', '/api/v2/clouds/me');
    const cloudId = me.clouds[0]?.id ?? '';
    const res = await s.t.app.inject({
      method: 'PUT',
      url: `/api/cloud-manager/files?cloud_id=${cloudId}&path=/owner-note.md`,
      headers: { ...s.owner.user.headers, 'content-type': 'application/octet-stream' },
      payload: Buffer.from('# owner'),
    });
    if (JSON.parse(res.body).code !== 0) throw new Error(`setup upload failed: ${res.body}`);
    await s.asOwner('PUT', '/ecology/v1/apps/usage/2');
    return (
      await s.asOwner<{ token: string }>('POST', '/ecology/v1/app-tokens', {
        app_id: 2,
        files: [{ cloud_id: cloudId, path: '/owner-note.md' }],
      })
    ).token;
  },
  /** An office-type app (state 2) the owner, as the operator, registered for Markdown files (issue 37). */
  officeApp: async (s) =>
    String(
      (
        await s.asOwner<{ app_id: number }>('POST', '/api/operator/apps', {
          name: 'Docs',
          url: 'https://office.example.com/editor/',
          state: 2,
          functions: [{ name: 'Edit', action: 'edit', extensions: ['md'] }],
        })
      ).app_id,
    ),
  /** A feedback ticket the owner sent signed in (support, issue 39). */
  ticket: async (s) =>
    (
      await s.asOwner<{ id: string }>('POST', '/v1/support/tickets?channel=3', {
        email: s.owner.user.email,
        contents: 'owner feedback',
        custom_fields: [{ id: 1, value: 'other' }],
      })
    ).id,
  /** An order of the owner's from the built-in test checkout (buying, issue 38). */
  order: async (s) => {
    const now = Date.now();
    await s.t.ctx.db.kysely
      .insertInto('billing_orders')
      .values({
        id: 'ownership-order',
        user_id: s.owner.user.uid,
        product: 'month',
        amount: 999,
        currency: 'USD',
        provider: 'test',
        status: 'paid',
        checkout_id: ORDER_CHECKOUT,
        subscription_id: null,
        payment_id: null,
        license_id: null,
        packet_id: null,
        paid_at: now,
        created_at: now,
        updated_at: now,
      })
      .execute();
    return 'ownership-order';
  },
};

export interface AttackerRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  body?: unknown;
}

export interface OwnedEndpoint {
  name: string;
  /** The request the other party sends, built from the owner's resource ids (SETUPS keys). */
  request: (ids: Record<string, string>, attacker: { folder: string }) => AttackerRequest;
  /**
   * For listing endpoints: instead of expecting 404, check the answer (it must not show the
   * owner's resources). Leave out to expect "not found".
   */
  check?: (body: { code: number; data: unknown }, ids: Record<string, string>) => void;
}

export const OWNED_ENDPOINTS: OwnedEndpoint[] = [
  // Apps (issue 37).
  {
    name: 'POST /ecology/v1/app-tokens (a file of someone else’s cloud)',
    request: (ids) => ({
      method: 'POST',
      url: '/ecology/v1/app-tokens',
      body: { app_id: 1, files: [{ cloud_id: ids.cloud, path: '/owner-note.md' }] },
    }),
  },
  {
    name: 'POST /ecology/v1/app-tokens/revoke (someone else’s token: left alone)',
    request: (ids) => ({ method: 'POST', url: '/ecology/v1/app-tokens/revoke', body: { token: ids.appToken } }),
    check: (body) => expect(body.code).toBe(0),
  },
  {
    name: 'GET /ecology/v1/apps/me',
    request: () => ({ method: 'GET', url: '/ecology/v1/apps/me' }),
    check: (body) => expect(body.data).toEqual({ items: [] }),
  },
  {
    name: 'PUT /api/clouds/{id} (rename, space)',
    request: (ids) => ({
      method: 'PUT',
      url: `/api/clouds/${ids.cloud}`,
      body: { alias: 'pwned', space: 1, used_space: 1 },
    }),
  },
  {
    name: 'PUT /api/clouds/{id} on a temporary cloud',
    request: (ids) => ({ method: 'PUT', url: `/api/clouds/${ids.tempCloud}`, body: { alias: 'pwned' } }),
  },
  {
    name: 'PUT /api/clouds/{id}/credentials (reauthorize)',
    request: (ids, a) => ({
      method: 'PUT',
      url: `/api/clouds/${ids.cloud}/credentials`,
      body: { credentials: { path: a.folder } },
    }),
  },
  { name: 'DELETE /api/clouds/{id}', request: (ids) => ({ method: 'DELETE', url: `/api/clouds/${ids.cloud}` }) },
  {
    name: 'DELETE /api/clouds/{id} on a temporary cloud',
    request: (ids) => ({ method: 'DELETE', url: `/api/clouds/${ids.tempCloud}` }),
  },
  {
    name: 'PUT /api/clouds/sort',
    request: (ids) => ({ method: 'PUT', url: '/api/clouds/sort', body: { sort_val: JSON.stringify([ids.cloud]) } }),
  },
  {
    name: 'POST /api/clouds/bind (someone else’s temporary cloud)',
    request: (ids) => ({ method: 'POST', url: '/api/clouds/bind', body: { relation_id: ids.tempCloud } }),
  },
  {
    name: 'GET /api/v2/clouds/me',
    request: () => ({ method: 'GET', url: '/api/v2/clouds/me' }),
    check: (body, ids) => {
      const text = JSON.stringify(body.data ?? null);
      expect(text).not.toContain(ids.cloud);
      expect(text).not.toContain(ids.tempCloud);
    },
  },
  // File calls (issue 8): every one names the owner's cloud (or upload) and must answer "not found".
  {
    name: 'POST /api/cloud-manager/list',
    request: (ids) => ({ method: 'POST', url: '/api/cloud-manager/list', body: { cloud_id: ids.cloud, path: '/' } }),
  },
  {
    name: 'POST /api/cloud-manager/list (token_id)',
    request: (ids) => ({ method: 'POST', url: '/api/cloud-manager/list', body: { token_id: ids.tempCloud } }),
  },
  {
    name: 'POST /api/cloud-manager/mkdir',
    request: (ids) => ({
      method: 'POST',
      url: '/api/cloud-manager/mkdir',
      body: { cloud_id: ids.cloud, folder_name: 'pwned', not_allow_conflict: true },
    }),
  },
  {
    name: 'POST /api/cloud-manager/rename',
    request: (ids) => ({
      method: 'POST',
      url: '/api/cloud-manager/rename',
      body: { cloud_id: ids.cloud, path: '/x', new_name: 'pwned' },
    }),
  },
  {
    name: 'POST /api/cloud-manager/delete',
    request: (ids) => ({
      method: 'POST',
      url: '/api/cloud-manager/delete',
      body: { cloud_id: ids.cloud, files: ['/x'] },
    }),
  },
  {
    name: 'POST /api/cloud-manager/info',
    request: (ids) => ({ method: 'POST', url: '/api/cloud-manager/info', body: { cloud_id: ids.cloud } }),
  },
  {
    name: 'POST /api/cloud-manager/trash/list',
    request: (ids) => ({ method: 'POST', url: '/api/cloud-manager/trash/list', body: { cloud_id: ids.cloud } }),
  },
  {
    name: 'POST /api/cloud-manager/trash/restore',
    request: (ids) => ({
      method: 'POST',
      url: '/api/cloud-manager/trash/restore',
      body: { cloud_id: ids.cloud, ids: ['anything'] },
    }),
  },
  {
    name: 'POST /api/cloud-manager/trash/delete',
    request: (ids) => ({
      method: 'POST',
      url: '/api/cloud-manager/trash/delete',
      body: { cloud_id: ids.cloud, ids: ['anything'] },
    }),
  },
  {
    name: 'POST /api/cloud-manager/trash/empty',
    request: (ids) => ({ method: 'POST', url: '/api/cloud-manager/trash/empty', body: { cloud_id: ids.cloud } }),
  },
  {
    name: 'POST /api/cloud-manager/search',
    request: (ids) => ({
      method: 'POST',
      url: '/api/cloud-manager/search',
      body: { cloud_id: ids.cloud, path: '/', query: 'a' },
    }),
  },
  {
    name: 'PUT /api/cloud-manager/files (upload)',
    request: (ids) => ({
      method: 'PUT',
      url: `/api/cloud-manager/files?cloud_id=${ids.cloud}&path=/pwned.txt`,
      body: 'pwned',
    }),
  },
  {
    name: 'GET /api/cloud-manager/files (download)',
    request: (ids) => ({ method: 'GET', url: `/api/cloud-manager/files?cloud_id=${ids.cloud}&path=/` }),
  },
  {
    name: 'POST /api/cloud-manager/download-link',
    request: (ids) => ({
      method: 'POST',
      url: '/api/cloud-manager/download-link',
      body: { cloud_id: ids.cloud, paths: ['/'] },
    }),
  },
  {
    name: 'POST /api/cloud-manager/uploads (open on their cloud)',
    request: (ids) => ({
      method: 'POST',
      url: '/api/cloud-manager/uploads',
      body: { cloud_id: ids.cloud, path: '/pwned.bin', size: 1 },
    }),
  },
  {
    name: 'GET /api/cloud-manager/thumbnail',
    request: (ids) => ({ method: 'GET', url: `/api/cloud-manager/thumbnail?cloud_id=${ids.cloud}&path=${ids.photo}` }),
  },
  ...(['list', 'create', 'add', 'items'] as const).map((call): OwnedEndpoint => ({
    name: `POST /api/cloud-manager/albums/${call}`,
    request: (ids) => ({
      method: 'POST',
      url: `/api/cloud-manager/albums/${call}`,
      body: { cloud_id: ids.cloud, title: 'Stolen', album_id: 'a1', files: ['/photo.png'] },
    }),
  })),
  {
    name: 'GET /api/cloud-manager/uploads/{id}',
    request: (ids) => ({ method: 'GET', url: `/api/cloud-manager/uploads/${ids.upload}` }),
  },
  {
    name: 'PUT /api/cloud-manager/uploads/{id} (a part)',
    request: (ids) => ({ method: 'PUT', url: `/api/cloud-manager/uploads/${ids.upload}?offset=0`, body: '0123456789' }),
  },
  {
    name: 'POST /api/cloud-manager/uploads/{id}/complete',
    request: (ids) => ({ method: 'POST', url: `/api/cloud-manager/uploads/${ids.upload}/complete` }),
  },
  {
    name: 'DELETE /api/cloud-manager/uploads/{id}',
    request: (ids) => ({ method: 'DELETE', url: `/api/cloud-manager/uploads/${ids.upload}` }),
  },
  {
    name: 'POST /api/cleanup/run (someone else’s cloud)',
    request: (ids) => ({ method: 'POST', url: '/api/cleanup/run', body: { cloud_id: ids.cloud } }),
  },
  {
    name: 'GET /api/cleanup/poll-progress/{task_id}',
    request: (ids) => ({ method: 'GET', url: `/api/cleanup/poll-progress/${ids.cleanup}` }),
  },
  {
    name: 'DELETE /api/cleanup/task/{task_id} (cancel)',
    request: (ids) => ({ method: 'DELETE', url: `/api/cleanup/task/${ids.cleanup}` }),
  },
  ...(['empty-folders', 'duplicate-files', 'large-files'] as const).flatMap((list): OwnedEndpoint[] => [
    {
      name: `GET /api/cleanup/${list}`,
      request: (ids) => ({ method: 'GET', url: `/api/cleanup/${list}?task_id=${ids.cleanup}` }),
    },
    {
      name: `DELETE /api/cleanup/${list}`,
      request: (ids) => ({
        method: 'DELETE',
        url: `/api/cleanup/${list}`,
        body: { task_id: ids.cleanup, all: true },
      }),
    },
  ]),
  {
    name: 'GET /api/cleanup/task',
    request: () => ({ method: 'GET', url: '/api/cleanup/task' }),
    check: (body, ids) => {
      expect(JSON.stringify(body.data ?? null)).not.toContain(ids.cleanup);
    },
  },
  // Server tasks (issue 6).
  {
    name: 'POST /api/tasks (someone else’s cloud)',
    request: (ids) => ({
      method: 'POST',
      url: '/api/tasks',
      body: {
        task_type: 0,
        from_cloud: { cloud_id: ids.cloud, paths: ['/TaskSource'] },
        to_cloud: { cloud_id: ids.cloud, path: '/Stolen' },
        confirm_same_cloud: true,
      },
    }),
  },
  {
    name: 'POST /api/tasks (dry run on someone else’s cloud)',
    request: (ids) => ({
      method: 'POST',
      url: '/api/tasks',
      body: {
        task_type: 0,
        from_cloud: { cloud_id: ids.cloud, paths: ['/'] },
        to_cloud: { cloud_id: ids.cloud, path: '/x' },
        dry_run: true,
      },
    }),
  },
  {
    name: 'POST /api/tasks/list',
    request: () => ({ method: 'POST', url: '/api/tasks/list', body: { page: 1, page_size: 100, completed: 0 } }),
    check: (body, ids) => {
      expect(JSON.stringify(body.data ?? null)).not.toContain(ids.task);
    },
  },
  { name: 'GET /api/tasks/{id}', request: (ids) => ({ method: 'GET', url: `/api/tasks/${ids.task}` }) },
  {
    name: 'PUT /api/tasks/{id} (schedule off)',
    request: (ids) => ({ method: 'PUT', url: `/api/tasks/${ids.task}`, body: { is_schedule: 1 } }),
  },
  { name: 'GET /api/tasks/run/{id}', request: (ids) => ({ method: 'GET', url: `/api/tasks/run/${ids.task}` }) },
  { name: 'GET /api/tasks/retry/{id}', request: (ids) => ({ method: 'GET', url: `/api/tasks/retry/${ids.task}` }) },
  { name: 'DELETE /api/tasks/{id}', request: (ids) => ({ method: 'DELETE', url: `/api/tasks/${ids.task}` }) },
  // OAuth (issue 11): reauthorizing names a cloud. The owner's own local cloud would get "invalid
  // cloud_id" (not an OAuth cloud); anyone else's, "not found", before anything is checked or issued.
  {
    name: 'POST /api/clouds/oauth/start (reauthorize someone else’s cloud)',
    request: (ids) => ({
      method: 'POST',
      url: '/api/clouds/oauth/start',
      body: { cloud_name: 'google_drive', cloud_id: ids.cloud },
    }),
  },
  {
    name: 'POST /api/clouds/oauth/start (reauthorize someone else’s temporary cloud)',
    request: (ids) => ({
      method: 'POST',
      url: '/api/clouds/oauth/start',
      body: { cloud_name: 'google_drive', cloud_id: ids.tempCloud },
    }),
  },
  {
    name: 'GET /api/cloud-manager/poll-progress/{task_id}',
    request: (ids) => ({ method: 'GET', url: `/api/cloud-manager/poll-progress/${ids.task}` }),
  },
  {
    name: 'DELETE /api/cloud-manager/cancel-transfer',
    request: (ids) => ({ method: 'DELETE', url: `/api/cloud-manager/cancel-transfer?task_id=${ids.task}` }),
  },
  // The Tasks page (issue 35): runs, their files and logs, Verify, Edit, the plan of an edit, Duplicate.
  { name: 'GET /api/tasks/{id}/runs', request: (ids) => ({ method: 'GET', url: `/api/tasks/${ids.task}/runs` }) },
  {
    name: 'GET /api/tasks/{id}/runs/{run_id}',
    request: (ids) => ({ method: 'GET', url: `/api/tasks/${ids.task}/runs/${ids.run}` }),
  },
  {
    name: 'GET /api/tasks/{id}/runs/{run_id}/files',
    request: (ids) => ({ method: 'GET', url: `/api/tasks/${ids.task}/runs/${ids.run}/files?q=Task` }),
  },
  {
    name: 'GET /api/tasks/{id}/runs/{run_id}/log',
    request: (ids) => ({ method: 'GET', url: `/api/tasks/${ids.task}/runs/${ids.run}/log?format=jsonl` }),
  },
  { name: 'POST /api/tasks/{id}/verify', request: (ids) => ({ method: 'POST', url: `/api/tasks/${ids.task}/verify` }) },
  {
    name: 'DELETE /api/tasks/{id}/verify',
    request: (ids) => ({ method: 'DELETE', url: `/api/tasks/${ids.task}/verify` }),
  },
  {
    name: 'PUT /api/tasks/{id} (edit)',
    request: (ids) => ({
      method: 'PUT',
      url: `/api/tasks/${ids.task}`,
      body: { task_name: 'pwned', same_name_policy: 'overwrite', schedule: null },
    }),
  },
  {
    name: 'POST /api/tasks/{id}/plan',
    request: (ids) => ({ method: 'POST', url: `/api/tasks/${ids.task}/plan`, body: { same_name_policy: 'overwrite' } }),
  },
  {
    name: 'POST /api/tasks/{id}/duplicate',
    request: (ids) => ({ method: 'POST', url: `/api/tasks/${ids.task}/duplicate` }),
  },
  // Exports (issue 37).
  {
    name: 'POST /api/third-api/start-upload (into someone else’s cloud)',
    request: (ids) => ({
      method: 'POST',
      url: '/api/third-api/start-upload',
      body: { token_id: ids.cloud, file_name: 'pwned.txt', base64_data: 'cHduZWQ=' },
    }),
  },
  {
    name: 'GET /api/third-api/poll-progress/{taskId}',
    request: (ids) => ({ method: 'GET', url: `/api/third-api/poll-progress/${ids.export}` }),
  },
  {
    name: 'POST /api/wopi/sessions (a document of someone else’s cloud)',
    request: (ids) => ({
      method: 'POST',
      url: '/api/wopi/sessions',
      body: { cloud_id: ids.cloud, path: ids.photo },
    }),
  },
  {
    name: 'POST /ecology/v1/office/open (a file of someone else’s cloud)',
    request: (ids) => ({
      method: 'POST',
      url: '/ecology/v1/office/open',
      body: { app_id: Number(ids.officeApp), cloud_id: ids.cloud, path: '/owner-note.md' },
    }),
  },
  {
    name: 'DELETE /api/account/sessions/{id}',
    request: (ids) => ({ method: 'DELETE', url: `/api/account/sessions/${ids.session}` }),
  },
  // Buying (issue 38).
  {
    name: 'POST /api/billing/orders/{id}/refund',
    request: (ids) => ({ method: 'POST', url: `/api/billing/orders/${ids.order}/refund` }),
  },
  {
    name: 'GET /api/billing/test-checkout',
    request: () => ({ method: 'GET', url: `/api/billing/test-checkout?checkout=${ORDER_CHECKOUT}` }),
  },
  {
    name: 'POST /api/billing/test-checkout',
    request: () => ({
      method: 'POST',
      url: '/api/billing/test-checkout',
      body: { checkout: ORDER_CHECKOUT, action: 'decline' },
    }),
  },
  {
    name: 'GET /api/billing/orders',
    request: () => ({ method: 'GET', url: '/api/billing/orders' }),
    check: (body, ids) => {
      expect(JSON.stringify(body.data)).not.toContain(ids.order);
    },
  },
  {
    name: 'GET /api/support/tickets',
    request: () => ({ method: 'GET', url: '/api/support/tickets' }),
    check: (body, ids) => {
      const items = (body.data as { items: Array<{ id: string }> }).items;
      expect(items.map((i) => i.id)).not.toContain(ids.ticket);
    },
  },
];

/**
 * Every other documented call, and why it needs no walk: it names no resource by id (it acts on the
 * caller's own identity), or creates one. The coverage test fails when a call is in neither list.
 */
export const NOT_OWNED: Record<string, string> = {
  'GET /healthz': 'liveness, no data',
  'GET /api/v2/init': 'public start-up data; the visitor token is the caller’s own',
  'GET /api/token': 'issues a new visitor identity',
  'POST /api/account/signup': 'creates an account',
  'POST /api/account/login': 'signs in with a password',
  'POST /api/v2/authorizations': 'grants need the caller’s own refresh or auto-login token',
  'POST /api/account/logout': 'ends the session of the token given',
  'GET /api/account/logout': 'ends the session of the token given',
  'GET /api/users/me': 'the caller’s own account',
  'POST /api/users/notify-email': 'the caller’s own account',
  'GET /api/system/clouds': "the list of kinds; the local kind names the caller's own folders only",
  'POST /api/clouds': 'creates a cloud for the caller',
  'GET /api/clouds/oauth/callback':
    'the owner is sealed in the state (and the browser bound by a cookie); see oauth.int.test.ts',
  'POST /api/account/password': 'the caller’s own account (its current password required)',
  'POST /api/account/email': 'the caller’s own account (its current password required)',
  'POST /api/account/email/confirm': 'the single-use link mailed to the new address names the account',
  'POST /api/account/password/forgot': 'answers the same whether or not the address has an account',
  'POST /api/account/password/reset': 'the single-use link mailed to the account names it',
  'GET /api/account/sessions': 'the caller’s own devices',
  'POST /api/account/sessions/revoke-others': 'the caller’s own devices',
  'POST /api/account/delete': 'the caller’s own account (its current password required)',
  'GET /ecology/v1/apps': 'the public app registry',
  'GET /ecology/v1/apps/{appId}': 'one app of the public registry',
  'PUT /ecology/v1/apps/usage/{appId}': 'records the caller’s own use of an app',
  'GET /api/operator/apps': 'the server-wide app registry, the operator’s alone (403005 for anyone else)',
  'POST /api/operator/apps': 'registers a server-wide app (operator only)',
  'PUT /api/operator/apps/{appId}': 'a server-wide app, not anyone’s (operator only)',
  'DELETE /api/operator/apps/{appId}': 'a server-wide app, not anyone’s (operator only)',
  'GET /ecology/v1/app/files':
    'authenticated by an app token only, which names its own files; see ecology.int.test.ts and security/hostile-app',
  'GET /ecology/v1/app/files/{fileId}':
    'an app token’s own file (account tokens answer 140013); see ecology.int.test.ts',
  'GET /ecology/v1/app/files/{fileId}/content': 'an app token’s own file; see ecology.int.test.ts',
  'PUT /ecology/v1/app/files/{fileId}/content': 'an app token’s own file; see ecology.int.test.ts',
  'POST /ecology/v1/app/files/{fileId}/save-as': 'beside an app token’s own file; see ecology.int.test.ts',
  'POST /ecology/v1/app/files/{fileId}/convert': 'beside an app token’s own file; see ecology.int.test.ts',
  'GET /ecology/v1/app/files/{fileId}/picture': 'an app token’s own file; see pictures.int.test.ts',
  'GET /api/operator/users': 'the operator’s alone (403005 for anyone else); see security/local-folders.int.test.ts',
  'PUT /api/operator/users/{uid}/local-folder':
    'the operator’s alone (403005 for anyone else); see security/local-folders.int.test.ts',
  'GET /v1/support/forms/dynamic': 'the same form for everyone',
  'POST /v1/support/tickets': 'creates a ticket for the caller',
  'GET /api/operator/tickets': 'the operator’s alone (403005 for anyone else); see support-tickets.int.test.ts',
  'GET /api/operator/tickets/{id}': 'the operator’s alone (403005 for anyone else); see support-tickets.int.test.ts',
  'POST /api/operator/tickets/{id}/reply':
    'the operator’s alone (403005 for anyone else); see support-tickets.int.test.ts',
  'GET /api/operator/tickets/{id}/attachments/{attachment_id}':
    'the operator’s alone (403005 for anyone else); see support-tickets.int.test.ts',
  'PUT /api/operator/tickets/{id}/status':
    'the operator’s alone (403005 for anyone else); see support-tickets.int.test.ts',
  'GET /api/version/{version}': 'public release notes',
  'GET /api/billing/offers': 'the same offers for everyone',
  'POST /api/billing/checkout': 'creates an order for the caller',
  'POST /api/billing/cancel': 'the caller’s own licence',
  'POST /api/billing/portal': 'the caller’s own customer at the provider',
  'POST /api/billing/webhook/stripe':
    'signed by the provider; names orders by their provider ids (billing-stripe.int.test.ts)',
  'GET /api/billing/survey': 'the caller’s own answers',
  'POST /api/billing/survey': 'the caller’s own answers',
  'PUT /api/operator/users/{uid}/plan': 'the operator’s alone (403005 for anyone else); see billing.int.test.ts',
  'DELETE /api/operator/users/{uid}/plan': 'the operator’s alone (403005 for anyone else); see billing.int.test.ts',
  'GET /api/operator/billing/usage': 'the operator’s alone (403005 for anyone else); see billing.int.test.ts',
  'GET /api/operator/billing/audit': 'the operator’s alone (403005 for anyone else); see billing.int.test.ts',
  'GET /wopi/files/{file_id}': 'WOPI: the access_token names one file of one user; see wopi.int.test.ts',
  'GET /wopi/files/{file_id}/contents': 'WOPI: the access_token names one file of one user; see wopi.int.test.ts',
  'POST /wopi/files/{file_id}/contents': 'WOPI: the access_token names one file of one user; see wopi.int.test.ts',
  'POST /wopi/files/{file_id}': 'WOPI: the access_token names one file of one user; see wopi.int.test.ts',
};

/** "PUT /api/clouds/{id} (rename)" and "PUT /api/clouds/:id" both become "PUT /api/clouds/{}". */
const callKey = (name: string) => (/^(GET|POST|PUT|DELETE) \S+/.exec(name)?.[0] ?? name).replace(/\{[^}]*\}/g, '{}');

/** Tables with rows that belong to someone: the snapshot compares the owner's rows before and after. */
export const OWNED_TABLES: Array<{ table: string; ownerColumn: string; owner: 'user' | 'visitor' }> = [
  { table: 'clouds', ownerColumn: 'user_id', owner: 'user' },
  { table: 'clouds', ownerColumn: 'visitor_id', owner: 'visitor' },
  { table: 'cleanup_tasks', ownerColumn: 'user_id', owner: 'user' },
  { table: 'tasks', ownerColumn: 'user_id', owner: 'user' },
  { table: 'task_runs', ownerColumn: 'user_id', owner: 'user' },
  { table: 'sessions', ownerColumn: 'user_id', owner: 'user' },
  { table: 'support_tickets', ownerColumn: 'user_id', owner: 'user' },
  { table: 'ecology_app_tokens', ownerColumn: 'user_id', owner: 'user' },
  { table: 'ecology_app_usage', ownerColumn: 'user_id', owner: 'user' },
  { table: 'billing_orders', ownerColumn: 'user_id', owner: 'user' },
  { table: 'export_tasks', ownerColumn: 'user_id', owner: 'user' },
];

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`ownership: nothing of one user's is reachable by another [${dialect}]`, () => {
    let t: TestApp;
    let dav: VisitorClouds;
    let owner: Owner;
    let ownerVisitorId: string;
    let attacker: SignedUpUser;
    let attackerVisitor: TestVisitor;
    const ids: Record<string, string> = {};

    const send = async (headers: Record<string, string>, r: AttackerRequest) => {
      const res = await t.app.inject({
        method: r.method,
        url: r.url,
        headers,
        ...(r.body === undefined ? {} : { payload: r.body as Record<string, unknown> }),
      });
      return { status: res.statusCode, body: JSON.parse(res.body) as { code: number; msg: string; data: unknown } };
    };

    async function snapshot(): Promise<string> {
      const parts: unknown[] = [];
      for (const { table, ownerColumn, owner: who } of OWNED_TABLES) {
        const id = who === 'user' ? owner.user.uid : ownerVisitorId;
        const rows = await sql<
          Record<string, unknown>
        >`select * from ${sql.table(table)} where ${sql.ref(ownerColumn)} = ${id}`.execute(t.ctx.db.kysely);
        parts.push({ table, ownerColumn, rows: rows.rows.map((r) => JSON.stringify(r)).sort() });
      }
      const view = await send(
        { ...owner.user.headers, ...owner.visitor.headers },
        { method: 'GET', url: '/api/v2/clouds/me' },
      );
      parts.push(view.body);
      return JSON.stringify(parts);
    }

    beforeAll(async () => {
      // An OAuth client (never contacted: starting only builds the authorize URL), so the OAuth
      // start call reaches its ownership check instead of answering "unavailable".
      [t, dav] = await Promise.all([
        startTestApp({
          dialect,
          env: {
            GOOGLE_CLIENT_ID: 'ownership.apps.example',
            GOOGLE_CLIENT_SECRET: 'ownership-client-secret',
            // An office server, so the WOPI session call reaches its ownership check.
            SKYFERRY_WOPI_CLIENT_URL: 'https://office.example.test',
            ...LOOPBACK_CLOUDS_ENV,
          },
        }),
        VisitorClouds.start(),
      ]);
      owner = { user: await t.signUp(), visitor: await t.visitor() };
      const setup: SetupContext = {
        t,
        owner,
        dav,
        async asOwner<T>(
          method: AttackerRequest['method'],
          url: string,
          body?: unknown,
          as: 'user' | 'visitor' = 'user',
        ) {
          const headers = as === 'user' ? owner.user.headers : owner.visitor.headers;
          const r = await send(headers, { method, url, body });
          if (r.body.code !== 0) throw new Error(`setup ${method} ${url} failed: ${JSON.stringify(r.body)}`);
          return r.body.data as T;
        },
      };
      for (const [key, make] of Object.entries(SETUPS)) ids[key] = await make(setup);
      ownerVisitorId = (await t.ctx.tokens.authenticateVisitor(owner.visitor.tempToken)) ?? '';
      // The attacker is an operator too (test accounts are): even that role reaches nothing of another's.
      attacker = await t.signUp();
      attackerVisitor = await t.visitor();
      // The attacker has resources of their own, so "not found" is not merely "has nothing".
      await send(attacker.headers, {
        method: 'POST',
        url: '/api/clouds',
        body: { cloud_name: 'local', credentials: { path: t.makeLocalFolder() } },
      });
    });
    afterAll(async () => {
      await t?.close();
      await dav?.stop();
    });

    for (const endpoint of OWNED_ENDPOINTS) {
      it(`${endpoint.name}: another user`, async () => {
        const before = await snapshot();
        const r = await send(
          { ...attacker.headers, ...attackerVisitor.headers },
          endpoint.request(ids, { folder: t.makeLocalFolder() }),
        );
        if (endpoint.check) {
          expect(r.body.code).toBe(0);
          endpoint.check(r.body, ids);
        } else {
          expect([r.status, r.body.code]).toEqual([404, Code.NOT_FOUND]);
        }
        expect(await snapshot()).toBe(before);
      });

      it(`${endpoint.name}: a visitor`, async () => {
        const before = await snapshot();
        const r = await send(attackerVisitor.headers, endpoint.request(ids, { folder: t.makeLocalFolder() }));
        if (endpoint.check && r.body.code === 0) endpoint.check(r.body, ids);
        else expect([Code.NOT_FOUND, Code.UNAUTHENTICATED]).toContain(r.body.code);
        expect(await snapshot()).toBe(before);
      });
    }

    it('walks every documented call that names something of someone’s (OpenAPI document vs the lists)', async () => {
      const doc = JSON.parse((await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).body) as {
        paths: Record<string, Record<string, unknown>>;
      };
      const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
        Object.keys(item)
          .filter((m) => ['get', 'post', 'put', 'delete', 'patch'].includes(m))
          .map((m) => callKey(`${m.toUpperCase()} ${path}`)),
      );
      const walked = new Set(OWNED_ENDPOINTS.map((e) => callKey(e.name)));
      const exempt = new Set(Object.keys(NOT_OWNED).map(callKey));
      expect(documented.filter((c) => !walked.has(c) && !exempt.has(c))).toEqual([]);
      // Both lists name only real calls, and no call is in both.
      expect([...walked, ...exempt].filter((c) => !documented.includes(c))).toEqual([]);
      expect([...walked].filter((c) => exempt.has(c))).toEqual([]);
    });

    it('the owner’s OAuth reauthorization names their own cloud (so the 404s above were about ownership)', async () => {
      const res = await send(owner.user.headers, {
        method: 'POST',
        url: '/api/clouds/oauth/start',
        body: { cloud_name: 'google_drive', cloud_id: ids.cloud },
      });
      // The owner's cloud is found; it is a local folder, not a Google Drive, hence the field error.
      expect([res.status, res.body.code]).toEqual([400, Code.BAD_REQUEST]);
      expect(res.body.msg).toContain('cloud_id');
    });

    it('the owner still reaches everything afterwards', async () => {
      const view = await send(
        { ...owner.user.headers, ...owner.visitor.headers },
        { method: 'GET', url: '/api/v2/clouds/me' },
      );
      const data = view.body.data as {
        clouds: Array<{ id: string; cloud_alias_name: string }>;
        temp_clouds: Array<{ id: string }>;
      };
      expect(data.clouds.map((c) => [c.id, c.cloud_alias_name])).toEqual([[ids.cloud, 'owner cloud']]);
      expect(data.temp_clouds.map((c) => c.id)).toEqual([ids.tempCloud]);
      // The file the thumbnail attempts named is there: they were refused for ownership alone.
      const thumb = await t.app.inject({
        method: 'GET',
        url: `/api/cloud-manager/thumbnail?cloud_id=${ids.cloud}&path=${ids.photo}`,
        headers: owner.user.headers,
      });
      expect(thumb.statusCode).toBe(200);
      expect(thumb.body).toBe('not really a png');
      // Nothing the others tried (mkdir, upload, rename, delete, albums, tasks) reached the owner's
      // files, and the owner's upload session is still open where it was.
      const root = await send(owner.user.headers, {
        method: 'POST',
        url: '/api/cloud-manager/list',
        body: { cloud_id: ids.cloud, path: '/', refresh: true },
      });
      expect(root.body.code).toBe(0);
      const names = (root.body.data as { items: Array<{ name: string }> }).items.map((i) => i.name).sort();
      expect(names).toEqual(['TaskSource', 'owner-note.md', 'photo.png']);
      // Another's revoke left the owner's app token working.
      const appFiles = await send(
        { authorization: `Bearer ${ids.appToken}` },
        { method: 'GET', url: '/ecology/v1/app/files' },
      );
      expect(appFiles.body.code).toBe(0);
      const exported = await send(owner.user.headers, {
        method: 'GET',
        url: `/api/third-api/poll-progress/${ids.export}`,
      });
      expect(exported.body.data).toMatchObject({ status: 1, path: '/TaskSource/exported.txt' });
      const upload = await send(owner.user.headers, { method: 'GET', url: `/api/cloud-manager/uploads/${ids.upload}` });
      expect(upload.body.code).toBe(0);
      expect(upload.body.data).toMatchObject({ upload_id: ids.upload, offset: 0 });
    });
  });
}
