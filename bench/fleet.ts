/**
 * Fleet benchmark: one API process and 1, 2 and 4 worker processes over PostgreSQL and Redis
 * (BullMQ), running many migrate tasks of many small files for 20 users, from a local folder into
 * Apache WebDAV behind the latency proxy (20 ms round trip). Prints, per worker count, the time
 * and throughput, and how fairly the users were served; in one configuration a worker is killed
 * with SIGKILL midway, and every task must still complete, none of them run twice at once.
 *
 *   npm run bench:fleet                                   # 200 tasks of 200 files, 1/2/4 workers
 *   BENCH_TASKS=40 BENCH_FILES=50 npm run bench:fleet     # a quick look
 *   BENCH_WORKERS=1,2 BENCH_SLOTS=2 BENCH_KILL=2 npm run bench:fleet
 *
 * BENCH_SLOTS: task runs at once in each worker process (SKYFERRY_WORKERS, default 2);
 * BENCH_KILL: the worker count whose run has a worker killed when half the tasks are done (default
 * 2; 0: none). Each user may run SKYFERRY_TASKS_PER_USER (2) tasks at once. Fairness: Jain's index
 * over the users' shares of the finished tasks when half of all tasks are done (1.0: every user
 * had the same share; 1/20: one user had all), and the spread of the users' finishing times.
 * "Twice at once": two runs of one task whose times overlap (a killed worker's run counts until
 * the kill), read from the run history.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDb } from '@skyferry/db';
import {
  createDatabase,
  giveToServer,
  startApacheWebdav,
  startLatencyProxy,
  startPostgres,
  startRedis,
} from '@skyferry/testing';
import { table } from './lib/measure.ts';

const here = fileURLToPath(new URL('.', import.meta.url));
const TASKS = Number(process.env.BENCH_TASKS ?? 200);
const FILES = Number(process.env.BENCH_FILES ?? 200);
const USERS = Number(process.env.BENCH_USERS ?? 20);
const WORKERS = (process.env.BENCH_WORKERS ?? '1,2,4')
  .split(',')
  .map(Number)
  .filter((n) => n > 0);
const SLOTS = Number(process.env.BENCH_SLOTS ?? 2);
const KILL = Number(process.env.BENCH_KILL ?? 2);
const RTT = Number(process.env.BENCH_RTT ?? 20);
const PER_USER = 2;
const LEASE_MS = 5_000;
const TERMINAL = new Set([0, 3, 4, 5, 6, 10]);
const PASSWORD = 'a long enough password';

interface Envelope<T> {
  code: number;
  msg: string;
  data: T;
}

function startProcess(script: string, env: Record<string, string>): { child: ChildProcess; ready: Promise<string> } {
  const base = { ...process.env };
  delete base.DATABASE_URL;
  delete base.REDIS_URL;
  const child = fork(script, [], {
    env: { ...base, ...env },
    execArgv: [],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const ready = new Promise<string>((resolve, reject) => {
    child.once('message', (m) => resolve(String((m as { url?: string }).url ?? '')));
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
  return { child, ready };
}

async function call<T>(base: string, token: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const out = (await res.json()) as Envelope<T>;
  if (out.code !== 0) throw new Error(`${method} ${path}: ${out.code} ${out.msg}`);
  return out.data;
}

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 20_000).unref();
  });

function countFiles(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) if (e.isFile()) n++;
  return n;
}

/** Jain's fairness index of the shares: 1 when equal, 1/n when one has everything. */
function jain(shares: number[]): number {
  const sum = shares.reduce((a, b) => a + b, 0);
  const squares = shares.reduce((a, b) => a + b * b, 0);
  return squares === 0 ? 1 : (sum * sum) / (shares.length * squares);
}

