/**
 * An API process (with its in-process worker) started for a benchmark, and a migrate task between
 * two local-folder clouds run through it, measured from the outside (time, the process's peak RSS,
 * the answers of progress polls) and from the inside (event-loop delay, via api-probe.ts).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuMsOf, residentOf, vmHwm } from './measure.ts';

const here = fileURLToPath(new URL('.', import.meta.url));

interface Envelope<T> {
  code: number;
  msg: string;
  data: T;
}

export interface ProbeReport {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  loopMeanMs: number;
  loopP99Ms: number;
  loopMaxMs: number;
  loopP50Ms: number;
  gcCount: number;
  gcTotalMs: number;
  gcMaxMs: number;
  /** Turns of the event loop held longer than 50 ms: when (ms from the reset) and how long (the first 50). */
  stalls: { atMs: number; ms: number }[];
  /** Memory sampled each second: the sample of the largest resident size, and the largest of each figure. */
  memory: {
    peak?: NodeJS.MemoryUsage & { atMs: number };
    maxHeapUsed: number;
    maxHeapTotal: number;
    maxExternal: number;
  };
}

export interface TaskRun {
  ms: number;
  state: number;
  finished: number;
  total: number;
  /** Peak RSS of the API process while the task ran (bytes). */
  peakRss: number;
  /** At the largest resident size sampled (each second), the part of it freed lazily (MADV_FREE), bytes. */
  lazyFreeAtPeak: number;
  /** CPU time of the API process (which runs the worker) while the task ran, ms. */
  cpuMs: number;
  /** Polls of the task's progress while it ran: how long each took, seen by the client. */
  pollP50: number;
  pollP99: number;
  pollMax: number;
  polls: number;
  /** The API process's event-loop delay while the task ran. */
  loopP99Ms: number;
  loopMaxMs: number;
  loopP50Ms: number;
  /** Garbage-collection pauses of the API process while the task ran. */
  gcTotalMs: number;
  gcMaxMs: number;
  stalls: { atMs: number; ms: number }[];
  memory: ProbeReport['memory'];
  /** What the task's progress said last before it finished (finished of total). */
  lastProgress: { finished: number; total: number };
}

export interface ApiServerOptions {
  dataDir: string;
  localRoot: string;
  /** A postgres:// URL; SQLite in the data dir without one. */
  databaseUrl?: string;
  /** Extra variables (SKYFERRY_TASK_LEASE_MS, ...). */
  env?: Record<string, string>;
  /** Node flags for the API process (--cpu-prof, ...). */
  execArgv?: string[];
  /** Kept across restarts: the same secret reads the same credentials. */
  secret?: string;
}

const TERMINAL = new Set([0, 3, 4, 5, 6, 10]);

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

export class ApiServer {
  readonly url: string;
  readonly child: ChildProcess;
  readonly secret: string;
  private token = '';
  private stopping = false;

  private constructor(url: string, child: ChildProcess, secret: string) {
    this.url = url;
    this.child = child;
    this.secret = secret;
  }

