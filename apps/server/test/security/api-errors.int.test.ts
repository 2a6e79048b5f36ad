import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, MESSAGES, message, type CloudsMeData, type MessageKey, type TaskDetail } from '@skyferry/contract';
import { envelope, startTestApp, type SignedUpUser, type TestApp } from '../support/app.ts';
import { documentedOperations, type OpenApiOperation, type OpenApiSchema } from '../support/openapi.ts';
import { caller, connectLocal } from '../support/tasks.ts';

/**
 * No input reachable from the API gives a 5xx: a task whose source or target is a link leading out
 * of a local folder, or whose target is a file, is refused with a 4xx envelope in the caller's
 * language; and every documented call, sent by a visitor or a second user with well-formed input
 * naming the first user's clouds, tasks, scans and uploads, answers a 4xx (or the sender's own
 * data), never a 5xx and never the first user's data.
 */

/** A German catalogue message (placeholders filled with anything), other than the server error. */
function isGermanMessage(text: string): boolean {
  return (Object.entries(MESSAGES.de) as Array<[MessageKey, string]>).some(([key, template]) => {
    if (key === 'server_error' || template === MESSAGES.en[key]) return false;
    const pattern = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{\w+\\?\}|\{\w+\}/g, '.*');
    return new RegExp(`^${pattern}$`, 's').test(text);
  });
}

describe('creating a task on paths a cloud cannot serve', () => {
  let t: TestApp;
  let u: SignedUpUser;
  const call = caller(() => t);
  let outside = '';
  let linked = '';
  let plain = '';
  const de = { 'accept-language': 'de-DE,de;q=0.9' };

  beforeAll(async () => {
    t = await startTestApp();
    u = await t.signUp();
    // A folder outside every allowed root, reached by links inside a connected folder.
    outside = mkdtempSync(join(tmpdir(), 'skyferry-outside-'));
    writeFileSync(join(outside, 'secret.txt'), 'not for the cloud');
    const dir = t.makeLocalFolder('linked');
    symlinkSync(outside, join(dir, 'escape'));
    symlinkSync(join(outside, 'secret.txt'), join(dir, 'secret-link.txt'));
    mkdirSync(join(dir, 'photos'));
    writeFileSync(join(dir, 'photos', 'a.jpg'), 'jpeg');
    writeFileSync(join(dir, 'notes.txt'), 'a file, not a folder');
    linked = (await connectLocal(call, u.headers, dir, 'Linked')).id;
    plain = (await connectLocal(call, u.headers, t.makeLocalFolder('plain'), 'Plain')).id;
  });
  afterAll(async () => {
    await t?.close();
    rmSync(outside, { recursive: true, force: true });
  });

  const create = (body: Record<string, unknown>) =>
    call('POST', '/api/tasks', { headers: { ...u.headers, ...de }, body: { task_type: 0, ...body } });

  it('refuses a source that is a link leading out of the folder, planned or not, with a 4xx in German', async () => {
    for (const paths of [['/escape'], ['/escape/secret.txt'], ['/secret-link.txt']]) {
      for (const dryRun of [true, false]) {
        const r = await create({
          from_cloud: { cloud_id: linked, paths },
          to_cloud: { cloud_id: plain, path: '/' },
          dry_run: dryRun,
        });
        const where = `${paths[0]} dry_run=${dryRun}: ${r.status} ${r.msg}`;
        expect(r.status, where).toBeGreaterThanOrEqual(400);
        expect(r.status, where).toBeLessThan(500);
        expect(r.code, where).not.toBe(0);
        expect(isGermanMessage(r.msg), where).toBe(true);
      }
    }
  });

  it('refuses a target that is a link leading out of the folder, with a 4xx in German, and writes nothing there', async () => {
    for (const dryRun of [true, false]) {
      const r = await create({
        from_cloud: { cloud_id: plain, paths: ['/'] },
        to_cloud: { cloud_id: linked, path: '/escape' },
        dry_run: dryRun,
      });
      const where = `dry_run=${dryRun}: ${r.status} ${r.msg}`;
      expect(r.status, where).toBeGreaterThanOrEqual(400);
      expect(r.status, where).toBeLessThan(500);
      expect(isGermanMessage(r.msg), where).toBe(true);
    }
    const tasks = await call<{ total: number }>('POST', '/api/tasks/list', {
      headers: u.headers,
      body: { completed: 0 },
    });
    expect(tasks.data.total).toBe(0);
  });

  it('refuses a target that is a file (or below one), for a plan, a migration and a sync', async () => {
    const expected = [400, Code.BAD_REQUEST, message('de', 'target_not_folder')];
    for (const [taskType, path, extra] of [
      [0, '/notes.txt', { dry_run: true }],
      [0, '/notes.txt', {}],
      [1, '/notes.txt', { dry_run: true }],
      [0, '/notes.txt/deeper', { dry_run: true }],
    ] as const) {
      const r = await create({
        task_type: taskType,
        from_cloud: { cloud_id: plain, paths: ['/'] },
        to_cloud: { cloud_id: linked, path },
        ...extra,
      });
      expect([r.status, r.code, r.msg], `${taskType} ${path} ${JSON.stringify(extra)}`).toEqual(expected);
    }
    // The same in English without a language.
    const en = await call('POST', '/api/tasks', {
      headers: u.headers,
      body: {
        task_type: 0,
        from_cloud: { cloud_id: plain, paths: ['/'] },
        to_cloud: { cloud_id: linked, path: '/notes.txt' },
        dry_run: true,
      },
    });
    expect(en.msg).toBe('The target path is a file, not a folder.');
  });

  it('still plans into a folder of the same cloud and into a target that does not exist yet', async () => {
    const r = await create({
      from_cloud: { cloud_id: linked, paths: ['/photos'] },
      to_cloud: { cloud_id: plain, path: '/new/place' },
      dry_run: true,
    });
    expect([r.status, r.code]).toEqual([200, 0]);
  });

  it('logged no unhandled error', () => {
    expect(t.logs()).not.toContain('unhandled error');
  });
});

