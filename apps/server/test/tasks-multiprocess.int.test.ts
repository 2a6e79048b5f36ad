import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type {
  AuthorizationData,
  Cloud,
  CreateTaskData,
  Envelope,
  ListTasksData,
  PollProgressData,
} from '@skyferry/contract';
import { createDatabase } from '@skyferry/testing';
import { Proc, fetchEnvelope } from './support/process.ts';

const SERVER = join(import.meta.dirname, '../src/main.ts');
const WORKER = join(import.meta.dirname, '../src/worker.ts');
const TASKS = 50;
// Enough files that a run lasts long enough to be caught under way on a busy machine.
const FILES_PER_TASK = 48;

interface RunLog {
  task: string;
  pid: number;
  attempt: number;
  start: number;
  end?: number;
  state?: number;
}

/** Runs of tasks as the worker logs tell them. */
function runsOf(procs: Proc[], killedAt: Map<number, number>): RunLog[] {
  const runs: RunLog[] = [];
  for (const p of procs) {
    const open = new Map<string, RunLog>();
    for (const line of p.lines) {
      if (line.msg === 'task run started') {
        const run: RunLog = {
          task: String(line.task),
          pid: Number(line.pid),
          attempt: Number(line.attempt),
          start: Number(line.time),
        };
        open.set(run.task, run);
        runs.push(run);
      } else if (line.msg === 'task run finished' || line.msg === 'task run interrupted') {
        const run = open.get(String(line.task));
        if (run) {
          run.end = Number(line.time);
          if (line.state !== undefined) run.state = Number(line.state);
          open.delete(run.task);
        }
      }
    }
    const killed = killedAt.get(p.pid);
    if (killed !== undefined) for (const run of open.values()) run.end = killed;
  }
  return runs;
}

const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

const CONFIGS = [
  { label: 'PostgreSQL and BullMQ', redis: true },
  { label: 'SQLite and the database queue', redis: false },
];

