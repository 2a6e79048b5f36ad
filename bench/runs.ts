/**
 * Run history benchmark: how fast the Tasks page's calls answer for a task with 1,000 runs and for
 * one run of 1,000,000 files, on SQLite and on PostgreSQL. Targets: the runs page under 100 ms p99,
 * a page of a run's files under 150 ms p99. Not run in CI.
 *
 *   npm run bench:runs
 *   BENCH_DB=sqlite npm run bench:runs        # one database only (sqlite or postgres)
 *   BENCH_FILES=200000 BENCH_REQUESTS=300 npm run bench:runs
 *
 * The whole app runs in this process (routes, sign-in check, services, repositories, zod
 * serialization), asked through Fastify's inject: the figures are the server's, without a
 * network. The rows are written straight through the repositories (as runs write them, in
 * multi-row INSERTs): 1,000 finished runs of one task, and one run whose 1,000,000 files are
 * 90% added, 5% updated, 3% skipped, 1% conflicts and 1% failed. Each request asks a random
 * page: of the runs (the Tasks page's 20, with the target, and 100), of the run's files (100 a
 * page, all outcomes or one, from a random place in the run), and a search by name (reported).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { RUNS_PAGE_SIZE } from '@skyferry/contract';
import { sql } from '@skyferry/db';
import { createDatabase, startPostgres, type PostgresServer } from '@skyferry/testing';
import { buildApp } from '../apps/server/src/app.ts';
import { loadConfig } from '../apps/server/src/config.ts';
import { createContext } from '../apps/server/src/context.ts';
import { TaskRunsRepository, type NewRunFileRow } from '../apps/server/src/repositories/task-runs.ts';
import { TasksRepository } from '../apps/server/src/repositories/tasks.ts';
import { table } from './lib/measure.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 1000);
const FILES = Number(process.env.BENCH_FILES ?? 1_000_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 500);
const DBS = process.env.BENCH_DB ? [process.env.BENCH_DB] : ['sqlite', 'postgres'];
const TARGETS = { runs: 100, files: 150 };

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

const OUTCOMES: Array<[string, number]> = [
  ['added', 0.9],
  ['updated', 0.05],
  ['skipped', 0.03],
  ['conflict', 0.01],
  ['failed', 0.01],
];

function outcomeOf(i: number): string {
  let x = (i * 0.6180339887) % 1;
  for (const [outcome, share] of OUTCOMES) {
    if (x < share) return outcome;
    x -= share;
  }
  return 'added';
}

interface Figures {
  name: string;
  p50: number;
  p99: number;
  max: number;
  target?: number;
}

async function measure(name: string, ask: () => Promise<number>, target?: number): Promise<Figures> {
  for (let i = 0; i < 20; i++) await ask(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const started = performance.now();
    const status = await ask();
    times.push(performance.now() - started);
    if (status !== 200) throw new Error(`${name}: HTTP ${status}`);
  }
  times.sort((a, b) => a - b);
  return {
    name,
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    max: times[times.length - 1] ?? 0,
    ...(target ? { target } : {}),
  };
}

async function bench(dialect: string, postgres: PostgresServer | undefined): Promise<Figures[]> {
  const root = mkdtempSync(join(tmpdir(), 'skyferry-bench-runs-'));
  const env: Record<string, string> = {
    SKYFERRY_DATA_DIR: join(root, 'data'),
    SKYFERRY_SECRET: randomBytes(32).toString('base64url'),
    SKYFERRY_WEB_DIST: join(root, 'no-web'),
    SKYFERRY_LOCAL_ROOTS: '',
    SKYFERRY_WORKERS: '0',
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'warn',
  };
  if (postgres) env.DATABASE_URL = await createDatabase(postgres.url);
  const config = loadConfig(env, root);
  const log = pino({ level: 'warn' });
  const ctx = await createContext(config, log);
  const app = await buildApp(ctx, { logger: false });
  try {
    const signup = await app.inject({
      method: 'POST',
      url: '/api/account/signup',
      payload: { email: 'bench@example.com', password: 'a long enough password' },
    });
    const auth = JSON.parse(signup.body) as { data: { uid: string; access_token: string } };
    const headers = { authorization: `Bearer ${auth.data.access_token}` };
    const userId = auth.data.uid;
    const tasks = new TasksRepository(ctx.db.kysely);
    const runs = new TaskRunsRepository(ctx.db.kysely, ctx.db.dialect);
    const taskId = randomUUID();
    const now = Date.now();
    await tasks.insert({
      id: taskId,
      user_id: userId,
      task_name: 'Bench',
      task_type: 0,
      from_cloud: JSON.stringify({ cloud_id: 'c1', paths: ['/Photos'] }),
      to_cloud: JSON.stringify({ cloud_id: 'c2', path: '/Backup' }),
      sync_mode: null,
      same_name_policy: 'size_differs_or_newer',
      filter: null,
      conflict_resolution: 'keep_both',
      schedule: null,
      time_zone: 'UTC',
      is_schedule: 1,
      next_run_time: null,
      state: 0,
      created_at: now,
      updated_at: now,
    });

    console.log(`[${dialect}] writing ${RUNS} runs and a run of ${FILES} files ...`);
    const seeded = performance.now();
    const runIds: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const id = randomUUID();
      runIds.push(id);
      const started = now - (RUNS - i) * 3600_000;
      await runs.insert({
        id,
        task_id: taskId,
        user_id: userId,
        job_id: `t-${taskId}-${i}`,
        kind: i % 10 === 9 ? 'verify' : 'transfer',
        trigger: i % 3 === 0 ? 'schedule' : 'manual',
        outcome: 'success',
        started_at: started,
        finished_at: started + 60_000,
        counts: JSON.stringify({ added: 10, updated: 2, skipped: 5 }),
        listed: JSON.stringify({ added: 10, updated: 2, skipped: 5 }),
        figures: JSON.stringify({ total_count: 12, success_count: 12, bytes: 123_456, size: 123_456 }),
        error: null,
      });
    }
    const bigRun = runIds[runIds.length - 2] as string;
    const counts: Record<string, number> = {};
    for (let start = 0; start < FILES; start += 10_000) {
      const batch: NewRunFileRow[] = [];
      for (let seq = start; seq < Math.min(FILES, start + 10_000); seq++) {
        const outcome = outcomeOf(seq);
        counts[outcome] = (counts[outcome] ?? 0) + 1;
        batch.push({
          run_id: bigRun,
          seq,
          outcome,
          kind: 'file',
          side: 'target',
          path: `/Backup/Photos/${String(seq % 1000).padStart(3, '0')}/IMG_${String(seq).padStart(7, '0')}.jpg`,
          other_path: outcome === 'conflict' ? `/Backup/Photos/IMG_${seq} (conflict).jpg` : null,
          size: 1_000_000 + (seq % 5000),
          reason: outcome === 'skipped' ? 'same_size' : outcome === 'failed' ? 'network' : null,
          message: outcome === 'failed' ? 'connection reset' : null,
        });
      }
      await runs.insertFiles(batch);
    }
    await ctx.db.kysely
      .updateTable('task_runs')
      .set({ counts: JSON.stringify(counts), listed: JSON.stringify(counts) })
      .where('id', '=', bigRun)
      .execute();
    // Statistics as the database keeps them for tables it has seen grow (autovacuum's analyze).
    if (ctx.db.dialect === 'postgres') await sql`analyze`.execute(ctx.db.kysely);
    console.log(`[${dialect}] written in ${((performance.now() - seeded) / 1000).toFixed(1)} s`);

    const get = async (url: string) => (await app.inject({ method: 'GET', url, headers })).statusCode;
    const pick = (n: number) => Math.floor(Math.random() * n);
    const base = `/api/tasks/${taskId}/runs`;
    return [
      await measure(
        `${dialect}: runs page (${RUNS_PAGE_SIZE} of ${RUNS}, the Tasks page's)`,
        () => get(`${base}?page=${1 + pick(Math.ceil(RUNS / RUNS_PAGE_SIZE))}`),
        TARGETS.runs,
      ),
      await measure(`${dialect}: runs page (100 of ${RUNS})`, () =>
        get(`${base}?page=${1 + pick(Math.ceil(RUNS / 100))}&page_size=100`),
      ),
      await measure(`${dialect}: one run`, () => get(`${base}/${bigRun}`)),
      await measure(
        `${dialect}: files page (100, all outcomes, of ${FILES})`,
        () => get(`${base}/${bigRun}/files?limit=100&cursor=${pick(FILES)}`),
        TARGETS.files,
      ),
      await measure(
        `${dialect}: files page (100 conflicts, of ${counts.conflict ?? 0})`,
        () => get(`${base}/${bigRun}/files?outcome=conflict&limit=100&cursor=${pick(FILES)}`),
        TARGETS.files,
      ),
      await measure(
        `${dialect}: files page (100 added, of ${counts.added ?? 0})`,
        () => get(`${base}/${bigRun}/files?outcome=added&limit=100&cursor=${pick(FILES)}`),
        TARGETS.files,
      ),
      await measure(`${dialect}: search by name (first 100 matches)`, () =>
        get(`${base}/${bigRun}/files?limit=100&q=IMG_${String(pick(FILES)).padStart(7, '0')}`),
      ),
    ];
  } finally {
    await app.close();
    await ctx.close();
    rmSync(root, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const figures: Figures[] = [];
  let postgres: PostgresServer | undefined;
  try {
    for (const dialect of DBS) {
      if (dialect === 'postgres') postgres ??= await startPostgres();
      figures.push(...(await bench(dialect, dialect === 'postgres' ? postgres : undefined)));
    }
  } finally {
    await postgres?.stop();
  }
  const ms = (n: number) => `${n.toFixed(1)} ms`;
  console.log(`\n${REQUESTS} requests each, one at a time\n`);
  console.log(
    table(
      ['call', 'p50', 'p99', 'max', 'target (p99)'],
      figures.map((f) => [
        f.name,
        ms(f.p50),
        ms(f.p99),
        ms(f.max),
        f.target === undefined ? '-' : `${f.p99 <= f.target ? 'met' : 'MISSED'} (< ${f.target} ms)`,
      ]),
    ),
  );
  if (figures.some((f) => f.target !== undefined && f.p99 > f.target)) process.exitCode = 1;
}

await main();
