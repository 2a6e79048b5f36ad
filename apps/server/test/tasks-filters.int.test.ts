import { existsSync, readdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, type Cloud, type CreateTaskData, type ServerTask, type TaskDetail } from '@skyferry/contract';
import { startTestApp, type SignedUpUser, type TestApp } from './support/app.ts';
import { caller, connectLocal, waitForState, writeTree } from './support/tasks.ts';

// rclone-style filters on server tasks over HTTP: stored with the task (SQLite and PostgreSQL),
// planned by a dry run (files_matched), obeyed by runs (a mirror deletes nothing the filter
// excludes), changed by an edit, and refused with a 400 naming a rule the engine cannot use.

const CONFIGS = [
  { label: 'SQLite', dialect: 'sqlite' as const },
  { label: 'PostgreSQL', dialect: 'postgres' as const },
];
const DAY = 86_400_000;

/** Relative paths of every file below a folder, sorted. */
function files(root: string, prefix = ''): string[] {
  if (!existsSync(root)) return [];
  const out: string[] = [];
  for (const e of readdirSync(root, { withFileTypes: true })) {
    if (e.isDirectory()) out.push(...files(join(root, e.name), `${prefix}${e.name}/`));
    else out.push(`${prefix}${e.name}`);
  }
  return out.sort();
}

