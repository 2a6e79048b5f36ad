/**
 * Scale benchmark: many small files, where per-file overhead (not bandwidth) decides. Each row
 * runs Skyferry and `rclone copy` on the same generated tree, side by side, in rounds that
 * alternate the order, and prints each one's median time, CPU time and peak RSS with the ratio.
 *
 *   npm run bench:scale                                  # 50,000 files of 0.5-2 KB
 *   npm run bench:scale -- --million                     # the 1,000,000-file tier (opt-in; an hour or more)
 *   BENCH_FILES=10000 BENCH_ROUNDS=3 npm run bench:scale
 *   BENCH_ROWS=cli,server-sqlite npm run bench:scale     # some rows only
 *   BENCH_DIR=/var/tmp/scale npm run bench:scale         # keep the generated trees there between runs
 *   BENCH_LAYOUT=realistic BENCH_FILES=200000 ...        # the million's shape (folders of 10-10,000 files, deep) at another size
 *   BENCH_PROFILE=/tmp/prof npm run bench:scale          # --cpu-prof of Skyferry's processes into that folder
 *
 * Rows (BENCH_ROWS, default all):
 *   cli              `skyferry copy` local -> local, beside `rclone copy` (default flags)
 *   server-sqlite    a migrate task through the API (SQLite, in-process queue), beside the same rclone copy;
 *                    with the API process's event-loop delay (idle before the task, and during it), its
 *                    garbage-collection pauses and the times of progress polls during the task
 *   server-postgres  the same with PostgreSQL
 *   server-resume    the SQLite task run whole, then again into a fresh folder with its server killed
 *                    (SIGKILL) once half its files are done and a server started in its place: the
 *                    attempt that takes the run over is timed from that server's start, beside the whole
 *                    run; the target's files present at the kill are compared by inode afterwards (a
 *                    file written again gets a new one)
 *   cli-sftp         `skyferry copy` local -> SFTP (OpenSSH sshd on 127.0.0.1, no added latency), beside
 *                    `rclone copy` with its fastest flags for many small files (32 transfers and checkers,
 *                    no hash check, 128 requests in flight)
 *   cli-webdav       the same to WebDAV (Apache mod_dav on 127.0.0.1), rclone with 32 transfers and checkers
 *
 * Times: Skyferry's CLI and rclone are whole processes (start to exit); a server task is timed from
 * its creation to the poll that sees it finished (polls every 200 ms). CPU time: user and system of
 * the whole process (the API process's during the task), steadier than wall time on a shared
 * machine. Peak RSS: rclone's and the CLI's whole process; the API process's (which runs the worker)
 * from the task's start (its peak is reset through /proc/<pid>/clear_refs). Before every run,
 * untimed: `sync`, and the source tree read into the page cache (bench/lib/settle.ts).
 */
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createDatabase,
  run,
  startApacheWebdav,
  startPostgres,
  startSshd,
  type PostgresServer,
} from '@skyferry/testing';
import { MiB, runMeasured, table } from './lib/measure.ts';
import {
  ApiServer,
  leftRows,
  postgresBytes,
  postgresTables,
  sqliteBytes,
  tablesGrown,
  type ProbeReport,
  type TaskRun,
} from './lib/server-task.ts';
import { settle } from './lib/settle.ts';
import { makeTree, type Tree } from './lib/tree.ts';

const here = fileURLToPath(new URL('.', import.meta.url));
const MILLION = process.argv.includes('--million') || process.env.BENCH_MILLION === '1';
const FILES = Number(process.env.BENCH_FILES ?? (MILLION ? 1_000_000 : 50_000));
const MIN_SIZE = Number(process.env.BENCH_MIN_SIZE ?? 512);
const MAX_SIZE = Number(process.env.BENCH_MAX_SIZE ?? 2048);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? (MILLION ? 1 : 3)));
const ROWS = (process.env.BENCH_ROWS ?? 'cli,cli-sftp,cli-webdav,server-sqlite,server-postgres')
  .split(',')
  .filter(Boolean);