describe("well-formed calls naming another user's clouds, tasks, scans and uploads", () => {
  let t: TestApp;
  let owner: SignedUpUser;
  const call = caller(() => t);
  const ids = { cloud: '', task: '', cleanup: '', upload: '' };
  let folder = '';
  const SECRET = 'TOP-SECRET-CONTENT-0f3a';
  let operations: Awaited<ReturnType<typeof documentedOperations>> = [];

  beforeAll(async () => {
    t = await startTestApp();
    owner = await t.signUp();
    folder = t.makeLocalFolder('owners-folder');
    writeFileSync(join(folder, 'secret.txt'), SECRET);
    mkdirSync(join(folder, 'docs'));
    ids.cloud = (await connectLocal(call, owner.headers, folder, 'Owners cloud')).id;
    const task = await call<{ task: { id: string } }>('POST', '/api/tasks', {
      headers: owner.headers,
      body: {
        task_type: 0,
        from_cloud: { cloud_id: ids.cloud, paths: ['/secret.txt'] },
        to_cloud: { cloud_id: ids.cloud, path: '/docs' },
        confirm_same_cloud: true,
      },
    });
    ids.task = task.data.task.id;
    const scan = await call<{ task_id: string }>('POST', '/api/cleanup/run', {
      headers: owner.headers,
      body: { cloud_id: ids.cloud },
    });
    ids.cleanup = scan.data.task_id;
    const upload = await call<{ upload_id: string }>('POST', '/api/cloud-manager/uploads', {
      headers: owner.headers,
      body: { cloud_id: ids.cloud, path: '/docs/upload.bin', size: 10 },
    });
    ids.upload = upload.data.upload_id;
    expect(
      Object.values(ids).every((id) => typeof id === 'string' && id.length > 0),
      JSON.stringify(ids),
    ).toBe(true);
    operations = await documentedOperations(t.app);
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A value for a field: the owner's ids where a field names one, otherwise the schema's first choice. */
  function valueOf(name: string, schema: OpenApiSchema | undefined, path: string): unknown {
    const byName: Record<string, unknown> = {
      cloud_id: ids.cloud,
      token_id: ids.cloud,
      relation_id: ids.cloud,
      task_id: path.startsWith('/api/cleanup') ? ids.cleanup : ids.task,
      upload_id: ids.upload,
      id: path.startsWith('/api/tasks') ? ids.task : ids.cloud,
      path: '/secret.txt',
      paths: ['/secret.txt'],
      files: ['/secret.txt'],
      sort_val: JSON.stringify([ids.cloud]),
      cloud_name: 'local',
      // (Connecting the owner's local folder itself is the local-folder rules' test.)
      credentials: { path: join(folder, 'missing') },
      email: 'probe@example.com',
      notify_email: 'probe@example.com',
      password: 'probe password 1',
      schedule: null,
      filter: null,
      time_zone: 'UTC',
      size: 256,
      origin: 'http://127.0.0.1',
    };
    if (name in byName) return byName[name];
    if (!schema) return 'x';
    const options = schema.anyOf ?? schema.oneOf;
    if (options) return valueOf(name, options.find((o) => o.type !== 'null') ?? options[0], path);
    if (schema.enum) return schema.enum[0];
    switch (schema.type) {
      case 'integer':
      case 'number':
        return schema.minimum ?? 1;
      case 'boolean':
        // The bolder choice: permanent deletes, "all" of a scan, overwrites.
        return true;
      case 'array':
        return [valueOf(name, schema.items, path)];
      case 'object':
        return Object.fromEntries(
          Object.entries(schema.properties ?? {}).map(([key, sub]) => [key, valueOf(key, sub, path)]),
        );
      default:
        return 'x';
    }
  }

  function requestOf(method: string, path: string, op: OpenApiOperation) {
    const params = new URLSearchParams();
    for (const p of op.parameters ?? []) {
      if (p.in === 'query') params.set(p.name, String(valueOf(p.name, p.schema, path)));
    }
    const url = path.replace(/\{([^}]+)\}/g, (_, name: string) =>
      encodeURIComponent(String(valueOf(name, undefined, path))),
    );
    const schema = op.requestBody?.content?.['application/json']?.schema;
    const query = params.toString();
    if (schema) {
      return {
        url: `${url}${query ? `?${query}` : ''}`,
        type: 'application/json',
        payload: JSON.stringify(valueOf('', schema, path)),
      };
    }
    // Raw bodies (uploads) carry bytes that would overwrite the owner's file.
    const raw = method === 'PUT' || method === 'POST' ? 'overwritten by a stranger' : undefined;
    return { url: `${url}${query ? `?${query}` : ''}`, type: 'application/octet-stream', payload: raw };
  }

  /** Calls that end the sender's own session (the sweep needs it to the end). */
  const SKIP = new Set(['POST /api/account/logout', 'GET /api/account/logout']);

  for (const who of ['a visitor', 'a second user'] as const) {
    it(`sent by ${who}: never a 5xx, never the owner's data, and the owner's things stay as they were`, async () => {
      const sender = who === 'a visitor' ? (await t.visitor()).headers : (await t.signUp()).headers;
      const failures: string[] = [];
      for (const { method, path, op } of operations) {
        if (SKIP.has(`${method} ${path}`)) continue;
        const req = requestOf(method, path, op);
        const res = await t.app.inject({
          method,
          url: req.url,
          headers: { ...sender, ...(req.payload === undefined ? {} : { 'content-type': req.type }) },
          ...(req.payload === undefined ? {} : { payload: req.payload }),
        });
        const where = `${method} ${req.url.slice(0, 80)}`;
        if (res.statusCode >= 500) {
          failures.push(`${where}: HTTP ${res.statusCode} ${res.body.slice(0, 160)}`);
          continue;
        }
        const leaked = [SECRET, folder, ids.cloud, ids.task, ids.cleanup, ids.upload].filter(
          (s) => res.statusCode < 400 && res.body.includes(s),
        );
        if (leaked.length > 0) failures.push(`${where}: HTTP ${res.statusCode} shows the owner's ${leaked.join(', ')}`);
        if (res.statusCode >= 400 && String(res.headers['content-type']).includes('application/json')) {
          const env = envelope(res);
          if (!env.code || env.msg.length < 5)
            failures.push(`${where}: not an error envelope: ${res.body.slice(0, 120)}`);
        }
      }
      expect(failures).toEqual([]);

      // The owner's cloud, file, task and scan are untouched.
      expect(readFileSync(join(folder, 'secret.txt'), 'utf8')).toBe(SECRET);
      const me = await call<CloudsMeData>('GET', '/api/v2/clouds/me', { headers: owner.headers });
      expect(me.data.clouds.map((c) => [c.id, c.cloud_alias_name, c.status])).toEqual([
        [ids.cloud, 'Owners cloud', 'authorized'],
      ]);
      const task = await call<TaskDetail>('GET', `/api/tasks/${ids.task}`, { headers: owner.headers });
      expect([task.code, task.data.state]).toEqual([0, 8]);
      const scan = await call('GET', `/api/cleanup/poll-progress/${ids.cleanup}`, { headers: owner.headers });
      expect(scan.code).toBe(0);
      const upload = await call('GET', `/api/cloud-manager/uploads/${ids.upload}`, { headers: owner.headers });
      expect(upload.code).toBe(0);
    });
  }

  it('logged no unhandled error', () => {
    expect(t.logs()).not.toContain('unhandled error');
  });
});