for (const cfg of CONFIGS) {
  describe(`task filters over HTTP [${cfg.label}]`, () => {
    let t: TestApp;
    const call = caller(() => t);
    let user: SignedUpUser;
    let srcDir: string;
    let dstDir: string;
    let src: Cloud;
    let dst: Cloud;

    beforeAll(async () => {
      t = await startTestApp({ dialect: cfg.dialect, env: { SKYFERRY_WORKERS: '1' } });
      user = await t.signUp();
      srcDir = t.makeLocalFolder('source');
      dstDir = t.makeLocalFolder('target');
      src = await connectLocal(call, user.headers, srcDir, 'Laptop');
      dst = await connectLocal(call, user.headers, dstDir, 'Archive');
    });

    afterAll(async () => {
      await t?.close();
    });

    const mirror = (from: string, to: string, extra: Record<string, unknown>) =>
      call<CreateTaskData>('POST', '/api/tasks', {
        headers: user.headers,
        body: {
          task_type: 1,
          sync_mode: 'mirror',
          from_cloud: { cloud_id: src.id, paths: [from] },
          to_cloud: { cloud_id: dst.id, path: to },
          confirm_deletions: true,
          ...extra,
        },
      });

    it('stores the filter, counts its files in a dry run, and a mirror deletes nothing it excludes', async () => {
      writeTree(srcDir, {
        'Work/report.txt': 'r',
        'Work/big.iso': Buffer.alloc(20_000, 1),
        'Work/debug.log': 'l',
        'Work/cache/blob': 'b',
        'Work/old.txt': 'o',
        'Work/docs/a.md': 'a',
      });
      utimesSync(join(srcDir, 'Work/old.txt'), new Date(Date.now() - 400 * DAY), new Date(Date.now() - 400 * DAY));
      writeTree(dstDir, {
        'Mirror/extra.txt': 'extra, in scope',
        'Mirror/keep.log': 'excluded by a pattern',
        'Mirror/cache/kept': 'in an excluded folder',
        'Mirror/huge.bin': Buffer.alloc(20_000, 2),
      });
      const filter = {
        rules: ['- *.log', '- /cache/'],
        max_size: '10k',
        max_age: '1y',
      };

      const dry = await mirror('/Work', '/Mirror', { filter, dry_run: true });
      expect(dry.code).toBe(0);
      // report.txt and docs/a.md: big.iso is too big, old.txt too old, debug.log and cache/ excluded.
      expect(dry.data.plan?.files_matched).toBe(2);
      const noFilter = await mirror('/Work', '/Mirror', { dry_run: true });
      expect(noFilter.data.plan?.files_matched).toBe(6);

      const res = await mirror('/Work', '/Mirror', { filter });
      expect(res.code).toBe(0);
      const id = res.data.task?.id ?? '';
      expect(res.data.task?.filter).toEqual({ mode: 'include', categories: [], ...filter });
      const done = (await waitForState(call, user.headers, id)).task;
      expect(done.state).toBe(0);
      expect(files(join(dstDir, 'Mirror'))).toEqual(['cache/kept', 'docs/a.md', 'huge.bin', 'keep.log', 'report.txt']);

      // The task as stored: the detail and the list answer the same filter.
      const detail = await call<TaskDetail>('GET', `/api/tasks/${id}`, { headers: user.headers });
      expect(detail.data.filter).toEqual({ mode: 'include', categories: [], ...filter });

      // An edit changes it; the next run obeys the new rules (the .log files are in scope now).
      const edited = await call<ServerTask>('PUT', `/api/tasks/${id}`, {
        headers: user.headers,
        body: { filter: { include: ['*.txt', '*.log'] }, confirm_deletions: true },
      });
      expect(edited.code, edited.msg).toBe(0);
      expect(edited.data.filter).toEqual({ mode: 'include', categories: [], include: ['*.txt', '*.log'] });
      const again = await call<ServerTask>('GET', `/api/tasks/run/${id}`, { headers: user.headers });
      expect(again.code).toBe(0);
      expect((await waitForState(call, user.headers, id)).task.state).toBe(0);
      // keep.log goes (extra and in scope); big.iso has no size limit now but is no .txt or .log.
      expect(files(join(dstDir, 'Mirror'))).toEqual([
        'cache/kept',
        'debug.log',
        'docs/a.md',
        'huge.bin',
        'old.txt',
        'report.txt',
      ]);
    });

    it('the nine categories keep working alone and beside patterns', async () => {
      writeTree(srcDir, { 'Mixed/a.jpg': 'a', 'Mixed/b.jpg': 'b', 'Mixed/c.pdf': 'c', 'Mixed/private/d.jpg': 'd' });
      const categories = await mirror('/Mixed', '/Mixed', {
        filter: { mode: 'include', categories: ['picture'] },
        dry_run: true,
      });
      expect(categories.data.plan?.files_matched).toBe(3);
      const both = await mirror('/Mixed', '/Mixed', {
        filter: { mode: 'include', categories: ['picture'], exclude: ['private/', 'b.*'] },
        dry_run: true,
      });
      expect(both.data.plan?.files_matched).toBe(1);
    });

    it('refuses a rule, size or age it cannot use with a 400 naming it, in the caller language', async () => {
      const bad = async (filter: unknown, lang = 'en') => {
        const res = await call('POST', '/api/tasks', {
          headers: { ...user.headers, 'x-language': lang },
          body: {
            task_type: 1,
            sync_mode: 'mirror',
            from_cloud: { cloud_id: src.id, paths: ['/Work'] },
            to_cloud: { cloud_id: dst.id, path: '/Bad' },
            filter,
            dry_run: true,
          },
        });
        expect(res.status, JSON.stringify(filter)).toBe(400);
        expect(res.code).toBe(Code.BAD_REQUEST);
        return res.msg;
      };
      expect(await bad({ include: ['*.{jpg'] })).toContain('*.{jpg');
      expect(await bad({ rules: ['*.jpg'] })).toContain('*.jpg');
      expect(await bad({ rules: ['+ a[b'] }, 'de')).toMatch(/ungültig.*\+ a\[b/);
      expect(await bad({ max_size: 'huge' })).toContain('huge');
      expect(await bad({ max_age: 'last week' })).toContain('last week');
      expect(await bad({ min_age: '1y', max_age: '1d' })).toContain('min_age');
      // Shapes the contract refuses: a rule holding a line break, a list that is not one, nothing at all.
      await bad({ rules: ['- a\n+ b'] });
      await bad({ include: '*.jpg' });
      await bad({ mode: 'include', categories: [] });
      // An edit is held to the same rules.
      const task = await mirror('/Work', '/Edit', {});
      const id = task.data.task?.id ?? '';
      await waitForState(call, user.headers, id);
      const edit = await call('PUT', `/api/tasks/${id}`, {
        headers: user.headers,
        body: { filter: { exclude: ['[z-a]'] } },
      });
      expect(edit.status).toBe(400);
      expect(edit.msg).toContain('[z-a]');
    });
  });
}
