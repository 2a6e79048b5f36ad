import { existsSync, readdirSync, readFileSync, rmSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Code,
  type Cloud,
  type CreateTaskData,
  type ListRunsData,
  type RunFilesData,
  type ServerTask,
  type TaskDetail,
} from '@skyferry/contract';
import type { TransferPlan } from '@skyferry/engine';
import { ApiError } from '../src/http/errors.ts';
import { confirmDeletionsError } from '../src/services/tasks/tasks-service.ts';
import { startTestApp, type SignedUpUser, type TestApp } from './support/app.ts';
import { caller, connectLocal, waitForState, writeTree } from './support/tasks.ts';

// Issue 35 through the API: a two-way sync between two local folders with a file changed on both
// sides (its conflict copy was refused for the '/' of the account path in its name); a file and a
// folder of one name counted as a conflict with its reason; a resync asked for by the run call, the
// way past a side found emptied; the deletion prompt naming the side that loses the files.

/** Relative path -> content of every file below a folder. */
function tree(root: string, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  if (!existsSync(root)) return out;
  for (const e of readdirSync(root, { withFileTypes: true })) {
    if (e.name === '.skyferry-trash') continue; // where the local disk puts what a sync deletes
    if (e.isDirectory()) Object.assign(out, tree(join(root, e.name), `${prefix}${e.name}/`));
    else out[`${prefix}${e.name}`] = readFileSync(join(root, e.name), 'utf8');
  }
  return out;
}

const HOUR = 3600_000;
const today = () => new Date().toISOString().slice(0, 10);

