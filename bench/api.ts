/**
 * API load benchmark: 500 clients polling task progress every 2 s (the spec's polling rule)
 * against one API process, while that process's worker runs the tasks. Prints latency
 * percentiles, throughput and the error count. Target: p99 under 50 ms, no errors.
 *
 *   npm run bench:api
 *   BENCH_CLIENTS=500 BENCH_SECONDS=60 npm run bench:api
 *   BENCH_DB=postgres npm run bench:api      # PostgreSQL and Redis (BullMQ, progress in Redis)
 *
 * Setup: 100 accounts with 5 tasks each (every client polls its own task, with its own access
 * token); each task migrates a folder of 150 small files between two local-folder clouds. The API
 * process runs with its default in-process worker (SKYFERRY_WORKERS=1), so tasks queue, run and
 * finish during the measurement: polls hit running, waiting and completed tasks alike.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpus, loadavg, tmpdir } from 'node:os';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDatabase, startPostgres, startRedis, type PostgresServer, type RedisServer } from '@skyferry/testing';
import { table } from './lib/measure.ts';

const here = fileURLToPath(new URL('.', import.meta.url));
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 500);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const WARMUP_SECONDS = 4;
const PER_USER = 5;
const INTERVAL_MS = 2000;
const DB = process.env.BENCH_DB === 'postgres' ? 'postgres' : 'sqlite';

interface ProbeReport {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  loopMeanMs: number;
  loopP99Ms: number;
  loopMaxMs: number;
}

interface Envelope<T> {
  code: number;
  msg: string;
  data: T;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

/** Runs `fn` over items, `limit` at a time. */
async function pool<T, R>(items: T[], limit: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i] as T, i);
      }
    }),
  );
  return out;
}

