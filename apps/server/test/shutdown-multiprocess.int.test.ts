import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { AuthorizationData, Cloud, CreateTaskData, Envelope, TaskDetail } from '@skyferry/contract';
import { createDatabase } from '@skyferry/testing';
import { Proc, fetchEnvelope } from './support/process.ts';

const SERVER = join(import.meta.dirname, '../src/main.ts');
const WORKER = join(import.meta.dirname, '../src/worker.ts');
const FILES = 1500;
/** Far longer than the test waits: a run resumed this soon was handed back, not left to its lease. */
const LEASE_MS = 60_000;

/** Every finished file under a folder (not the temporary files of writes in progress), with its inode. */
function filesOf(root: string): Map<string, { ino: number; mtimeNs: bigint }> {
  const out = new Map<string, { ino: number; mtimeNs: bigint }>();
  for (const e of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!e.isFile() || e.name.startsWith('.skyferry-tmp-')) continue;
    const path = join(e.parentPath, e.name);
    try {
      const st = statSync(path, { bigint: true });
      out.set(path.slice(root.length), { ino: Number(st.ino), mtimeNs: st.mtimeNs });
    } catch {
      // renamed away between the listing and the stat
    }
  }
  return out;
}

const exited = (p: Proc) =>
  new Promise<{ code: number | null; at: number }>((resolve) => {
    if (p.child.exitCode !== null) resolve({ code: p.child.exitCode, at: Date.now() });
    else p.child.once('exit', (code) => resolve({ code, at: Date.now() }));
  });

const CONFIGS = [
  { label: 'SQLite and the database queue', redis: false },
  { label: 'PostgreSQL and BullMQ', redis: true },
];