describe('two-way conflicts, clashes and resync through the API [SQLite, in-process queue]', () => {
  let t: TestApp;
  const call = caller(() => t);
  let user: SignedUpUser;

  beforeAll(async () => {
    t = await startTestApp({ dialect: 'sqlite', env: { SKYFERRY_WORKERS: '2' } });
    user = await t.signUp();
  });
  afterAll(async () => {
    await t?.close();
  });

  const create = (body: Record<string, unknown>) =>
    call<CreateTaskData>('POST', '/api/tasks', { headers: user.headers, body });
  const finish = async (id: string) => (await waitForState(call, user.headers, id)).task;
  const runAgain = async (id: string, query = '') => {
    const res = await call<ServerTask>('GET', `/api/tasks/run/${id}${query}`, { headers: user.headers });
    expect(res.code, res.msg).toBe(0);
    return finish(id);
  };
  const twoWay = (src: Cloud, dst: Cloud) =>
    create({
      task_type: 1,
      sync_mode: 'two_way',
      from_cloud: { cloud_id: src.id, paths: ['/'] },
      to_cloud: { cloud_id: dst.id, path: '/' },
    });

  it('two local folders without aliases: a file changed on both sides is kept both ways under a portable name', async () => {
    const p1 = t.makeLocalFolder('p1');
    const p2 = t.makeLocalFolder('p2');
    // No alias: each cloud's account is its folder's path, which has a '/'.
    const src = await connectLocal(call, user.headers, p1);
    const dst = await connectLocal(call, user.headers, p2);
    expect(dst.cloud_account).toContain('/');
    writeTree(p1, { 'f.txt': 'base', 'other.txt': 'o' });
    const res = await twoWay(src, dst);
    expect(res.code, res.msg).toBe(0);
    const first = await finish(res.data.task?.id ?? '');
    expect(first.state).toBe(0);

    writeTree(p1, { 'f.txt': 'changed on p1, the newer' });
    writeTree(p2, { 'f.txt': 'changed on p2' });
    const older = new Date(Date.now() - HOUR);
    utimesSync(join(p2, 'f.txt'), older, older);
    const second = await runAgain(first.id);
    expect(second.result?.error ?? null).toBeNull();
    expect(second.state).toBe(0);
    expect(second.result).toMatchObject({ conflicts: 1, failed: 0, added: 0, updated: 0, deleted: 0, skipped: 1 });
    // The two clouds read alike (both local folders): the copy names the losing side by its folder.
    const copy = `f (conflict ${today()} from p2).txt`;
    const both = { 'f.txt': 'changed on p1, the newer', [copy]: 'changed on p2', 'other.txt': 'o' };
    expect(tree(p1)).toEqual(both);
    expect(tree(p2)).toEqual(both);
    // Settled: nothing left to do.
    const third = await runAgain(first.id);
    expect(third.state).toBe(0);
    expect(third.result).toMatchObject({ conflicts: 0, added: 0, updated: 0, deleted: 0, skipped: 3 });
  });

  it('a file and a folder of one name is one conflict with its reason in the result list, not a failure', async () => {
    const a = t.makeLocalFolder();
    const b = t.makeLocalFolder();
    const src = await connectLocal(call, user.headers, a, 'Laptop');
    const dst = await connectLocal(call, user.headers, b, 'NAS');
    writeTree(a, { 'Docs/x/inner.txt': 'a folder here', 'Docs/ok.txt': 'ok', 'Docs/ok2.txt': 'ok2' });
    writeTree(b, { 'Docs/x': 'a file there' });
    const res = await create({
      task_type: 0,
      from_cloud: { cloud_id: src.id, paths: ['/Docs'] },
      to_cloud: { cloud_id: dst.id, path: '/' },
    });
    expect(res.code, res.msg).toBe(0);
    const done = await finish(res.data.task?.id ?? '');
    expect(done.state).toBe(5);
    // Three names: two added, one a conflict; none failed, none skipped, none left out.
    expect(done.result).toMatchObject({ added: 2, conflicts: 1, failed: 0, skipped: 0 });
    const detail = (await call<TaskDetail>('GET', `/api/tasks/${done.id}`, { headers: user.headers })).data;
    expect(detail.result_list.map((f) => `${f.sourceFile.parent}/${f.sourceFile.name} ${f.reason}`)).toEqual([
      '/Docs/x kind_mismatch',
    ]);
    expect(detail.result_list[0]?.message).toMatch(/a file and a folder have the same name/);
    expect(tree(b)).toEqual({ 'Docs/x': 'a file there', 'Docs/ok.txt': 'ok', 'Docs/ok2.txt': 'ok2' });
    // The run's history lists it once, as a conflict with its reason, not as a failure.
    const runs = await call<ListRunsData>('GET', `/api/tasks/${done.id}/runs`, { headers: user.headers });
    const runId = runs.data.items[0]?.id ?? '';
    const rows = await call<RunFilesData>('GET', `/api/tasks/${done.id}/runs/${runId}/files`, {
      headers: user.headers,
    });
    expect(rows.data.items.map((r) => `${r.outcome} ${r.path} ${r.reason}`).sort()).toEqual([
      'added /Docs/ok.txt new',
      'added /Docs/ok2.txt new',
      'conflict /Docs/x kind_mismatch',
    ]);
  });

  it('a side emptied since the last run stops the run; run with resync=1 it merges, deleting nothing, and the next runs go on', async () => {
    const a = t.makeLocalFolder();
    const b = t.makeLocalFolder();
    const src = await connectLocal(call, user.headers, a, 'Laptop');
    const dst = await connectLocal(call, user.headers, b, 'NAS');
    writeTree(a, { 'a.txt': 'a', 'b.txt': 'b', 'd/c.txt': 'c' });
    const res = await twoWay(src, dst);
    const id = res.data.task?.id ?? '';
    expect((await finish(id)).state).toBe(0);
    expect(Object.keys(tree(b)).sort()).toEqual(['a.txt', 'b.txt', 'd/c.txt']);

    // The target is emptied (a disk swapped, a folder cleared by mistake): the run stops, nothing changes.
    rmSync(join(b, 'a.txt'));
    rmSync(join(b, 'b.txt'));
    rmSync(join(b, 'd'), { recursive: true });
    const stopped = await runAgain(id);
    expect(stopped.state).toBe(3);
    expect(stopped.result?.error?.code).toBe('side_emptied');
    expect(stopped.result?.error?.message).toMatch(/resync/);
    expect(Object.keys(tree(a)).sort()).toEqual(['a.txt', 'b.txt', 'd/c.txt']);

    // Resync: only for two-way syncs, and only '1' asks for it.
    const bad = await call<ServerTask>('GET', `/api/tasks/run/${id}?resync=yes`, { headers: user.headers });
    expect([bad.status, bad.code]).toEqual([400, Code.BAD_REQUEST]);
    const resynced = await runAgain(id, '?resync=1');
    expect(resynced.state).toBe(0);
    expect(resynced.result).toMatchObject({ added: 3, deleted: 0, failed: 0 });
    expect(tree(b)).toEqual(tree(a));

    // Given for that run only: the next run is an ordinary one, and a deletion on one side now goes across.
    rmSync(join(b, 'b.txt'));
    const next = await runAgain(id);
    expect(next.state).toBe(0);
    expect(next.result).toMatchObject({ deleted: 1, added: 0 });
    expect(Object.keys(tree(a)).sort()).toEqual(['a.txt', 'd/c.txt']);
  });

  it('resync=1 is refused for a task that is no two-way sync', async () => {
    const a = t.makeLocalFolder();
    const b = t.makeLocalFolder();
    const src = await connectLocal(call, user.headers, a);
    const dst = await connectLocal(call, user.headers, b);
    writeTree(a, { 'x.txt': 'x' });
    const res = await create({
      task_type: 1,
      sync_mode: 'mirror',
      from_cloud: { cloud_id: src.id, paths: ['/'] },
      to_cloud: { cloud_id: dst.id, path: '/' },
    });
    const id = res.data.task?.id ?? '';
    expect((await finish(id)).state).toBe(0);
    const refused = await call<ServerTask>('GET', `/api/tasks/run/${id}?resync=1`, { headers: user.headers });
    expect([refused.status, refused.code]).toEqual([400, Code.BAD_REQUEST]);
    expect(refused.msg).toMatch(/resync/);
  });

  it('the deletion prompt (409005) names the side that would lose more than half of its files', () => {
    const planWith = (source: { files: number; of: number }, target: { files: number; of: number }) =>
      ({ deletes: { needsConfirmation: true, sides: { source, target } } }) as unknown as TransferPlan;
    const onSource = confirmDeletionsError(planWith({ files: 30, of: 40 }, { files: 0, of: 10 }));
    expect(onSource).toBeInstanceOf(ApiError);
    expect(onSource.code).toBe(Code.CONFIRM_DELETIONS);
    expect(onSource.key).toBe('confirm_deletions_source');
    expect(onSource.data).toEqual({ count: 30, total: 40, side: 'source' });
    const onTarget = confirmDeletionsError(planWith({ files: 0, of: 4 }, { files: 6, of: 10 }));
    expect(onTarget.key).toBe('confirm_deletions');
    expect(onTarget.data).toEqual({ count: 6, total: 10, side: 'target' });
  });
});