const benchEmail = (i: number) => `bench-${i}@example.com`;

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'skyferry-bench-api-'));
  const localRoot = join(root, 'local');
  const source = join(localRoot, 'source');
  for (let i = 0; i < 150; i++) {
    mkdirSync(join(source, 'Data', String(i % 5)), { recursive: true });
    writeFileSync(join(source, 'Data', String(i % 5), `f-${i}.bin`), randomBytes(4096));
  }
  let postgres: PostgresServer | undefined;
  let redis: RedisServer | undefined;
  let api: ChildProcess | undefined;
  try {
    const users = Math.ceil(CLIENTS / PER_USER);
    const env: Record<string, string> = {
      SKYFERRY_DATA_DIR: join(root, 'data'),
      SKYFERRY_SECRET: randomBytes(32).toString('base64url'),
      SKYFERRY_LOCAL_ROOTS: localRoot,
      // Every bench account connects folders anywhere under the root, as operators may.
      SKYFERRY_ADMIN_EMAILS: Array.from({ length: users }, (_, i) => benchEmail(i)).join(','),
      SKYFERRY_WEB_DIST: join(root, 'no-web'),
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'warn',
      SKYFERRY_WORKERS: process.env.BENCH_WORKERS ?? '1',
    };
    if (DB === 'postgres') {
      [postgres, redis] = await Promise.all([startPostgres(), startRedis()]);
      env.DATABASE_URL = await createDatabase(postgres.url);
      env.REDIS_URL = redis.url;
    }
    api = fork(join(here, '../apps/server/src/main.ts'), [], {
      env: { ...process.env, ...env },
      execArgv: ['--import', join(here, 'lib/api-probe.ts')],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    const child = api;
    const url = await new Promise<string>((resolve, reject) => {
      const onMessage = (m: unknown) => {
        const msg = m as { type?: string; url?: string };
        if (msg.type !== 'listening') return;
        child.off('message', onMessage);
        resolve(String(msg.url));
      };
      child.on('message', onMessage);
      child.once('exit', (code) => reject(new Error(`API process exited with ${code}`)));
    });
    const call = async <T>(method: string, path: string, body?: unknown, token?: string): Promise<Envelope<T>> => {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: {
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return (await res.json()) as Envelope<T>;
    };

    console.log(`setting up ${users} accounts and ${CLIENTS} tasks (${DB}) ...`);
    const tokens = await pool(
      Array.from({ length: users }, (_, i) => i),
      8,
      async (i) => {
        const res = await call<{ access_token: string }>('POST', '/api/account/signup', {
          email: benchEmail(i),
          password: 'a long enough password',
        });
        if (res.code !== 0) throw new Error(`sign-up: ${res.msg}`);
        return res.data.access_token;
      },
    );
    const clients = await pool(tokens, 8, async (token, u) => {
      const target = join(localRoot, `target-${u}`);
      mkdirSync(target, { recursive: true });
      const src = await call<{ id: string }>(
        'POST',
        '/api/clouds',
        { cloud_name: 'local', credentials: { path: source } },
        token,
      );
      const dst = await call<{ id: string }>(
        'POST',
        '/api/clouds',
        { cloud_name: 'local', credentials: { path: target } },
        token,
      );
      const tasks: Array<{ token: string; task: string }> = [];
      for (let n = 0; n < PER_USER && u * PER_USER + n < CLIENTS; n++) {
        const res = await call<{ task: { id: string } }>(
          'POST',
          '/api/tasks',
          {
            task_type: 0,
            from_cloud: { cloud_id: src.data.id, paths: ['/Data'] },
            to_cloud: { cloud_id: dst.data.id, path: `/out-${n}` },
          },
          token,
        );
        if (res.code !== 0) throw new Error(`create task: ${res.msg}`);
        tasks.push({ token, task: res.data.task.id });
      }
      return tasks;
    });
    const all = clients.flat();

    console.log(
      `${all.length} clients polling every ${INTERVAL_MS / 1000} s for ${SECONDS} s (+${WARMUP_SECONDS} s warm-up) ...`,
    );
    const latencies: number[] = [];
    const statuses = new Map<number, number>();
    let errors = 0;
    const start = performance.now();
    const warmEnd = start + WARMUP_SECONDS * 1000;
    const end = warmEnd + SECONDS * 1000;
    setTimeout(() => child.send({ type: 'probe-reset' }), WARMUP_SECONDS * 1000);
    await Promise.all(
      all.map(async ({ token, task }) => {
        // Clients start spread over one interval, as real pollers would be.
        await new Promise((r) => setTimeout(r, Math.random() * INTERVAL_MS));
        for (let next = performance.now(); next < end; next += INTERVAL_MS) {
          const wait = next - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          const t0 = performance.now();
          let ok = false;
          let state = -1;
          try {
            const res = await fetch(`${url}/api/cloud-manager/poll-progress/${task}`, {
              headers: { authorization: `Bearer ${token}` },
            });
            const body = (await res.json()) as Envelope<{ status: number }>;
            ok = res.status === 200 && body.code === 0;
            state = body.data?.status ?? -1;
          } catch {
            // a network error counts as a failed poll (ok stays false)
          }
          const t1 = performance.now();
          if (t0 < warmEnd) continue;
          latencies.push(t1 - t0);
          statuses.set(state, (statuses.get(state) ?? 0) + 1);
          if (!ok) errors += 1;
        }
      }),
    );
    const server = await new Promise<ProbeReport>((resolve) => {
      const onMessage = (m: unknown) => {
        if ((m as { type?: string }).type !== 'probe-report') return;
        child.off('message', onMessage);
        resolve(m as ProbeReport);
      };
      child.on('message', onMessage);
      child.send({ type: 'probe-report' });
    });
    const done = await call<{ total: number }>(
      'POST',
      '/api/tasks/list',
      { page: 1, page_size: 1, completed: 1 },
      all[0]?.token,
    );
    latencies.sort((a, b) => a - b);
    const f = (ms: number) => ms.toFixed(1);
    console.log('');
    console.log('Seen by the clients (what the target is about):');
    console.log(
      table(
        ['clients', 'requests', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'errors'],
        [
          [
            all.length,
            latencies.length,
            (latencies.length / SECONDS).toFixed(0),
            f(percentile(latencies, 50)),
            f(percentile(latencies, 90)),
            f(percentile(latencies, 99)),
            f(latencies[latencies.length - 1] ?? 0),
            errors,
          ],
        ],
      ),
    );
    console.log('');
    console.log('Inside the API process (request arrival to last byte, every request), and its event-loop delay:');
    console.log(
      table(
        [
          'requests',
          'p50 ms',
          'p90 ms',
          'p99 ms',
          'max ms',
          'loop delay mean ms',
          'loop delay p99 ms',
          'loop delay max ms',
        ],
        [
          [
            server.count,
            f(server.p50),
            f(server.p90),
            f(server.p99),
            f(server.max),
            f(server.loopMeanMs),
            f(server.loopP99Ms),
            f(server.loopMaxMs),
          ],
        ],
      ),
    );
    const seen = [...statuses.entries()].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}: ${n}`);
    console.log(
      `task states seen by the polls: ${seen.join(', ')}; tasks of the first account completed: ${done.data.total}/${PER_USER}`,
    );
    console.log(
      `database ${DB}, ${cpus().length} CPUs, load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    const p99 = percentile(latencies, 99);
    console.log(
      p99 < 50 && errors === 0
        ? 'target met: p99 under 50 ms, no errors'
        : 'TARGET MISSED (p99 under 50 ms, no errors)',
    );
  } finally {
    api?.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    await Promise.all([postgres?.stop(), redis?.stop()]);
    rmSync(root, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
