import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  TaskState,
  type AuthorizationData,
  type Cloud,
  type CreateTaskData,
  type Envelope,
  type TaskDetail,
} from '@skyferry/contract';
import {
  createDatabase,
  startApacheWebdav,
  startLatencyProxy,
  type LatencyProxy,
  type WebdavServer,
} from '@skyferry/testing';
import { Proc, fetchEnvelope } from '../support/process.ts';

/**
 * Deleting a cloud cancels the tasks running with it at once (state 4), and the transfer stops:
 * an API process and a separate worker process (the queue carries the cancel across), with both
 * queue kinds, and a real slow transfer (Apache WebDAV behind a 200 ms latency proxy).
 */

const SERVER = join(import.meta.dirname, '../../src/main.ts');
const WORKER = join(import.meta.dirname, '../../src/worker.ts');
const FILES = 60;

const CONFIGS = [
  { label: 'PostgreSQL and BullMQ', redis: true },
  { label: 'SQLite and the database queue', redis: false },
];

for (const cfg of CONFIGS) {
  describe(`deleting a cloud a task is running with [${cfg.label}]`, () => {
    const root = mkdtempSync(join(tmpdir(), 'skyferry-clouddel-'));
    const localRoot = join(root, 'local');
    let api: Proc;
    let worker: Proc;
    let dav: WebdavServer;
    let slow: LatencyProxy;
    let url = '';
    let token = '';

    beforeAll(async () => {
      mkdirSync(join(localRoot, 'source'), { recursive: true });
      for (let i = 0; i < FILES; i++) writeFileSync(join(localRoot, 'source', `file-${i}.bin`), randomBytes(32 * 1024));
      dav = await startApacheWebdav();
      slow = await startLatencyProxy({
        target: { host: '127.0.0.1', port: Number(new URL(dav.url).port) },
        rttMs: 200,
      });
      const env: Record<string, string> = {
        DATABASE_URL: cfg.redis ? await createDatabase(inject('postgresUrl')) : join(root, 'data', 'skyferry.db'),
        SKYFERRY_DATA_DIR: join(root, 'data'),
        SKYFERRY_SECRET: randomBytes(32).toString('base64url'),
        SKYFERRY_LOCAL_ROOTS: localRoot,
        SKYFERRY_WEB_DIST: join(root, 'no-web'),
        // The WebDAV server is on loopback.
        SKYFERRY_ALLOW_PRIVATE_NETWORKS: 'true',
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'info',
        ...(cfg.redis
          ? { REDIS_URL: inject('redisUrl'), SKYFERRY_REDIS_PREFIX: `cd-${randomUUID().slice(0, 8)}` }
          : {}),
      };
      api = new Proc(SERVER, { ...env, SKYFERRY_WORKERS: '0' });
      url = String((await api.ready).url);
      worker = new Proc(WORKER, { ...env, SKYFERRY_WORKERS: '2' });
      await worker.ready;
      const signup = await call<AuthorizationData>('POST', '/api/account/signup', {
        email: `owner-${randomUUID().slice(0, 8)}@example.com`,
        password: 'correct horse battery staple',
      });
      token = signup.data.access_token;
    });

    afterAll(async () => {
      await Promise.all([api?.stop(), worker?.stop()]);
      await slow?.stop();
      await dav?.stop();
      rmSync(root, { recursive: true, force: true });
    });

    const call = <T>(method: string, path: string, body?: unknown): Promise<Envelope<T>> =>
      fetchEnvelope<T>(url, method, path, body, token);

    async function connect(kind: string, credentials: Record<string, unknown>): Promise<string> {
      const res = await call<Cloud>('POST', '/api/clouds', { cloud_name: kind, credentials });
      expect(res.code, res.msg).toBe(0);
      return res.data.id;
    }

    const written = (folder: string) => {
      const dir = join(dav.dir, folder);
      return existsSync(dir) ? readdirSync(dir).filter((f) => f.startsWith('file-')).length : 0;
    };

    /** Starts a slow transfer and waits until it has moved a few files. */
    async function runningTask(source: string, target: string, folder: string): Promise<string> {
      const created = await call<CreateTaskData>('POST', '/api/tasks', {
        task_type: 0,
        from_cloud: { cloud_id: source, paths: ['/'] },
        to_cloud: { cloud_id: target, path: `/${folder}` },
      });
      expect(created.code, created.msg).toBe(0);
      const id = created.data.task?.id ?? '';
      const deadline = Date.now() + 60_000;
      for (;;) {
        const task = await call<TaskDetail>('GET', `/api/tasks/${id}`);
        if (task.data.state === TaskState.running && written(folder) >= 3) return id;
        expect(task.data.state, 'the transfer ended before it could be stopped').not.toBe(TaskState.completed);
        if (Date.now() > deadline) throw new Error(`task ${id} never got going: state ${task.data.state}`);
        await sleep(50);
      }
    }

    /** The files written settle well before the rest would have been, and the task stays canceled. */
    async function expectStopped(id: string, folder: string): Promise<void> {
      const task = await call<TaskDetail>('GET', `/api/tasks/${id}`);
      expect(task.data.state).toBe(TaskState.canceled);
      // Files in flight when the cancel arrives may still land; then nothing more.
      await sleep(2_500);
      const settled = written(folder);
      await sleep(2_500);
      expect(written(folder)).toBe(settled);
      expect(settled).toBeLessThan(FILES);
      const later = await call<TaskDetail>('GET', `/api/tasks/${id}`);
      expect(later.data.state).toBe(TaskState.canceled);
      const list = await call<{ items: Array<{ id: string }> }>('POST', '/api/tasks/list', { completed: 0 });
      expect(list.data.items.map((t) => t.id)).not.toContain(id);
    }

    const davCredentials = () => ({
      url: `http://127.0.0.1:${slow.port}/`,
      username: dav.username,
      password: dav.password,
    });

    it('deleting the target cloud cancels the task at once, and the worker stops writing', async () => {
      const source = await connect('local', { path: join(localRoot, 'source') });
      const target = await connect('webdav', davCredentials());
      const id = await runningTask(source, target, 'to-deleted-target');
      const removed = await call('DELETE', `/api/clouds/${target}`);
      expect(removed.code).toBe(0);
      await expectStopped(id, 'to-deleted-target');
    });

    it('deleting the source cloud cancels the task at once, and the worker stops writing', async () => {
      // The source of the first test stays; its deleted target can be connected again, as a new cloud.
      const before = await call<{ clouds: Cloud[] }>('GET', '/api/v2/clouds/me');
      const source = before.data.clouds.find((c) => c.cloud_name === 'local')?.id ?? '';
      const target = await connect('webdav', davCredentials());
      const id = await runningTask(source, target, 'from-deleted-source');
      const removed = await call('DELETE', `/api/clouds/${source}`);
      expect(removed.code).toBe(0);
      await expectStopped(id, 'from-deleted-source');
      // The other cloud stays, and the worker logged no crash.
      const after = await call<{ clouds: Cloud[] }>('GET', '/api/v2/clouds/me');
      expect(after.data.clouds.map((c) => c.id)).toEqual([target]);
      expect(worker.lines.filter((l) => l.msg === 'task run crashed')).toEqual([]);
    });
  });
}