for (const cfg of CONFIGS) {
  describe(`tasks across processes [${cfg.label}]`, () => {
    const root = mkdtempSync(join(tmpdir(), 'skyferry-mp-'));
    const localRoot = join(root, 'local');
    const procs: Proc[] = [];
    let api: Proc;
    let doomed: Proc;
    let survivor: Proc;
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
        SKYFERRY_TASK_LEASE_MS: '3000',
        SKYFERRY_TASKS_PER_USER: '8',
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'info',
        ...(cfg.redis
          ? { REDIS_URL: inject('redisUrl'), SKYFERRY_REDIS_PREFIX: `mp-${randomUUID().slice(0, 8)}` }
          : {}),
      };
      // The API process first: it creates the database schema.
      api = new Proc(SERVER, { ...env, SKYFERRY_WORKERS: '0' });
      procs.push(api);
      url = String((await api.ready).url);
      // Two worker processes, as on two other machines.
      doomed = new Proc(WORKER, { ...env, SKYFERRY_WORKERS: '3' });
      survivor = new Proc(WORKER, { ...env, SKYFERRY_WORKERS: '3' });
      procs.push(doomed, survivor);
      await Promise.all([doomed.ready, survivor.ready]);
    });

    afterAll(async () => {
      await Promise.all(procs.map((p) => p.stop()));
      rmSync(root, { recursive: true, force: true });
    });

    const call = <T>(method: string, path: string, body?: unknown, token?: string): Promise<Envelope<T>> =>
      fetchEnvelope<T>(url, method, path, body, token);

    it(`runs ${TASKS} tasks on two worker processes, one killed with SIGKILL mid-run: all complete, none twice at once`, async () => {
      const signup = await call<AuthorizationData>('POST', '/api/account/signup', {
        email: `mp-${randomUUID().slice(0, 6)}@example.com`,
        password: 'a long enough password',
      });
      const token = signup.data.access_token;
      const srcDir = join(localRoot, 'source');
      const dstDir = join(localRoot, 'target');
      const files: Record<string, string> = {};
      for (let i = 0; i < FILES_PER_TASK; i++) {
        const rel = `Data/${i % 4}/file-${i}.bin`;
        mkdirSync(join(srcDir, 'Data', String(i % 4)), { recursive: true });
        writeFileSync(join(srcDir, rel), randomBytes(20_000 + i * 100));
        files[rel] = sha(join(srcDir, rel));
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
      const ids: string[] = [];
      for (let n = 0; n < TASKS; n++) {
        const res = await call<CreateTaskData>(
          'POST',
          '/api/tasks',
          {
            task_type: 0,
            from_cloud: { cloud_id: src.data.id, paths: ['/Data'] },
            to_cloud: { cloud_id: dst.data.id, path: `/Out-${n}` },
          },
          token,
        );
        expect(res.code).toBe(0);
        ids.push(res.data.task?.id ?? '');
      }

      // Kill the doomed worker while it is in the middle of runs, after a few tasks are done.
      const killedAt = new Map<number, number>();
      let polledRunning = false;
      const deadline = Date.now() + 60_000;
      for (;;) {
        const live = runsOf([doomed], killedAt);
        const inFlight = live.filter((r) => r.end === undefined);
        if (!polledRunning && inFlight.length > 0) {
          // The API process reads the progress a worker process writes.
          const progress = await call<PollProgressData>(
            'GET',
            `/api/cloud-manager/poll-progress/${inFlight[0]?.task}`,
            undefined,
            token,
          );
          if (progress.code === 0 && [1, 2].includes(progress.data.status)) polledRunning = true;
        }
        if (inFlight.length > 0 && live.length - inFlight.length >= 3) {
          // Log lines trail the database (a run's last line follows its final state): kill only while
          // the database still shows a run of the doomed worker going, and its lines have not ended
          // it. The worker is frozen (SIGSTOP) while that is read, so no run of it can end between
          // the look and the kill (runs here take a few hundred ms, a request on a busy CI machine as
          // long); a look that finds none going lets it go on, well within its lease.
          doomed.child.kill('SIGSTOP');
          const open = await call<ListTasksData>('POST', '/api/tasks/list', { completed: 0, page_size: 100 }, token);
          const going = new Set(open.data.items.filter((t) => t.state === 1 || t.state === 2).map((t) => t.id));
          if (runsOf([doomed], killedAt).some((r) => r.end === undefined && going.has(r.task))) break;
          doomed.child.kill('SIGCONT');
        }
        if (Date.now() > deadline)
          throw new Error(
            `the doomed worker never had a run in flight: ${doomed.lines.length} lines, ${JSON.stringify(live.slice(0, 3))}, survivor ${runsOf([survivor], killedAt).length} runs; ${JSON.stringify(doomed.lines.slice(-3))}`,
          );
        await sleep(5);
      }
      killedAt.set(doomed.pid, Date.now());
      doomed.child.kill('SIGKILL');
      const interrupted = runsOf([doomed], killedAt).filter((r) => r.end === killedAt.get(doomed.pid));
      expect(interrupted.length).toBeGreaterThan(0);

      // Every task completes.
      const done = Date.now() + 120_000;
      let completed: ListTasksData = { items: [], total: 0 };
      while (Date.now() < done) {
        completed = (
          await call<ListTasksData>('POST', '/api/tasks/list', { page: 1, page_size: 100, completed: 1 }, token)
        ).data;
        if (completed.total === TASKS) break;
        if (!polledRunning) {
          // The API process reads the progress the worker processes write.
          const open = (await call<ListTasksData>('POST', '/api/tasks/list', { completed: 0 }, token)).data.items;
          for (const t of open.filter((o) => o.state === 1 || o.state === 2)) {
            const p = await call<PollProgressData>('GET', `/api/cloud-manager/poll-progress/${t.id}`, undefined, token);
            if (p.code === 0 && [1, 2].includes(p.data.status)) polledRunning = true;
          }
        }
        await sleep(polledRunning ? 250 : 20);
      }
      expect(completed.total).toBe(TASKS);
      expect(completed.items.map((t) => t.state)).toEqual(Array(TASKS).fill(0));
      // A run's last log line is written after its task's final state is stored: let the survivor's
      // last lines arrive before reading the runs.
      const logged = Date.now() + 10_000;
      while (runsOf([survivor], killedAt).some((r) => r.end === undefined) && Date.now() < logged) await sleep(20);
      const counts = completed.items.map((t) => [t.id, t.finished_counts, t.total_counts, t.result?.added]);
      expect(
        counts.filter((c) => c[1] !== FILES_PER_TASK || c[2] !== FILES_PER_TASK || c[3] !== FILES_PER_TASK),
      ).toEqual([]);

      // The runs the kill interrupted were resumed by the survivor (after the lease ran out), from
      // their checkpoints; a run whose task had already reached its final state before the kill had
      // only its log line cut off.
      const runs = runsOf([doomed, survivor], killedAt);
      const byId = new Map(completed.items.map((t) => [t.id, t]));
      let resumedCount = 0;
      for (const cut of interrupted) {
        if ((byId.get(cut.task)?.finished_at ?? Infinity) <= (killedAt.get(doomed.pid) ?? 0)) continue;
        const resumed = runs.filter((r) => r.task === cut.task && r.pid === survivor.pid);
        expect(resumed.length, `task ${cut.task} resumed`).toBeGreaterThan(0);
        expect(resumed[0]?.attempt).toBeGreaterThan(1);
        expect(resumed[0]!.start - (killedAt.get(doomed.pid) ?? 0)).toBeGreaterThan(2_000);
        resumedCount += 1;
      }
      expect(resumedCount).toBeGreaterThan(0);
      // No task ran twice at once.
      for (const id of ids) {
        const mine = runs.filter((r) => r.task === id).sort((a, b) => a.start - b.start);
        expect(mine.length).toBeGreaterThan(0);
        for (let i = 1; i < mine.length; i++) {
          expect(mine[i]!.start, `task ${id} overlapping runs`).toBeGreaterThanOrEqual(mine[i - 1]!.end ?? Infinity);
        }
        // The last run ended the task (state 0), unless the kill cut off its log line after the task
        // had reached its final state (as above).
        const last = mine[mine.length - 1];
        const cutAfterFinish =
          last?.state === undefined &&
          last?.pid === doomed.pid &&
          (byId.get(id)?.finished_at ?? Infinity) <= (killedAt.get(doomed.pid) ?? 0);
        if (!cutAfterFinish) expect(last?.state, `task ${id} last run`).toBe(0);
      }
      // Targets verified: every file of every task, byte for byte.
      for (let n = 0; n < TASKS; n++) {
        const out = join(dstDir, `Out-${n}`);
        // A write cut by the SIGKILL left a temporary file: the run that resumed removed it.
        const got = readdirSync(join(out, 'Data'), { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
        expect(got.filter((e) => e.name.startsWith('.skyferry-tmp-')).map((e) => join(e.parentPath, e.name))).toEqual(
          [],
        );
        expect(got).toHaveLength(FILES_PER_TASK);
        for (const [rel, hash] of Object.entries(files)) expect(sha(join(out, rel)), `${out}/${rel}`).toBe(hash);
      }
      expect(polledRunning).toBe(true);
    }, 240_000);
  });
}