  static async start(o: ApiServerOptions): Promise<ApiServer> {
    const secret = o.secret ?? randomBytes(32).toString('base64url');
    const env: Record<string, string> = {
      SKYFERRY_DATA_DIR: o.dataDir,
      SKYFERRY_SECRET: secret,
      SKYFERRY_LOCAL_ROOTS: o.localRoot,
      SKYFERRY_WEB_DIST: join(o.dataDir, 'no-web'),
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'warn',
      SKYFERRY_WORKERS: '1',
      ...(o.databaseUrl ? { DATABASE_URL: o.databaseUrl } : {}),
      ...o.env,
    };
    const base = { ...process.env };
    delete base.DATABASE_URL;
    delete base.REDIS_URL;
    const child = fork(join(here, '../../apps/server/src/main.ts'), [], {
      env: { ...base, ...env },
      execArgv: [...(o.execArgv ?? []), '--import', join(here, 'api-probe.ts')],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
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
    const server = new ApiServer(url, child, secret);
    child.once('exit', (code, signal) => {
      if (!server.stopping) console.error(`the API process exited (${code ?? signal}) during the benchmark`);
    });
    return server;
  }

  async call<T>(method: string, path: string, body?: unknown): Promise<Envelope<T>> {
    const send = () =>
      fetch(`${this.url}${path}`, {
        method,
        headers: {
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(this.token ? { authorization: `Bearer ${this.token}` } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    let res: Response;
    try {
      res = await send();
    } catch (err) {
      // A kept-alive connection the server closed as it was reused: asked again once (a read, or a
      // request the server never got: the socket closed before anything was answered).
      const closed = (err as { cause?: { code?: string } }).cause?.code === 'UND_ERR_SOCKET';
      if ((method !== 'GET' && !closed) || this.child.exitCode !== null)
        throw new Error(`${method} ${path}`, { cause: err });
      res = await send();
    }
    const out = (await res.json()) as Envelope<T>;
    if (out.code !== 0) throw new Error(`${method} ${path}: ${out.code} ${out.msg}`);
    return out;
  }

  /** Signs up (the install's first account is its operator: local folders anywhere under the roots). */
  async signUp(email = 'bench@example.com'): Promise<void> {
    const res = await this.call<{ access_token: string }>('POST', '/api/account/signup', {
      email,
      password: 'a long enough password',
    });
    this.token = res.data.access_token;
  }

  async signIn(email = 'bench@example.com'): Promise<void> {
    const res = await this.call<{ access_token: string }>('POST', '/api/account/login', {
      email,
      password: 'a long enough password',
    });
    this.token = res.data.access_token;
  }

  async localCloud(path: string): Promise<string> {
    const res = await this.call<{ id: string }>('POST', '/api/clouds', {
      cloud_name: 'local',
      credentials: { path },
    });
    return res.data.id;
  }

  private probe(type: 'probe-reset' | 'probe-report'): Promise<ProbeReport | undefined> {
    if (type === 'probe-reset') {
      this.child.send({ type });
      return Promise.resolve(undefined);
    }
    return new Promise((resolve) => {
      const onMessage = (m: unknown) => {
        if ((m as { type?: string }).type !== 'probe-report') return;
        this.child.off('message', onMessage);
        resolve(m as ProbeReport);
      };
      this.child.on('message', onMessage);
      this.child.send({ type });
    });
  }

  /** The process's event-loop delay while it does nothing for `ms`: what the machine alone adds. */
  async idleLoop(ms = 3000): Promise<ProbeReport> {
    await this.probe('probe-reset');
    await new Promise((r) => setTimeout(r, ms));
    return (await this.probe('probe-report')) as ProbeReport;
  }

  /** Starts a migrate task of `sourcePath` (a folder of cloud `from`) into cloud `to`'s root. */
  async startTask(from: string, sourcePath: string, to: string): Promise<string> {
    const res = await this.call<{ task: { id: string } }>('POST', '/api/tasks', {
      task_type: 0,
      from_cloud: { cloud_id: from, paths: [sourcePath] },
      to_cloud: { cloud_id: to, path: '/' },
    });
    return res.data.task.id;
  }

  /**
   * Polls a task's progress every `everyMs` until it ends (or `stopWhen` says so, for a kill at a
   * point), timing each poll; the peak RSS counts from the call.
   */
  async watch(
    taskId: string,
    startedAt: number,
    everyMs = 200,
    stopWhen?: (finished: number, total: number) => boolean,
  ): Promise<TaskRun> {
    const pid = this.child.pid as number;
    // Writing 5 to clear_refs resets the peak RSS (VmHWM) to the current RSS.
    try {
      writeFileSync(`/proc/${pid}/clear_refs`, '5');
    } catch {
      // not permitted here: the peak then counts from the start of the process
    }
    await this.probe('probe-reset');
    const cpuBefore = cpuMsOf(pid) ?? 0;
    const times: number[] = [];
    let peak = 0;
    let lazyFreeAtPeak = 0;
    let mostRss = 0;
    let polls = 0;
    let last: { state: number; finished: number; total: number };
    for (;;) {
      // Every second or so: the resident size, and the part of it freed lazily (MADV_FREE).
      if (polls++ % Math.max(1, Math.round(1000 / everyMs)) === 0) {
        const r = residentOf(pid);
        if (r && r.rss > mostRss) [mostRss, lazyFreeAtPeak] = [r.rss, r.lazyFree];
      }
      const t0 = performance.now();
      const res = await this.call<{ status: number; finished_counts: number; total_counts: number }>(
        'GET',
        `/api/cloud-manager/poll-progress/${taskId}`,
      );
      times.push(performance.now() - t0);
      peak = Math.max(peak, vmHwm(pid) ?? 0);
      last = { state: res.data.status, finished: res.data.finished_counts, total: res.data.total_counts };
      if (TERMINAL.has(last.state)) break;
      if (stopWhen?.(last.finished, last.total)) break;
      await new Promise((r) => setTimeout(r, everyMs));
    }
    const ms = performance.now() - startedAt;
    const cpuMs = (cpuMsOf(pid) ?? cpuBefore) - cpuBefore;
    const report = (await this.probe('probe-report')) as ProbeReport;
    times.sort((a, b) => a - b);
    return {
      ms,
      state: last.state,
      finished: last.finished,
      total: last.total,
      peakRss: peak,
      lazyFreeAtPeak,
      cpuMs,
      pollP50: percentile(times, 50),
      pollP99: percentile(times, 99),
      pollMax: times[times.length - 1] ?? 0,
      polls: times.length,
      loopP99Ms: report.loopP99Ms,
      loopMaxMs: report.loopMaxMs,
      loopP50Ms: report.loopP50Ms,
      gcTotalMs: report.gcTotalMs,
      gcMaxMs: report.gcMaxMs,
      stalls: report.stalls,
      memory: report.memory,
      lastProgress: { finished: last.finished, total: last.total },
    };
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.stopping = true;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.kill(signal);
    await exited;
  }
}

/**
 * Bytes of a SQLite database and of its WAL. The WAL is scratch space bounded by SQLite's automatic
 * checkpoints (about 4 MiB here, whatever the database's size), so the database is measured once
 * its WAL is written back (a checkpoint from a connection of our own, which the server's running
 * connection allows) and the WAL's size is given apart, as it was before that checkpoint.
 */
export function sqliteBytes(dataDir: string): { db: number; wal: number } {
  const size = (f: string) => {
    try {
      return statSync(join(dataDir, f)).size;
    } catch {
      return 0; // no WAL yet
    }
  };
  const wal = size('skyferry.db-wal');
  const Database = createRequire(import.meta.url)('better-sqlite3') as new (file: string) => {
    pragma(p: string): unknown;
    close(): void;
  };
  const db = new Database(join(dataDir, 'skyferry.db'));
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } finally {
    db.close();
  }
  return { db: size('skyferry.db'), wal };
}

/** One query's rows on a connection of its own. */
async function pgRows<R extends object>(url: string, text: string): Promise<R[]> {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text)).rows;
  } finally {
    await client.end();
  }
}

/** Bytes of a PostgreSQL database. */
export async function postgresBytes(url: string): Promise<number> {
  const rows = await pgRows<{ n: string }>(url, 'select pg_database_size(current_database()) as n');
  return Number(rows[0]?.n ?? 0);
}

/** Each table's size in bytes (PostgreSQL): its heap with TOAST, and its indexes. */
export async function postgresTables(url: string): Promise<Map<string, { heap: number; indexes: number }>> {
  const rows = await pgRows<{ name: string; heap: string; indexes: string }>(
    url,
    `select c.relname as name, pg_table_size(c.oid) as heap, pg_indexes_size(c.oid) as indexes
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where c.relkind = 'r' and n.nspname = 'public'`,
  );
  return new Map(rows.map((row) => [row.name, { heap: Number(row.heap), indexes: Number(row.indexes) }]));
}

/** The tables that grew most between two `postgresTables`, per file: "name heap +h, indexes +i B/file". */
export function tablesGrown(
  before: Map<string, { heap: number; indexes: number }>,
  after: Map<string, { heap: number; indexes: number }>,
  files: number,
): string {
  const grown = [...after].map(([name, a]) => {
    const b = before.get(name) ?? { heap: 0, indexes: 0 };
    return { name, heap: a.heap - b.heap, indexes: a.indexes - b.indexes };
  });
  grown.sort((x, y) => y.heap + y.indexes - (x.heap + x.indexes));
  const perFile = (n: number) => Math.round(n / files);
  return grown
    .slice(0, 3)
    .filter((g) => g.heap + g.indexes > 0)
    .map((g) => `${g.name} heap +${perFile(g.heap)}, indexes +${perFile(g.indexes)} B/file`)
    .join('; ');
}

/** Rows a database holds in the tables a run fills (they should be empty once it ended). */
export async function leftRows(
  url: string | undefined,
  dataDir: string,
): Promise<{ checkpoints: number; syncState: number }> {
  const { createDb } = await import('@skyferry/db');
  const db = createDb({ url: url ?? join(dataDir, 'skyferry.db') });
  try {
    const count = async (table: 'task_checkpoints' | 'task_sync_state') => {
      const r = await db.kysely
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(r.n);
    };
    return { checkpoints: await count('task_checkpoints'), syncState: await count('task_sync_state') };
  } finally {
    await db.close();
  }
}