for (const cfg of CONFIGS) {
  describe(`graceful shutdown [${cfg.label}]`, () => {
    const root = mkdtempSync(join(tmpdir(), 'skyferry-stop-'));
    const localRoot = join(root, 'local');
    const procs: Proc[] = [];
    let api: Proc;
    let url = '';
    let env: Record<string, string>;

    beforeAll(async () => {
      mkdirSync(localRoot, { recursive: true });
      env = {
        DATABASE_URL: cfg.redis ? await createDatabase(inject('postgresUrl')) : join(root, 'data', 'skyferry.db'),
        SKYFERRY_DATA_DIR: join(root, 'data'),
        SKYFERRY_SECRET: randomBytes(32).toString('base64url'),
        SKYFERRY_LOCAL_ROOTS: localRoot,
        SKYFERRY_WEB_DIST: join(root, 'no-web'),
        SKYFERRY_TASK_LEASE_MS: String(LEASE_MS),
        SKYFERRY_SHUTDOWN_TIMEOUT_MS: '20000',
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'info',
        ...(cfg.redis
          ? { REDIS_URL: inject('redisUrl'), SKYFERRY_REDIS_PREFIX: `stop-${randomUUID().slice(0, 8)}` }
          : {}),
      };
      api = new Proc(SERVER, { ...env, SKYFERRY_WORKERS: '0' });
      procs.push(api);
      url = String((await api.ready).url);
    });

    afterAll(async () => {
      await Promise.all(procs.map((p) => p.stop()));
      rmSync(root, { recursive: true, force: true });
    });

    const call = <T>(method: string, path: string, body?: unknown, token?: string): Promise<Envelope<T>> =>
      fetchEnvelope<T>(url, method, path, body, token);

    it('SIGTERM mid-run: the worker checkpoints, hands the task back and exits; a restarted worker finishes it at once, writing no file twice', async () => {
      const signup = await call<AuthorizationData>('POST', '/api/account/signup', {
        email: `stop-${randomUUID().slice(0, 6)}@example.com`,
        password: 'a long enough password',
      });
      const token = signup.data.access_token;
      const srcDir = join(localRoot, 'source');
      const dstDir = join(localRoot, 'target');
      const contents = new Map<string, Buffer>();
      for (let i = 0; i < FILES; i++) {
        const rel = `/Data/${i % 10}/file-${i}.bin`;
        mkdirSync(join(srcDir, 'Data', String(i % 10)), { recursive: true });
        const body = randomBytes(2_000 + (i % 50) * 100);
        writeFileSync(join(srcDir, rel), body);
        contents.set(rel, body);
      }
      mkdirSync(dstDir, { recursive: true });
      const src = await call<Cloud>(
        'POST',
        '/api/clouds',
        { cloud_name: 'local', credentials: { path: srcDir } },
        token,
      );
      const dst = await call<Cloud>(
        'POST',
        '/api/clouds',
        { cloud_name: 'local', credentials: { path: dstDir } },
        token,
      );
      expect([src.code, dst.code]).toEqual([0, 0]);

      // One worker, which also serves its health and metrics on a port of its own.
      const first = new Proc(WORKER, { ...env, SKYFERRY_WORKERS: '1', SKYFERRY_METRICS_PORT: '0' });
      procs.push(first);
      const ready = await first.ready;
      const health = await fetch(`http://127.0.0.1:${String(ready.metricsPort)}/healthz`);
      expect(health.status).toBe(200);

      const created = await call<CreateTaskData>(
        'POST',
        '/api/tasks',
        {
          task_type: 0,
          from_cloud: { cloud_id: src.data.id, paths: ['/Data'] },
          to_cloud: { cloud_id: dst.data.id, path: '/' },
        },
        token,
      );
      expect(created.code).toBe(0);
      const taskId = created.data.task?.id ?? '';

      // SIGTERM once part of the files are written.
      const deadline = Date.now() + 60_000;
      while (filesOf(dstDir).size < FILES / 10) {
        if (Date.now() > deadline) throw new Error(`the run never got going: ${JSON.stringify(first.lines.slice(-3))}`);
        await sleep(5);
      }
      // The worker's own metrics: the run going on in it.
      const scraped = await (await fetch(`http://127.0.0.1:${String(ready.metricsPort)}/metrics`)).text();
      expect(scraped).toMatch(/^skyferry_task_runs_in_progress\{process="worker"\} 1$/m);
      expect(scraped).toMatch(/^skyferry_transfer_files_total\{outcome="done",process="worker"\} [1-9]/m);
      const stopped = exited(first);
      const signalled = Date.now();
      first.child.kill('SIGTERM');
      const { code, at } = await stopped;
      expect(code).toBe(0);
      expect(at - signalled).toBeLessThan(20_000);
      const msgs = first.lines.map((l) => l.msg);
      expect(first.lines.some((l) => l.msg === 'task run interrupted' && l.reason === 'shutdown')).toBe(true);
      expect(msgs).toContain('shut down');
      expect(msgs).not.toContain('task run finished');
      const atStop = filesOf(dstDir);
      expect(atStop.size).toBeGreaterThan(0);
      expect(atStop.size).toBeLessThan(FILES);

      // The task is not lost: it waits for a worker (not failed, not stuck as running).
      const waiting = await call<TaskDetail>('GET', `/api/tasks/${taskId}`, undefined, token);
      expect([1, 2, 8]).toContain(waiting.data.state);

      const second = new Proc(WORKER, { ...env, SKYFERRY_WORKERS: '1' });
      procs.push(second);
      await second.ready;
      const restarted = Date.now();
      let task: TaskDetail | undefined;
      while (Date.now() < restarted + 60_000) {
        task = (await call<TaskDetail>('GET', `/api/tasks/${taskId}`, undefined, token)).data;
        if ([0, 3, 4, 5, 6, 10].includes(task.state)) break;
        await sleep(50);
      }
      expect(task?.state).toBe(0);
      expect(task?.finished_counts).toBe(FILES);
      // Resumed at once: the job was handed back, not left to its lease (a shutdown uses no attempt).
      const started = second.lines.find((l) => l.msg === 'task run started' && l.task === taskId);
      expect(started).toBeDefined();
      expect(Number(started?.time) - restarted).toBeLessThan(LEASE_MS / 4);

      // Every file arrived whole, and none that was written before the stop was written again.
      const atEnd = filesOf(dstDir);
      expect(atEnd.size).toBe(FILES);
      for (const [rel, body] of contents) expect(readFileSync(join(dstDir, rel)).equals(body), rel).toBe(true);
      const rewritten = [...atStop].filter(([rel, f]) => {
        const now = atEnd.get(rel);
        return now?.ino !== f.ino || now.mtimeNs !== f.mtimeNs;
      });
      expect(rewritten.map(([rel]) => rel)).toEqual([]);
    }, 180_000);

    it('SIGTERM to an API process: it stops taking requests and exits cleanly', async () => {
      const other = new Proc(SERVER, { ...env, SKYFERRY_WORKERS: '0' });
      procs.push(other);
      const base = String((await other.ready).url);
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      const stopped = exited(other);
      other.child.kill('SIGTERM');
      expect((await stopped).code).toBe(0);
      await expect(fetch(`${base}/healthz`)).rejects.toThrow();
    }, 60_000);
  });
}
