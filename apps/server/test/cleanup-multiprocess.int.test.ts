/**
 * Deleting clean-up results from two API instances sharing one database (as two processes behind
 * a load balancer do): deletions of one scan hold a lease on the scan's row, so two calls at once
 * (each keeping the copy the other deletes) never remove every copy of a duplicate group, and a
 * call that cannot get the lease in time answers 409007 "a deletion of this scan is already running".
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Code,
  message,
  type Cloud,
  type CleanupTask,
  type DeleteCleanupData,
  type DuplicateFilesPage,
} from '@skyferry/contract';
import { CleanupRepository } from '../src/repositories/cleanup.ts';
import { startTestApp, type SignedUpUser, type TestApp } from './support/app.ts';
import { caller, connectLocal, writeTree } from './support/tasks.ts';

const KB = 1024;

/** The files in a folder (the trash left out). */
function files(root: string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((n) => n !== '.skyferry-trash')
    .sort();
}

/** Makes moving to the trash slow on an instance: without a shared lock both calls would see the other copy still there. */
function slowTrash(t: TestApp, ms: number): void {
  const previous = t.ctx.clouds.open;
  t.ctx.clouds.open = async (identity, cloudId) => {
    const opened = await previous.call(t.ctx.clouds, identity, cloudId);
    const provider = new Proxy(opened.provider, {
      get: (target, prop, receiver) => {
        if (prop === 'trash' && target.trash) {
          const trash = target.trash.bind(target);
          return async (path: string) => {
            await sleep(ms);
            return trash(path);
          };
        }
        const value: unknown = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    return { ...opened, provider };
  };
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`clean-up deletions from two API instances on one database [${dialect}]`, () => {
    let a: TestApp;
    let b: TestApp;
    const callA = caller(() => a);
    const callB = caller(() => b);
    let user: SignedUpUser;

    beforeAll(async () => {
      const secret = randomBytes(32).toString('base64url');
      a = await startTestApp({ dialect, env: { SKYFERRY_WORKERS: '1', SKYFERRY_SECRET: secret } });
      // The second instance: same database, secret and local-folder root; no workers of its own.
      b = await startTestApp({
        dialect,
        env: {
          SKYFERRY_WORKERS: '0',
          SKYFERRY_SECRET: secret,
          DATABASE_URL: a.databaseUrl,
          SKYFERRY_LOCAL_ROOTS: a.localRoot,
        },
      });
      slowTrash(a, 400);
      slowTrash(b, 400);
      user = await a.signUp();
    }, 60_000);

    afterAll(async () => {
      await b?.close();
      await a?.close();
    });

    /** A folder with two identical files, scanned for duplicates; answers the scan and the two copies. */
    async function scannedPair(): Promise<{ dir: string; cloud: Cloud; taskId: string; ids: string[] }> {
      const dir = a.makeLocalFolder();
      const content = randomBytes(4 * KB);
      writeTree(dir, { 'p.bin': content, 'q.bin': content });
      const cloud = await connectLocal(callA, user.headers, dir);
      const run = await callA<{ task_id: string }>('POST', '/api/cleanup/run', {
        headers: user.headers,
        body: { cloud_id: cloud.id, imode: 2 },
      });
      expect(run.code, run.msg).toBe(0);
      const taskId = run.data.task_id;
      const deadline = Date.now() + 30_000;
      for (;;) {
        const p = await callB<CleanupTask>('GET', `/api/cleanup/poll-progress/${taskId}`, { headers: user.headers });
        expect(p.code, p.msg).toBe(0);
        if (p.data.status !== 1) break;
        if (Date.now() > deadline) throw new Error('scan stuck');
        await sleep(25);
      }
      const page = await callB<DuplicateFilesPage>('GET', `/api/cleanup/duplicate-files?task_id=${taskId}`, {
        headers: user.headers,
      });
      const members = page.data.items[0]?.files ?? [];
      expect(members.map((f) => f.path)).toEqual(['/p.bin', '/q.bin']);
      return { dir, cloud, taskId, ids: members.map((f) => f.id) };
    }

    it('two deletions at once on the two instances, each keeping the copy the other deletes, remove one copy at most', async () => {
      for (let round = 0; round < 3; round++) {
        const { dir, taskId, ids } = await scannedPair();
        const [viaA, viaB] = await Promise.all([
          callA<DeleteCleanupData>('DELETE', '/api/cleanup/duplicate-files', {
            headers: user.headers,
            body: { task_id: taskId, ids: [ids[0]] },
          }),
          callB<DeleteCleanupData>('DELETE', '/api/cleanup/duplicate-files', {
            headers: user.headers,
            body: { task_id: taskId, ids: [ids[1]] },
          }),
        ]);
        expect(files(dir)).toHaveLength(1);
        const deleted = [viaA, viaB].map((r) => (r.code === 0 ? r.data.deleted : 0)).sort();
        expect(deleted).toEqual([0, 1]);
        // The one that came second found its kept copy gone (deleted by the first) and refused.
        const second = [viaA, viaB].find((r) => r.code !== 0 || r.data.deleted === 0);
        expect({ code: second?.code, msg: second?.msg }).toEqual({
          code: Code.BAD_REQUEST,
          msg: message('en', 'cleanup_delete_last_copy'),
        });
        // The lease is released once both are done.
        const row = await new CleanupRepository(a.ctx.db.kysely).getById(taskId);
        expect(row?.deleting_until).toBeNull();
        expect(row?.deleting_by).toBeNull();
      }
    });

    it('while another instance holds the lease, a deletion waits briefly, then answers 409007 (not the upload-gap 409006) with a clear message; an expired lease does not block', async () => {
      const { dir, taskId, ids } = await scannedPair();
      const repo = new CleanupRepository(b.ctx.db.kysely);
      // Another process is deleting from this scan (its lease runs for a minute).
      expect(await repo.claimDeletion(taskId, 'other-process', Date.now(), Date.now() + 60_000)).toBe(true);
      const started = Date.now();
      const refused = await callA('DELETE', '/api/cleanup/duplicate-files', {
        headers: { ...user.headers, 'accept-language': 'fr' },
        body: { task_id: taskId, ids: [ids[0]] },
      });
      expect(Date.now() - started).toBeGreaterThanOrEqual(4_000);
      expect(refused.status).toBe(409);
      expect(refused.code).toBe(Code.CLEANUP_DELETION_RUNNING);
      expect(refused.msg).toBe(message('fr', 'cleanup_deletion_running'));
      expect(message('en', 'cleanup_deletion_running')).toMatch(/deletion of this scan is already running/);
      expect(files(dir)).toEqual(['p.bin', 'q.bin']);
      // That process died: its lease expired, and the next deletion goes ahead.
      await a.ctx.db.kysely
        .updateTable('cleanup_tasks')
        .set({ deleting_until: Date.now() - 1 })
        .where('id', '=', taskId)
        .execute();
      const done = await callB<DeleteCleanupData>('DELETE', '/api/cleanup/duplicate-files', {
        headers: user.headers,
        body: { task_id: taskId, ids: [ids[0]] },
      });
      expect(done.code, done.msg).toBe(0);
      expect(done.data.deleted).toBe(1);
      expect(files(dir)).toEqual(['q.bin']);
      // Another user's scan is still 404, lease or not.
      const stranger = await b.signUp();
      const foreign = await callB('DELETE', '/api/cleanup/duplicate-files', {
        headers: stranger.headers,
        body: { task_id: taskId, ids: [ids[1]] },
      });
      expect(foreign.code).toBe(Code.NOT_FOUND);
    }, 30_000);
  });
}
