import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Code, GB, type Cloud, type CreateTaskData, type PollProgressData, type ServerTask } from '@skyferry/contract';
import type { About, Provider } from '@skyferry/providers';
import type { CloudsService } from '../src/services/clouds.ts';
import { STACKS as CONFIGS, startTestApp, type SignedUpUser, type TestApp } from './support/app.ts';
import { caller, connectLocal, waitForState, writeTree } from './support/tasks.ts';

// The sync modes, the file-type filter, a root migration, the scanning count, the reminder e-mail
// switch, the space prompt (409004) and state 6, over HTTP on SQLite with the in-process queue and
// on PostgreSQL with BullMQ on Redis; state 10 (not enough traffic) on PostgreSQL with BullMQ
// (tasks.int.test.ts covers it on SQLite).

function env(redis: boolean): Record<string, string> {
  const out: Record<string, string> = { SKYFERRY_WORKERS: '2', SKYFERRY_TASK_LEASE_MS: '3000' };
  if (redis) {
    out.REDIS_URL = inject('redisUrl');
    out.SKYFERRY_REDIS_PREFIX = `tm-${randomUUID().slice(0, 8)}`;
  }
  return out;
}

/**
 * The free space a cloud reports (a local folder reports its disk's) and a delay before each of
 * its listings, set by the test: the real provider in every other respect, for the API's checks
 * and for the worker's run alike.
 */
class CloudTweaks {
  readonly byCloud = new Map<string, About>();
  readonly listDelayMs = new Map<string, number>();