interface Result {
  workers: number;
  seconds: number;
  filesPerSecond: number;
  completed: number;
  arrived: number;
  jainAtHalf: number;
  finishSpread: number;
  maxPerUser: number;
  overlaps: number;
  killed: boolean;
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'skyferry-fleet-'));
  const pg = await startPostgres();
  const redis = await startRedis();
  const dav = await startApacheWebdav();
  const proxy = await startLatencyProxy({
    target: { host: '127.0.0.1', port: Number(new URL(dav.url).port) },
    rttMs: RTT,
  });
  const results: Result[] = [];
  try {
    // One source tree, the same for every worker count: TASKS folders of FILES files of 1-4 KB.
    const src = join(root, 'src');
    for (let t = 0; t < TASKS; t++) {
      mkdirSync(join(src, `t${t}`), { recursive: true });
      for (let f = 0; f < FILES; f++)
        writeFileSync(join(src, `t${t}`, `f${f}.bin`), randomBytes(1024 + ((t * 131 + f * 37) % 3072)));
    }
    const emails = Array.from({ length: USERS }, (_, u) => `fleet${u}@example.com`);
    console.log(
      `# fleet benchmark: ${TASKS} tasks of ${FILES} files for ${USERS} users, local folder -> Apache WebDAV at ${RTT} ms RTT; ` +
        `${SLOTS} runs per worker, ${PER_USER} per user; ${cpus().length} CPUs, load ${loadavg()[0]?.toFixed(1)}`,
    );
    for (const workers of WORKERS) {
      const prefix = `fleet-${randomUUID().slice(0, 8)}`;
      const databaseUrl = await createDatabase(pg.url);
      const env: Record<string, string> = {
        DATABASE_URL: databaseUrl,
        REDIS_URL: redis.url,
        SKYFERRY_REDIS_PREFIX: prefix,
        SKYFERRY_DATA_DIR: join(root, `data-${workers}`),
        SKYFERRY_SECRET: randomBytes(32).toString('base64url'),
        SKYFERRY_LOCAL_ROOTS: root,
        SKYFERRY_WEB_DIST: join(root, 'no-web'),
        SKYFERRY_ADMIN_EMAILS: emails.join(','),
        SKYFERRY_ALLOW_PRIVATE_NETWORKS: '127.0.0.1',
        SKYFERRY_TASKS_PER_USER: String(PER_USER),
        SKYFERRY_TASK_LEASE_MS: String(LEASE_MS),
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'warn',
      };
      const api = startProcess(join(here, '../apps/server/src/main.ts'), { ...env, SKYFERRY_WORKERS: '0' });
      const base = await api.ready;
      const target = `run-${workers}`;
      mkdirSync(join(dav.dir, target), { recursive: true });
      giveToServer(join(dav.dir, target));
      // Every user: the source folder and the WebDAV share as clouds, and their share of the tasks.
      const users: Array<{ token: string; id: string }> = [];
      const taskIds: string[] = [];
      for (const email of emails) {
        const auth = await call<{ access_token: string; uid: string }>(base, '', 'POST', '/api/account/signup', {
          email,
          password: PASSWORD,
        });
        users.push({ token: auth.access_token, id: auth.uid });
      }
      const clouds = await Promise.all(
        users.map(async (u) => ({
          from: (
            await call<{ id: string }>(base, u.token, 'POST', '/api/clouds', {
              cloud_name: 'local',
              credentials: { path: src },
            })
          ).id,
          to: (
            await call<{ id: string }>(base, u.token, 'POST', '/api/clouds', {
              cloud_name: 'webdav',
              credentials: {
                url: `http://127.0.0.1:${proxy.port}/${target}/`,
                username: dav.username,
                password: dav.password,
                vendor: 'other',
              },
            })
          ).id,
        })),
      );
      // Created round by round (user 0's first, user 1's first, ...), as many people at once would;
      // timed from when the workers are ready.
      for (let t = 0; t < TASKS; t++) {
        const u = t % USERS;
        const user = users[u] as { token: string };
        const c = clouds[u] as { from: string; to: string };
        const made = await call<{ task: { id: string } }>(base, user.token, 'POST', '/api/tasks', {
          task_type: 0,
          from_cloud: { cloud_id: c.from, paths: [`/t${t}`] },
          to_cloud: { cloud_id: c.to, path: '/' },
        });
        taskIds.push(made.task.id);
      }
      const workerProcs = Array.from({ length: workers }, () =>
        startProcess(join(here, '../apps/server/src/worker.ts'), { ...env, SKYFERRY_WORKERS: String(SLOTS) }),
      );
      await Promise.all(workerProcs.map((w) => w.ready));
      const started = performance.now();
      // Watch the tasks in the database: states per user, until every task has ended.
      const db = createDb({ url: databaseUrl, poolSize: 2 });
      let killedAt: number | undefined;
      let jainAtHalf = 1;
      let maxPerUser = 0;
      const finishedAt = new Map<string, number>();
      for (;;) {
        const rows = await db.kysely.selectFrom('tasks').select(['id', 'user_id', 'state']).execute();
        const done = rows.filter((r) => TERMINAL.has(Number(r.state)));
        const running = new Map<string, number>();
        for (const r of rows)
          if (Number(r.state) === 1 || Number(r.state) === 2) running.set(r.user_id, (running.get(r.user_id) ?? 0) + 1);
        maxPerUser = Math.max(maxPerUser, ...running.values(), 0);
        for (const r of done)
          if (
            !finishedAt.has(r.user_id) &&
            rows.filter((x) => x.user_id === r.user_id).every((x) => TERMINAL.has(Number(x.state)))
          )
            finishedAt.set(r.user_id, performance.now());
        if (killedAt === undefined && done.length >= TASKS / 2) {
          const perUser = users.map((u) => done.filter((r) => r.user_id === u.id).length);
          jainAtHalf = jain(perUser);
          if (workers === KILL && workerProcs[0]) {
            workerProcs[0].child.kill('SIGKILL');
            killedAt = Date.now();
          } else killedAt = 0;
        }
        if (done.length === rows.length && rows.length === TASKS) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      const seconds = (performance.now() - started) / 1000;
      const final = await db.kysely.selectFrom('tasks').select(['state']).execute();
      // Two runs of one task whose times overlap (a run left unfinished by the kill ends at the kill).
      const runs = await db.kysely
        .selectFrom('task_runs')
        .select(['task_id', 'started_at', 'finished_at'])
        .where('kind', '=', 'transfer')
        .orderBy('task_id')
        .orderBy('started_at')
        .execute();
      let overlaps = 0;
      for (let i = 1; i < runs.length; i++) {
        const a = runs[i - 1] as (typeof runs)[number];
        const b = runs[i] as (typeof runs)[number];
        if (a.task_id !== b.task_id) continue;
        const aEnd = a.finished_at === null ? (killedAt ?? Number.POSITIVE_INFINITY) : Number(a.finished_at);
        if (Number(b.started_at) < aEnd) overlaps++;
      }
      await db.close();
      await Promise.all([...workerProcs.map((w) => stop(w.child)), stop(api.child)]);
      const finishes = [...finishedAt.values()];
      results.push({
        workers,
        seconds,
        filesPerSecond: (TASKS * FILES) / seconds,
        completed: final.filter((r) => Number(r.state) === 0).length,
        arrived: countFiles(join(dav.dir, target)),
        jainAtHalf,
        finishSpread: finishes.length ? (Math.max(...finishes) - Math.min(...finishes)) / 1000 : 0,
        maxPerUser,
        overlaps,
        killed: workers === KILL,
      });
      const r = results.at(-1) as Result;
      console.log(
        `  ${workers} worker(s): ${r.seconds.toFixed(1)} s, ${r.completed}/${TASKS} tasks completed, ${r.arrived}/${TASKS * FILES} files arrived`,
      );
    }
  } finally {
    await proxy.stop();
    await dav.stop();
    await redis.stop();
    await pg.stop();
    rmSync(root, { recursive: true, force: true });
  }
  const one = results.find((r) => r.workers === 1);
  console.log(
    table(
      [
        'workers',
        'seconds',
        'files/s',
        'speed-up',
        'completed',
        'files arrived',
        'fairness at half',
        'users finish spread s',
        'most runs of one user',
        'runs twice at once',
        'a worker killed',
      ],
      results.map((r) => [
        String(r.workers),
        r.seconds.toFixed(1),
        r.filesPerSecond.toFixed(0),
        one ? (r.filesPerSecond / one.filesPerSecond).toFixed(2) : '-',
        `${r.completed}/${TASKS}`,
        `${r.arrived}/${TASKS * FILES}`,
        r.jainAtHalf.toFixed(3),
        r.finishSpread.toFixed(1),
        String(r.maxPerUser),
        String(r.overlaps),
        r.killed ? 'yes' : 'no',
      ]),
    ),
  );
  const bad = results.filter(
    (r) => r.completed !== TASKS || r.arrived !== TASKS * FILES || r.overlaps > 0 || r.maxPerUser > PER_USER,
  );
  if (bad.length) {
    console.error(
      `not every task completed whole, once at a time, within the per-user limit: ${bad.map((r) => r.workers).join(', ')} worker(s)`,
    );
    process.exitCode = 1;
  }
}

await main();