const PROFILE = process.env.BENCH_PROFILE;
// The tree's shape: folders of 500 files (flat, the default below a million) or realistic.
const LAYOUT = process.env.BENCH_LAYOUT as 'flat' | 'realistic' | undefined;
const RCLONE_ENV = { RCLONE_CONFIG: '/dev/null' };
const CLI = join(here, '../apps/cli/src/main.ts');

interface Measure {
  ms: number;
  peak: number;
  /** CPU time (user and system) of the process measured, ms: steadier than wall time on a shared machine. */
  cpu: number;
}

interface Row {
  label: string;
  sky: Measure[];
  rclone: Measure[];
  rcloneLabel: string;
  notes: string[];
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

const secs = (ms: number) => (ms / 1000).toFixed(1);
const mb = (bytes: number) => String(Math.round(bytes / MiB));

function profileArgs(name: string): string[] {
  return PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE}`, `--cpu-prof-name=${name}-${Date.now()}.cpuprofile`] : [];
}

/** Runs `rclone copy` into a fresh folder, untimed clean-up before and after. */
async function rcloneCopy(src: string, dst: string, flags: string[] = [], clean?: () => void): Promise<Measure> {
  clean?.();
  await settle(src);
  const m = await runMeasured('rclone', ['copy', src, dst, ...flags], RCLONE_ENV);
  clean?.();
  return { ms: m.ms, peak: m.peakRss, cpu: m.cpuMs };
}

/** `skyferry copy` with a state folder of its own (no resume file from an earlier round). */
async function skyferryCopy(
  tree: Tree,
  dst: string,
  work: string,
  env: Record<string, string> = {},
  clean?: () => void,
): Promise<Measure> {
  clean?.();
  const state = join(work, 'cli-state');
  rmSync(state, { recursive: true, force: true });
  await settle(tree.root);
  const m = await runMeasured(process.execPath, [...profileArgs('cli'), CLI, 'copy', '-q', `${tree.root}/`, dst], {
    SKYFERRY_STATE_DIR: state,
    ...env,
  });
  // Every file of the tree, not only a run that says it succeeded.
  const done = /success: (\d+) of (\d+) done/.exec(m.stdout + m.stderr);
  if (!done || Number(done[1]) !== tree.files || Number(done[2]) !== tree.files)
    throw new Error(`skyferry copy of ${tree.files} files: ${m.stdout}${m.stderr}`);
  clean?.();
  return { ms: m.ms, peak: m.peakRss, cpu: m.cpuMs };
}

/** Rounds alternating which tool goes first; each tool's runs are kept. */
async function rounds(row: Row, sky: () => Promise<Measure>, rclone: () => Promise<Measure>): Promise<void> {
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? [sky, rclone] : [rclone, sky];
    for (const f of order) {
      const m = await f();
      (f === sky ? row.sky : row.rclone).push(m);
    }
    const last = (l: Measure[]) => {
      const m = l[l.length - 1] as Measure;
      return `${secs(m.ms)} s (CPU ${secs(m.cpu)} s, peak ${mb(m.peak)} MiB)`;
    };
    console.log(`  ${row.label} round ${r + 1}: skyferry ${last(row.sky)}, rclone ${last(row.rclone)}`);
  }
}

async function cliRow(tree: Tree, work: string): Promise<Row> {
  const row: Row = {
    label: 'skyferry copy (CLI), local -> local',
    sky: [],
    rclone: [],
    rcloneLabel: 'rclone copy',
    notes: [],
  };
  const dst = join(work, 'dst-cli');
  const clean = () => rmSync(dst, { recursive: true, force: true });
  await rounds(
    row,
    () => skyferryCopy(tree, dst, work, {}, clean),
    () => rcloneCopy(tree.root, dst, [], clean),
  );
  return row;
}

/**
 * `skyferry copy` from the tree to a loopback server (OpenSSH's sshd, or Apache's mod_dav) with no
 * added latency, beside `rclone copy` to the same server with its fastest flags for many small files.
 */
async function cliRemoteRow(tree: Tree, work: string, kind: 'sftp' | 'webdav'): Promise<Row> {
  const remotes = join(work, `remotes-${kind}.json`);
  let stop: () => Promise<void>;
  let dir: string;
  let rcloneDst: string;
  let rcloneFlags: string[];
  const env: Record<string, string> = { SKYFERRY_CONFIG: remotes };
  if (kind === 'sftp') {
    const ssh = await startSshd();
    stop = () => ssh.stop();
    dir = ssh.dir;
    const keyFile = join(work, 'sftp-key');
    writeFileSync(keyFile, ssh.privateKey, { mode: 0o600 });
    env.BENCH_SSH_KEY = ssh.privateKey;
    writeFileSync(
      remotes,
      JSON.stringify({
        remotes: {
          there: {
            kind: 'sftp',
            credentials: {
              host: ssh.host,
              port: ssh.port,
              username: ssh.username,
              private_key: { env: 'BENCH_SSH_KEY' },
            },
          },
        },
      }),
      { mode: 0o600 },
    );
    rcloneDst = `:sftp,host=${ssh.host},port=${ssh.port},user=${ssh.username},key_file='${keyFile}':${join(ssh.dir, 'dst')}`;
    rcloneFlags = ['--transfers', '32', '--checkers', '32', '--sftp-disable-hashcheck', '--sftp-concurrency', '128'];
  } else {
    const dav = await startApacheWebdav();
    stop = () => dav.stop();
    dir = dav.dir;
    env.BENCH_DAV_PASSWORD = dav.password;
    writeFileSync(
      remotes,
      JSON.stringify({
        remotes: {
          there: {
            kind: 'webdav',
            credentials: { url: dav.url, username: dav.username, password: { env: 'BENCH_DAV_PASSWORD' } },
          },
        },
      }),
      { mode: 0o600 },
    );
    const pass = (await run('rclone', ['obscure', dav.password])).trim();
    rcloneDst = `:webdav,url='${dav.url}',vendor=other,user=${dav.username},pass=${pass}:dst`;
    rcloneFlags = ['--transfers', '32', '--checkers', '32'];
  }
  const row: Row = {
    label: `skyferry copy (CLI), local -> ${kind === 'sftp' ? 'SFTP (sshd)' : 'WebDAV (Apache)'} on 127.0.0.1`,
    sky: [],
    rclone: [],
    rcloneLabel: `rclone copy ${rcloneFlags.join(' ')}`,
    notes: [],
  };
  const clean = () => rmSync(join(dir, 'dst'), { recursive: true, force: true });
  try {
    await rounds(
      row,
      () => skyferryCopy(tree, 'there:dst', work, env, clean),
      () => rcloneCopy(tree.root, rcloneDst, rcloneFlags, clean),
    );
  } finally {
    await stop();
  }
  return row;
}

/**
 * A migrate task of cloud `source` into the fresh folder `target` (a cloud of its own), started
 * once the tree is read into the page cache and `beforeStart` has run: its id, and when it started.
 */
async function taskInto(
  server: ApiServer,
  tree: Tree,
  source: string,
  target: string,
  beforeStart?: () => Promise<void>,
): Promise<{ id: string; t0: number }> {
  rmSync(target, { recursive: true, force: true });
  mkdirSync(target, { recursive: true });
  const to = await server.localCloud(target);
  await settle(tree.root);
  await beforeStart?.();
  const t0 = performance.now();
  return { id: await server.startTask(source, '/', to), t0 };
}

/** A migrate task through the API, beside rclone copy; the server's own figures go to the notes. */
async function serverRow(
  tree: Tree,
  base: string,
  work: string,
  db: 'sqlite' | 'postgres',
  pg?: PostgresServer,
): Promise<Row> {
  const row: Row = {
    label: `server migrate task (${db === 'sqlite' ? 'SQLite' : 'PostgreSQL'}, in-process queue)`,
    sky: [],
    rclone: [],
    rcloneLabel: 'rclone copy',
    notes: [],
  };
  const dataDir = join(work, `data-${db}`);
  rmSync(dataDir, { recursive: true, force: true });
  const databaseUrl = db === 'postgres' && pg ? await createDatabase(pg.url) : undefined;
  const server = await ApiServer.start({
    dataDir,
    localRoot: base,
    ...(databaseUrl ? { databaseUrl } : {}),
    execArgv: [...profileArgs(`server-${db}`), ...(process.env.BENCH_SERVER_FLAGS?.split(' ').filter(Boolean) ?? [])],
  });
  const runs: TaskRun[] = [];
  const growth: number[] = [];
  const wal: number[] = [];
  // PostgreSQL: the tables that grew most in each run, heap and indexes apart.
  const grownTables: string[] = [];
  let idle: ProbeReport | undefined;
  try {
    await server.signUp();
    idle = await server.idleLoop();
    const source = await server.localCloud(tree.root);
    let round = 0;
    const sky = async (): Promise<Measure> => {
      const target = join(work, `dst-task-${round++}`);
      let before = 0;
      let tablesBefore: Awaited<ReturnType<typeof postgresTables>> | undefined;
      const { id, t0 } = await taskInto(server, tree, source, target, async () => {
        before = databaseUrl ? await postgresBytes(databaseUrl) : sqliteBytes(dataDir).db;
        if (databaseUrl) tablesBefore = await postgresTables(databaseUrl);
      });
      const r = await server.watch(id, t0);
      if (r.state !== 0 || r.finished !== tree.files)
        throw new Error(`task ended in state ${r.state}, ${r.finished} files`);
      if (databaseUrl) {
        growth.push((await postgresBytes(databaseUrl)) - before);
        if (tablesBefore) grownTables.push(tablesGrown(tablesBefore, await postgresTables(databaseUrl), tree.files));
      } else {
        const after = sqliteBytes(dataDir);
        growth.push(after.db - before);
        wal.push(after.wal);
      }
      runs.push(r);
      rmSync(target, { recursive: true, force: true });
      return { ms: r.ms, peak: r.peakRss, cpu: r.cpuMs };
    };
    const dst = join(work, 'dst-rclone');
    await rounds(row, sky, () => rcloneCopy(tree.root, dst, [], () => rmSync(dst, { recursive: true, force: true })));
  } finally {
    await server.stop();
  }
  const left = await leftRows(databaseUrl, dataDir);
  const worst = (f: (r: TaskRun) => number) => Math.max(...runs.map(f)).toFixed(1);
  row.notes.push(
    `event-loop delay of the idle API process before the task (this machine's share): p50 ${idle?.loopP50Ms.toFixed(1)} ms, p99 ${idle?.loopP99Ms.toFixed(1)} ms, max ${idle?.loopMaxMs.toFixed(1)} ms`,
    `event-loop delay during the task p50 ${worst((r) => r.loopP50Ms)} ms, p99 ${worst((r) => r.loopP99Ms)} ms, max ${worst((r) => r.loopMaxMs)} ms; GC pauses ${worst((r) => r.gcTotalMs)} ms in all, longest ${worst((r) => r.gcMaxMs)} ms; progress polls p99 ${worst((r) => r.pollP99)} ms, max ${worst((r) => r.pollMax)} ms (${runs.reduce((s, r) => s + r.polls, 0)} polls)`,
    `turns of the event loop held over 50 ms (at s from the task's start: ms): ${runs.map((r, i) => `run ${i + 1} (${secs(r.ms)} s): ${r.stalls.map((x) => `${secs(x.atMs)}: ${x.ms}`).join(', ') || 'none'}`).join('; ')}`,
    `memory sampled each second (MiB): ${runs
      .map((r, i) => {
        const m = r.memory;
        const p = m.peak;
        return `run ${i + 1}: at the largest resident size (${p ? secs(p.atMs) : '?'} s) rss ${mb(p?.rss ?? 0)} (freed lazily, the kernel's to take back: ${mb(r.lazyFreeAtPeak)}), heap ${mb(p?.heapUsed ?? 0)} in use of ${mb(p?.heapTotal ?? 0)}, external ${mb(p?.external ?? 0)} (array buffers ${mb(p?.arrayBuffers ?? 0)}); largest heap in use ${mb(m.maxHeapUsed)}, heap ${mb(m.maxHeapTotal)}, external ${mb(m.maxExternal)}`;
      })
      .join('; ')}`,
    `database growth per run ${growth.map((g) => `${Math.round(g / tree.files)} B/file`).join(', ')}${wal.length > 0 ? ` (SQLite: the database file once its WAL is written back; the WAL file at the end of each run ${wal.map((w) => `${mb(w)} MiB`).join(', ')})` : ''}${grownTables.length > 0 ? ` (the tables that grew most: ${grownTables.map((g, i) => `run ${i + 1}: ${g || 'none'}`).join('; ')})` : ''}; rows left after the runs: ${left.checkpoints} checkpoints, ${left.syncState} sync state`,
  );
  return row;
}

/** Every file under `root` and its inode (not the temporary files of writes under way). */
function inodes(root: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!e.isFile() || e.name.startsWith('.skyferry-tmp-')) continue;
    const p = join(e.parentPath, e.name);
    out.set(p, lstatSync(p).ino);
  }
  return out;
}

/**
 * The SQLite migrate task run whole, then killed with SIGKILL at half its files and taken over by a
 * server started in its place: the taking over is timed from that server's start (its lease on the
 * killed run is 3 s), beside the whole run.
 */
async function resumeRow(tree: Tree, base: string, work: string): Promise<Row> {
  const row: Row = {
    label: 'server task killed at 50 % (SIGKILL), the rest by a new server (SQLite)',
    sky: [],
    rclone: [],
    rcloneLabel: 'the same task run whole',
    notes: [],
  };
  const dataDir = join(work, 'data-resume');
  rmSync(dataDir, { recursive: true, force: true });
  const execArgv = process.env.BENCH_SERVER_FLAGS?.split(' ').filter(Boolean) ?? [];
  const env = { SKYFERRY_TASK_LEASE_MS: '3000' };
  let server = await ApiServer.start({ dataDir, localRoot: base, env, execArgv });
  const secret = server.secret;
  try {
    await server.signUp();
    const source = await server.localCloud(tree.root);
    for (let r = 0; r < ROUNDS; r++) {
      // The whole run.
      const whole = join(work, `dst-whole-${r}`);
      const first = await taskInto(server, tree, source, whole);
      const full = await server.watch(first.id, first.t0);
      if (full.state !== 0 || full.finished !== tree.files) throw new Error(`whole run ended in state ${full.state}`);
      rmSync(whole, { recursive: true, force: true });
      row.rclone.push({ ms: full.ms, peak: full.peakRss, cpu: full.cpuMs });

      // Killed at half, then taken over.
      const target = join(work, `dst-killed-${r}`);
      const { id, t0 } = await taskInto(server, tree, source, target);
      const killedAt = await server.watch(id, t0, 100, (finished) => finished >= tree.files / 2);
      await server.stop('SIGKILL');
      const before = inodes(target);
      const t1 = performance.now();
      server = await ApiServer.start({ dataDir, localRoot: base, env, execArgv, secret });
      await server.signIn();
      const rest = await server.watch(id, t1);
      if (rest.state !== 0 || rest.finished !== tree.files) throw new Error(`resumed run ended in state ${rest.state}`);
      const detail = await server.call<{ result: Record<string, number> }>('GET', `/api/tasks/${id}`);
      const after = inodes(target);
      let rewritten = 0;
      for (const [p, ino] of before) if (after.get(p) !== ino) rewritten++;
      rmSync(target, { recursive: true, force: true });
      row.sky.push({ ms: rest.ms, peak: rest.peakRss, cpu: rest.cpuMs });
      const res = detail.data.result;
      row.notes.push(
        `round ${r + 1}: whole run ${secs(full.ms)} s (peak RSS ${mb(full.peakRss)} MiB, at the largest sampled ${mb(full.lazyFreeAtPeak)} MiB of it freed lazily; heap in use at most ${mb(full.memory.maxHeapUsed)} MiB); killed at ${killedAt.finished.toLocaleString('en')} files done (${secs(killedAt.ms)} s), ${before.size.toLocaleString('en')} files on the target; the new server's attempt ${secs(rest.ms)} s (${(rest.ms / full.ms).toFixed(2)} of the whole run); files on the target at the kill written again: ${rewritten}; the run's result: added ${res.added}, skipped ${res.skipped}, failed ${res.failed}, not done ${res.not_done}`,
      );
    }
  } finally {
    await server.stop();
  }
  return row;
}

function printRows(rows: Row[], tree: Tree): void {
  const out = rows.map((r) => {
    const sky = median(r.sky.map((m) => m.ms));
    const rc = median(r.rclone.map((m) => m.ms));
    return [
      r.label,
      secs(sky),
      secs(median(r.sky.map((m) => m.cpu))),
      mb(Math.max(...r.sky.map((m) => m.peak))),
      r.rcloneLabel,
      secs(rc),
      secs(median(r.rclone.map((m) => m.cpu))),
      mb(Math.max(...r.rclone.map((m) => m.peak))),
      (sky / rc).toFixed(2),
      r.sky.map((m) => secs(m.ms)).join(' / '),
      r.rclone.map((m) => secs(m.ms)).join(' / '),
    ];
  });
  console.log(
    `\n${tree.files.toLocaleString('en')} files of ${tree.minSize}-${tree.maxSize} B (${mb(tree.bytes)} MiB), ${tree.folders} folders (${tree.layout}, up to ${tree.maxDepth} deep); medians of ${ROUNDS} round(s)\n`,
  );
  console.log(
    table(
      [
        'Skyferry',
        'time s',
        'CPU s',
        'peak RSS MiB',
        'rclone',
        'time s',
        'CPU s',
        'peak RSS MiB',
        'ratio',
        'Skyferry runs',
        'rclone runs',
      ],
      out,
    ),
  );
  for (const r of rows) for (const n of r.notes) console.log(`${r.label}: ${n}`);
}

async function main(): Promise<void> {
  const base = process.env.BENCH_DIR ?? mkdtempSync(join(tmpdir(), 'skyferry-bench-scale-'));
  mkdirSync(base, { recursive: true });
  if (PROFILE) mkdirSync(PROFILE, { recursive: true });
  const keep = process.env.BENCH_DIR !== undefined;
  const work = join(base, 'work');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  let pg: PostgresServer | undefined;
  try {
    console.log(
      `# scale benchmark: ${cpus().length} CPUs, load ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    const t0 = performance.now();
    const tree = await makeTree(join(base, `tree-${FILES}`), {
      files: FILES,
      minSize: MIN_SIZE,
      maxSize: MAX_SIZE,
      layout: LAYOUT ?? (MILLION || FILES >= 1_000_000 ? 'realistic' : 'flat'),
    });
    console.log(`tree ready in ${secs(performance.now() - t0)} s: ${tree.root}`);
    const rows: Row[] = [];
    // Each row's notes are printed as it ends too (a later row may fail, or the run be stopped).
    const add = (row: Row) => {
      rows.push(row);
      for (const n of row.notes) console.log(`  ${row.label}: ${n}`);
    };
    if (ROWS.includes('cli')) add(await cliRow(tree, work));
    if (ROWS.includes('server-sqlite')) add(await serverRow(tree, base, work, 'sqlite'));
    if (ROWS.includes('server-resume')) add(await resumeRow(tree, base, work));
    if (ROWS.includes('cli-sftp')) add(await cliRemoteRow(tree, work, 'sftp'));
    if (ROWS.includes('cli-webdav')) add(await cliRemoteRow(tree, work, 'webdav'));
    if (ROWS.includes('server-postgres')) {
      pg = await startPostgres();
      add(await serverRow(tree, base, work, 'postgres', pg));
    }
    printRows(rows, tree);
    console.log(
      `load average at the end: ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
  } finally {
    await pg?.stop();
    rmSync(work, { recursive: true, force: true });
    if (!keep) rmSync(base, { recursive: true, force: true });
  }
}

await main();