  install(clouds: CloudsService): void {
    const open = clouds.open.bind(clouds);
    clouds.open = async (identity, id) => {
      const opened = await open(identity, id);
      const provider: Provider = new Proxy(opened.provider, {
        get: (target, prop, receiver) => {
          const space = this.byCloud.get(id);
          if (prop === 'about' && space) return async () => space;
          const delay = this.listDelayMs.get(id);
          if (prop === 'list' && delay) {
            return async (...args: Parameters<Provider['list']>) => {
              await new Promise((r) => setTimeout(r, delay));
              return target.list(...args);
            };
          }
          const value: unknown = Reflect.get(target, prop, receiver);
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      return { ...opened, provider };
    };
  }
}

/** Relative path -> content of every file below a folder. */
function tree(root: string, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  if (!existsSync(root)) return out;
  for (const e of readdirSync(root, { withFileTypes: true })) {
    if (e.isDirectory()) Object.assign(out, tree(join(root, e.name), `${prefix}${e.name}/`));
    else out[`${prefix}${e.name}`] = readFileSync(join(root, e.name), 'latin1');
  }
  return out;
}

const sorted = (o: Record<string, string>) => Object.keys(o).sort();
const HOUR = 3600_000;

for (const cfg of CONFIGS) {
  describe(`task sync modes and space over HTTP [${cfg.label}]`, () => {
    let t: TestApp;
    const call = caller(() => t);
    const space = new CloudTweaks();
    let user: SignedUpUser;
    let srcDir: string;
    let dstDir: string;
    let src: Cloud;
    let dst: Cloud;

    beforeAll(async () => {
      t = await startTestApp({ dialect: cfg.dialect, env: env(cfg.redis) });
      space.install(t.ctx.clouds);
      user = await t.signUp();
      srcDir = t.makeLocalFolder('source');
      dstDir = t.makeLocalFolder('target');
      src = await connectLocal(call, user.headers, srcDir, 'Laptop');
      dst = await connectLocal(call, user.headers, dstDir, 'Archive');
    });

    afterAll(async () => {
      await t?.close();
    });

    const create = (body: Record<string, unknown>) =>
      call<CreateTaskData>('POST', '/api/tasks', { headers: user.headers, body });
    const sync = (mode: string, from: string, to: string, extra: Record<string, unknown> = {}) =>
      create({
        task_type: 1,
        sync_mode: mode,
        from_cloud: { cloud_id: src.id, paths: [from] },
        to_cloud: { cloud_id: dst.id, path: to },
        ...extra,
      });
    const finish = async (id: string) => (await waitForState(call, user.headers, id)).task;
    const runAgain = async (id: string) => {
      const res = await call<ServerTask>('GET', `/api/tasks/run/${id}`, { headers: user.headers });
      expect(res.code).toBe(0);
      return finish(id);
    };

    it('one-way sync with an include filter adds and updates the chosen types and never deletes', async () => {
      writeTree(srcDir, {
        'Media/a.jpg': Buffer.alloc(1000, 1),
        'Media/sub/b.png': Buffer.alloc(1200, 2),
        'Media/c.mp4': Buffer.alloc(1300, 3),
        'Media/d.pdf': 'pdf',
        'Media/e.txt': 'text',
      });
      writeTree(dstDir, { 'OneWay/extra.txt': 'only on the target' });
      const res = await sync('one_way', '/Media', '/OneWay', {
        filter: { mode: 'include', categories: ['picture'] },
        same_name_policy: 'size_differs',
      });
      expect(res.code).toBe(0);
      expect(res.data.task).toMatchObject({
        task_type: 1,
        sync_mode: 'one_way',
        same_name_policy: 'size_differs',
        filter: { mode: 'include', categories: ['picture'] },
      });
      const first = await finish(res.data.task?.id ?? '');
      expect(first.state).toBe(0);
      expect(first.result).toMatchObject({ added: 2, updated: 0, deleted: 0 });
      expect(sorted(tree(join(dstDir, 'OneWay')))).toEqual(['a.jpg', 'extra.txt', 'sub/b.png']);

      // The source changes: a picture grows, one is added, the target's extra stays.
      writeTree(srcDir, { 'Media/a.jpg': Buffer.alloc(2000, 4), 'Media/f.jpeg': Buffer.alloc(10, 5) });
      const second = await runAgain(first.id);
      expect(second.state).toBe(0);
      expect(second.result).toMatchObject({ added: 1, updated: 1, deleted: 0 });
      const out = tree(join(dstDir, 'OneWay'));
      expect(sorted(out)).toEqual(['a.jpg', 'extra.txt', 'f.jpeg', 'sub/b.png']);
      expect(out['a.jpg']).toBe(Buffer.alloc(2000, 4).toString('latin1'));
    });

    it('incremental sync with an exclude filter takes only new files and newer same-name files', async () => {
      writeTree(srcDir, {
        'Inc/new.txt': 'new',
        'Inc/newer.txt': 'newer on the source',
        'Inc/older.txt': 'older on the source',
        'Inc/photo.jpg': 'a picture, excluded',
      });
      writeTree(dstDir, { 'Inc/newer.txt': 'target v1', 'Inc/older.txt': 'target v1' });
      const now = Date.now();
      const at = (dir: string, rel: string, ms: number) => utimesSync(join(dir, rel), ms / 1000, ms / 1000);
      at(dstDir, 'Inc/newer.txt', now - 2 * HOUR);
      at(dstDir, 'Inc/older.txt', now - 2 * HOUR);
      at(srcDir, 'Inc/newer.txt', now - HOUR);
      at(srcDir, 'Inc/older.txt', now - 30 * 24 * HOUR);
      const res = await sync('incremental', '/Inc', '/Inc', {
        filter: { mode: 'exclude', categories: ['picture', 'video'] },
        same_name_policy: 'overwrite',
      });
      expect(res.code).toBe(0);
      const task = await finish(res.data.task?.id ?? '');
      expect(task.state).toBe(0);
      expect(task.result).toMatchObject({ added: 1, updated: 1, deleted: 0 });
      expect(tree(join(dstDir, 'Inc'))).toEqual({
        'new.txt': 'new',
        'newer.txt': 'newer on the source',
        'older.txt': 'target v1',
      });
    });

    it('two-way sync keeps its state between runs: changes and deletions flow both ways', async () => {
      writeTree(srcDir, { 'Two/a.txt': 'a', 'Two/b.txt': 'b', 'Two/c.txt': 'c', 'Two/d/e.txt': 'e' });
      writeTree(dstDir, { 'Two/t.txt': 'made on the target' });
      const res = await sync('two_way', '/Two', '/Two');
      expect(res.code).toBe(0);
      const first = await finish(res.data.task?.id ?? '');
      expect(first.state).toBe(0);
      expect(first.result).toMatchObject({ added: 5, deleted: 0 });
      expect(tree(join(srcDir, 'Two'))).toEqual(tree(join(dstDir, 'Two')));

      // Between runs: the target deletes b.txt and adds u.txt, the source changes a.txt.
      rmSync(join(dstDir, 'Two/b.txt'));
      writeTree(dstDir, { 'Two/u.txt': 'new on the target' });
      writeTree(srcDir, { 'Two/a.txt': 'a, changed on the source' });
      const second = await runAgain(first.id);
      expect(second.state).toBe(0);
      expect(second.result).toMatchObject({ added: 1, updated: 1, deleted: 1 });
      const both = tree(join(srcDir, 'Two'));
      expect(tree(join(dstDir, 'Two'))).toEqual(both);
      expect(both).toEqual({
        'a.txt': 'a, changed on the source',
        'c.txt': 'c',
        'd/e.txt': 'e',
        't.txt': 'made on the target',
        'u.txt': 'new on the target',
      });
    });

    it('migrating the root copies its contents into the target folder', async () => {
      const rootDir = t.makeLocalFolder();
      writeTree(rootDir, { 'top.txt': 'top', 'Folder/inner.txt': 'inner' });
      const root = await connectLocal(call, user.headers, rootDir, 'Stick');
      const res = await create({
        task_type: 0,
        from_cloud: { cloud_id: root.id, paths: ['/'] },
        to_cloud: { cloud_id: dst.id, path: '/FromRoot' },
      });
      expect(res.code).toBe(0);
      expect(res.data.task?.task_name).toBe('Stick → FromRoot');
      expect((await finish(res.data.task?.id ?? '')).state).toBe(0);
      expect(tree(join(dstDir, 'FromRoot'))).toEqual({ 'top.txt': 'top', 'Folder/inner.txt': 'inner' });
    });

    /** Polls a task's progress until it ends: the states seen in turn, and each answer. */
    async function pollToEnd(id: string): Promise<{ states: number[]; polls: PollProgressData[] }> {
      const states: number[] = [];
      const polls: PollProgressData[] = [];
      for (const deadline = Date.now() + 20_000; Date.now() < deadline;) {
        const p = await call<PollProgressData>('GET', `/api/cloud-manager/poll-progress/${id}`, {
          headers: user.headers,
        });
        polls.push(p.data);
        if (states.at(-1) !== p.data.status) states.push(p.data.status);
        if ([0, 3, 4, 5, 6, 10].includes(p.data.status)) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      return { states, polls };
    }

    /** Six nested folders of two files each, listed slowly (400 ms a folder) from the source. */
    function slowTree(name: string): void {
      const files: Record<string, string> = {};
      for (let level = 0, dir = name; level < 6; level++, dir += `/l${level}`) {
        files[`${dir}/a.txt`] = `a ${level}`;
        files[`${dir}/b.txt`] = `b ${level}`;
      }
      writeTree(srcDir, files);
      space.listDelayMs.set(src.id, 400);
    }

    it('a mirror sync scans first (1), counting what it has listed ("Loading N items"), then copies (2) and completes', async () => {
      slowTree('Scan');
      try {
        const res = await create({
          task_type: 1,
          sync_mode: 'mirror',
          from_cloud: { cloud_id: src.id, paths: ['/Scan'] },
          to_cloud: { cloud_id: dst.id, path: '/Scanned' },
          // Confirmed up front: creating does not plan (and list slowly) first.
          confirm_insufficient_space: true,
          confirm_deletions: true,
        });
        expect(res.code).toBe(0);
        const { states, polls } = await pollToEnd(res.data.task?.id ?? '');
        const scanning = polls.filter((p) => p.status === 1).map((p) => p.total_counts);
        expect(states.at(-1)).toBe(0);
        expect(states).toContain(1);
        // The count grows while listing and never passes what is there (12 files, 6 folders).
        expect(Math.max(...scanning)).toBeGreaterThan(0);
        expect(Math.max(...scanning)).toBeLessThanOrEqual(18);
        expect(scanning).toEqual([...scanning].sort((x, y) => x - y));
        expect(Object.keys(tree(join(dstDir, 'Scanned')))).toHaveLength(12);
      } finally {
        space.listDelayMs.delete(src.id);
      }
    });

    it('a copy runs (2) while it still counts: totals grow, the percentage holds until they are whole, then it completes', async () => {
      slowTree('Count');
      try {
        const res = await create({
          task_type: 0,
          from_cloud: { cloud_id: src.id, paths: ['/Count'] },
          to_cloud: { cloud_id: dst.id, path: '/Counted' },
          confirm_insufficient_space: true,
          confirm_deletions: true,
        });
        expect(res.code).toBe(0);
        const { states, polls } = await pollToEnd(res.data.task?.id ?? '');
        expect(states.at(-1)).toBe(0);
        // No scanning state of its own: the run is under way while the walk goes on.
        const counting = polls.filter((p) => p.status === 2 && p.progress.counting === true);
        expect(
          counting.length,
          JSON.stringify(polls.map((p) => [p.status, p.total_counts, p.progress])),
        ).toBeGreaterThan(0);
        const totals = counting.map((p) => p.total_counts);
        expect(totals).toEqual([...totals].sort((x, y) => x - y));
        expect(Math.max(...totals)).toBeLessThanOrEqual(12);
        // Nothing to say how far along the run is until the count is whole.
        for (const p of counting) {
          expect(p.progress.percentage).toBe(0);
          expect(p.progress.eta).toBeNull();
        }
        // Once counted, the figures are the whole run's and never go back.
        const counted = polls.filter((p) => p.status === 2 && p.progress.counting !== true);
        for (const p of counted) expect(p.total_counts).toBe(12);
        expect(Object.keys(tree(join(dstDir, 'Counted/Count')))).toHaveLength(12);
      } finally {
        space.listDelayMs.delete(src.id);
      }
    });

    it('sends no e-mail while the reminder is off, and one when it is on', async () => {
      writeTree(srcDir, { 'Mail/one.txt': 'one' });
      const outbox = join(t.dataDir, 'outbox');
      const mails = () =>
        existsSync(outbox)
          ? readdirSync(outbox)
              .filter((f) => f.endsWith('.eml'))
              .map((f) => readFileSync(join(outbox, f), 'utf8'))
          : [];
      const notify = (remind: 0 | 1) =>
        call('POST', '/api/users/notify-email', {
          headers: user.headers,
          body: { notify_email: 'me@example.org', remind_me: remind },
        });
      const migrate = async (name: string) => {
        const res = await create({
          task_type: 0,
          task_name: name,
          from_cloud: { cloud_id: src.id, paths: ['/Mail'] },
          to_cloud: { cloud_id: dst.id, path: `/${name.replace(' ', '-')}` },
        });
        expect(res.code).toBe(0);
        expect((await finish(res.data.task?.id ?? '')).state).toBe(0);
      };
      expect((await notify(0)).code).toBe(0);
      await migrate('Quiet run');
      expect((await notify(1)).code).toBe(0);
      await migrate('Loud run');
      // The second run's e-mail comes after the first run ended (and would have mailed).
      const deadline = Date.now() + 10_000;
      while (!mails().some((m) => m.includes('Loud run')) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(mails().filter((m) => m.includes('Loud run'))).toHaveLength(1);
      expect(mails().filter((m) => m.includes('Quiet run'))).toEqual([]);
    });

    it('prompts 409004 when the target lacks space; confirmed, the run stops in state 6 with the size needed; retried with room, it completes', async () => {
      writeTree(srcDir, { 'Space/one.bin': Buffer.alloc(3000, 1), 'Space/two.bin': Buffer.alloc(4000, 2) });
      space.byCloud.set(dst.id, { total: 10_000, used: 9_000, free: 1_000 });
      try {
        const body = {
          task_type: 0,
          from_cloud: { cloud_id: src.id, paths: ['/Space'] },
          to_cloud: { cloud_id: dst.id, path: '/Full' },
        };
        const prompt = await create(body);
        expect(prompt).toMatchObject({
          status: 409,
          code: Code.CONFIRM_INSUFFICIENT_SPACE,
          data: { side: 'target', cloud_id: dst.id, needed: 7000, available: 1000 },
        });
        expect((prompt.data as unknown as { cloud_name: string }).cloud_name).toContain('Archive');
        const res = await create({ ...body, confirm_insufficient_space: true });
        expect(res.code).toBe(0);
        const stopped = await finish(res.data.task?.id ?? '');
        expect(stopped.state).toBe(6);
        expect(stopped.needed_size).toBe(7000);
        expect(stopped.result?.outcome).toBe('insufficient_space');
        expect(existsSync(join(dstDir, 'Full/Space/one.bin'))).toBe(false);
        const listed = await call<{ items: ServerTask[] }>('POST', '/api/tasks/list', {
          headers: user.headers,
          body: { page: 1, page_size: 100, completed: 1 },
        });
        expect(listed.data.items.find((i) => i.id === stopped.id)?.state).toBe(6);

        space.byCloud.delete(dst.id);
        const retry = await call<ServerTask>('GET', `/api/tasks/retry/${stopped.id}`, { headers: user.headers });
        expect(retry.code).toBe(0);
        const done = await finish(stopped.id);
        expect(done).toMatchObject({ state: 0, needed_size: null });
        expect(tree(join(dstDir, 'Full/Space'))).toEqual({
          'one.bin': Buffer.alloc(3000, 1).toString('latin1'),
          'two.bin': Buffer.alloc(4000, 2).toString('latin1'),
        });
      } finally {
        space.byCloud.delete(dst.id);
      }
    });

    // Issue 45, finding 4: a confirmation to delete holds for the run it was given for, not for the
    // task's later runs; a two-way side whose folder is gone stops the run whatever was confirmed.
    it('a mirror confirmed to delete most of the target does so once; its next run asks again', async () => {
      writeTree(srcDir, { 'Conf/a.txt': 'a', 'Conf/b.txt': 'b' });
      writeTree(dstDir, { 'Conf/a.txt': 'a', 'Conf/b.txt': 'b', 'Conf/x1': '1', 'Conf/x2': '2', 'Conf/x3': '3' });
      const res = await sync('mirror', '/Conf', '/Conf', { confirm_deletions: true });
      expect(res.code).toBe(0);
      const id = res.data.task?.id ?? '';
      expect((await finish(id)).state).toBe(0);
      expect(sorted(tree(join(dstDir, 'Conf')))).toEqual(['a.txt', 'b.txt']);

      writeTree(dstDir, { 'Conf/y1': '1', 'Conf/y2': '2', 'Conf/y3': '3' });
      const again = await runAgain(id);
      expect(again.state).toBe(3);
      expect(again.result?.outcome).toBe('needs_delete_confirmation');
      expect(sorted(tree(join(dstDir, 'Conf')))).toEqual(['a.txt', 'b.txt', 'y1', 'y2', 'y3']);
    });

    it('a two-way side whose folder is gone stops the run, whatever was confirmed: nothing is deleted', async () => {
      writeTree(srcDir, { 'Gone/a.txt': 'a', 'Gone/b.txt': 'b', 'Gone/d/c.txt': 'c' });
      const res = await sync('two_way', '/Gone', '/Gone', { confirm_deletions: true });
      expect(res.code).toBe(0);
      const id = res.data.task?.id ?? '';
      expect((await finish(id)).state).toBe(0);
      const both = { 'a.txt': 'a', 'b.txt': 'b', 'd/c.txt': 'c' };
      expect(tree(join(dstDir, 'Gone'))).toEqual(both);

      // The target folder is renamed (or its disk not mounted) before the next run.
      renameSync(join(dstDir, 'Gone'), join(dstDir, 'Gone-moved'));
      const again = await runAgain(id);
      expect(again.state).toBe(3);
      expect(again.result?.error?.message).toMatch(/target folder \/Gone is missing/);
      expect(tree(join(srcDir, 'Gone'))).toEqual(both);
    });
  });
}

describe('tasks with billing on [PostgreSQL, BullMQ]', () => {
  let t: TestApp;
  const call = caller(() => t);
  beforeAll(async () => {
    t = await startTestApp({ dialect: 'postgres', env: { ...env(true), BILLING_MODE: 'test' } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('stops a run that would exceed the allowance in state 10 with the size needed, and runs it when there is traffic', async () => {
    const user = await t.signUp();
    const srcDir = t.makeLocalFolder();
    const dstDir = t.makeLocalFolder();
    writeTree(srcDir, { 'Big/a.bin': Buffer.alloc(6000, 1), 'Big/b.bin': Buffer.alloc(4000, 2) });
    await t.ctx.users.grantLicense(user.uid, 'month');
    const srcCloud = await connectLocal(call, user.headers, srcDir);
    const dstCloud = await connectLocal(call, user.headers, dstDir);
    await t.ctx.users.chargeTraffic(user.uid, (await t.ctx.users.remainingTraffic(user.uid)) - 3000);
    const res = await call<CreateTaskData>('POST', '/api/tasks', {
      headers: user.headers,
      body: {
        task_type: 0,
        from_cloud: { cloud_id: srcCloud.id, paths: ['/Big'] },
        to_cloud: { cloud_id: dstCloud.id, path: '/' },
      },
    });
    expect(res.code).toBe(0);
    const { task } = await waitForState(call, user.headers, res.data.task?.id ?? '');
    expect(task).toMatchObject({ state: 10, needed_size: 10_000 });
    expect(task.result?.outcome).toBe('traffic_exceeded');
    expect(await t.ctx.users.remainingTraffic(user.uid)).toBe(3000);
    expect(existsSync(join(dstDir, 'Big/a.bin'))).toBe(false);

    await t.ctx.users.grantDataPacket(user.uid, 'packet_50g');
    expect((await call('GET', `/api/tasks/retry/${task.id}`, { headers: user.headers })).code).toBe(0);
    const done = await waitForState(call, user.headers, task.id);
    expect(done.task).toMatchObject({ state: 0, usage: 10_000 });
    expect(await t.ctx.users.remainingTraffic(user.uid)).toBe(3000 + 50 * GB - 10_000);
  });
});
