/**
 * The `skyferry` command line: copies and syncs between remotes and folders of this machine with
 * the engine the server's workers run (same planner, executor, verification and resume), and lists
 * folders. Runs are resumable: a run stopped midway (killed, or the machine restarted) and started
 * again with the same paths does not copy again the files it had finished.
 */
import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  CLOUD_KIND_INFO,
  CONFLICT_RESOLUTIONS,
  SAME_NAME_POLICIES,
  formatBytes,
  type ConflictResolution,
  type FileFilter,
  type SameNamePolicy,
} from '@skyferry/contract';
import {
  FileCheckpointStore,
  type CheckpointStore,
  checkTrees,
  FileTwoWayStateStore,
  executePlan,
  planTransfer,
  streamable,
  streamTransfer,
  type ItemEvent,
  type PlanRequest,
  type TrafficHook,
  type TransferMode,
  type TransferPlan,
} from '@skyferry/engine';
import { ProviderError, toProviderError, type Entry, type Provider, type ProviderErrorCode } from '@skyferry/providers';
import type * as ServerAdminModule from '@skyferry/server/admin';
import { UsageError } from './errors.ts';
import { COMMANDS, helpText, OPTIONS, version, type Values } from './help.js';
import { EXIT, type CliIo } from './io.ts';
import { Bandwidth, BwTimetable, limitProvider, parseDuration, parseSize } from './limits.ts';
import { PairLockedError, lockPair } from './lock.ts';
import { openLog } from './log.ts';
import { copiedFiles, deleteMoved, printMoved } from './move.ts';
import { filterOf, joinFilterValues } from './filter-flags.ts';
import { refuseOverlap } from './places.ts';
import { addRemote, removeRemote } from './remotes-edit.ts';
import { itemLogger, namer, printCheck, printPlan, printResult, progressPrinter } from './output.ts';
import {
  absolutePath,
  configureOAuthFromEnv,
  loadRemotes,
  locate,
  remotesFilePath,
  stateDirPath,
  type Location,
} from './remotes.ts';

export { EXIT, type CliIo } from './io.ts';
export { helpText } from './help.js';

/** Options of the transfer commands that mean nothing to check, and check's own. */
const TRANSFER_ONLY = [
  'delete-empty-src-dirs',
  'dry-run',
  'transfers',
  'same-name',
  'conflict',
  'yes',
  'no-trash',
  'ignore-free-space',
  'copy-links',
  'skip-links',
  'resync',
  'bwlimit',
  'max-transfer',
  'checksum',
] as const;
const CHECK_ONLY = ['one-way', 'checkers'] as const;

/** A whole number option from 1 to 256. */
function countOf(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 256) {
    throw new UsageError(`--${flag}: "${value}" is not a whole number from 1 to 256`);
  }
  return n;
}

function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], flag: string): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new UsageError(`--${flag}: "${value}" is not one of ${allowed.join(', ')}`);
  }
  return value as T;
}

/** Runs one command line; answers the exit code. Never throws. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  try {
    return await dispatch(argv, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`skyferry: ${err.message}\n`);
      return EXIT.usage;
    }
    if (err instanceof PairLockedError) {
      io.stderr.write(`skyferry: ${err.message}\n`);
      return EXIT.failed;
    }
    const e = toProviderError(err);
    if (e.code === 'canceled' || io.signal?.aborted) {
      io.stderr.write('skyferry: canceled\n');
      return EXIT.canceled;
    }
    io.stderr.write(`skyferry: ${e.code}: ${e.message}\n`);
    return EXIT.failed;
  }
}

async function dispatch(argv: string[], io: CliIo): Promise<number> {
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({
      args: joinFilterValues(argv),
      options: OPTIONS,
      allowPositionals: true,
      strict: true,
    }) as typeof parsed;
  } catch (err) {
    throw new UsageError(`${(err as Error).message.split('\n')[0]} (skyferry --help lists the options)`);
  }
  const { values, positionals } = parsed;
  if (values['log-file'] === undefined) return run(values, positionals, io);
  const log = await openLog(absolutePath(io, values['log-file']));
  try {
    return await run(values, positionals, { ...io, stderr: log });
  } catch (err) {
    // What stops the command is told on the terminal (runCli) and in the log.
    log.write(
      `skyferry: ${err instanceof UsageError ? '' : `${toProviderError(err).code}: `}${(err as Error).message}\n`,
    );
    throw err;
  } finally {
    await log.finish();
  }
}

/** Progress on stderr, at the --stats interval; none with --quiet, --json or --stats 0. */
function progressOf(values: Values, io: CliIo): ReturnType<typeof progressPrinter> | undefined {
  const every = values.stats === undefined ? undefined : parseDuration(values.stats, 'stats');
  if (values.quiet || values.json || every === 0) return undefined;
  return progressPrinter(io, every);
}

async function run(values: Values, positionals: string[], io: CliIo): Promise<number> {
  if (values.version) {
    io.stdout.write(`skyferry ${await version()}\n`);
    return EXIT.ok;
  }
  const [command, ...paths] = positionals;
  if (values.help || command === undefined || command === 'help') {
    io.stdout.write(helpText());
    return values.help || command === 'help' ? EXIT.ok : EXIT.usage;
  }
  if (command === 'admin') return admin(values, paths, io);
  const spec = COMMANDS[command];
  if (!spec) throw new UsageError(`unknown command "${command}"; commands: ${Object.keys(COMMANDS).join(', ')}`);

  const remotesFile = remotesFilePath(io, values.config);
  const remotes = await loadRemotes(remotesFile, io.env);
  const stateDir = stateDirPath(io);
  configureOAuthFromEnv(io.env);

  if (command === 'remotes') {
    const [action, ...rest] = paths;
    if (action === 'add') {
      await addRemote(remotesFile, rest, io, { openBrowser: values['no-browser'] !== true });
      return EXIT.ok;
    }
    if (action === 'remove') {
      await removeRemote(remotesFile, stateDir, rest, io);
      return EXIT.ok;
    }
    if (action === 'import-rclone') {
      const { importRclone } = await import('./rclone/import.ts');
      await importRclone(remotesFile, rest, io, {
        dryRun: values['dry-run'] === true,
        json: values.json === true,
        ...(values['to-server'] !== undefined ? { toServer: values['to-server'] } : {}),
      });
      return EXIT.ok;
    }
    if (action !== undefined) {
      throw new UsageError(`remotes ${action}: use remotes, remotes add, remotes remove or remotes import-rclone`);
    }
    if (remotes.size === 0) io.stderr.write(`no remotes in ${remotesFile}\n`);
    for (const r of remotes.values()) io.stdout.write(`${r.name}\t${r.kind}\t${CLOUD_KIND_INFO[r.kind].displayName}\n`);
    return EXIT.ok;
  }
  if (command === 'check') {
    if (paths.length !== 2) throw new UsageError(`usage: skyferry check ${spec.args}`);
    for (const flag of TRANSFER_ONLY) {
      if (values[flag] !== undefined) throw new UsageError(`--${flag} does not apply to check`);
    }
    const [from, to] = paths.map((p) => locate(p, remotes, io, stateDir, remotesFile)) as [Location, Location];
    return check(from, to, values, io);
  }
  if (command === 'size' || command === 'tree' || command === 'rmdirs' || command === 'dedupe') {
    if (paths.length !== 1) throw new UsageError(`${command} takes one path`);
    if (values.keep !== undefined && command !== 'dedupe') throw new UsageError('--keep applies to dedupe only');
    if (values.level !== undefined && command !== 'tree') throw new UsageError('--level applies to tree only');
    const { runCleanup, keepOf } = await import('./cleanup.ts');
    return runCleanup(command, locate(paths[0] as string, remotes, io, stateDir, remotesFile), io, {
      dryRun: values['dry-run'] === true,
      json: values.json === true,
      quiet: values.quiet === true,
      useTrash: values['no-trash'] !== true,
      keep: keepOf(values.keep),
      ...(values.level !== undefined ? { level: countOf(values.level, 'level') as number } : {}),
    });
  }
  for (const flag of ['keep', 'level'] as const) {
    if (values[flag] !== undefined) throw new UsageError(`--${flag} does not apply to ${command}`);
  }
  if (command === 'ls') {
    if (paths.length !== 1) throw new UsageError('ls takes one path');
    return list(locate(paths[0] as string, remotes, io, stateDir, remotesFile), io, values.json === true);
  }

  const mode = spec.mode as TransferMode;
  if (paths.length < 2 || (mode !== 'migrate' && paths.length !== 2)) {
    throw new UsageError(`usage: skyferry ${command} ${spec.args}`);
  }
  const where = paths.map((p) => locate(p, remotes, io, stateDir, remotesFile));
  const target = where.pop() as Location;
  const sources = where;
  const origin = sources[0] as Location;
  if (sources.some((s) => s.remote !== origin.remote || (!s.remote && parentKey(s) !== parentKey(origin)))) {
    throw new UsageError('the sources of one copy must be on the same remote (or in the same local folder)');
  }
  const filter = await filterOf(values, io);
  const sameNamePolicy = oneOf<SameNamePolicy>(values['same-name'], SAME_NAME_POLICIES, 'same-name');
  if (sameNamePolicy && (mode === 'mirror' || mode === 'two_way')) {
    throw new UsageError(`--same-name does not apply to ${command}`);
  }
  const conflictResolution = oneOf<ConflictResolution>(values.conflict, CONFLICT_RESOLUTIONS, 'conflict');
  if (conflictResolution && mode !== 'two_way') throw new UsageError('--conflict applies to bisync only');
  if (values.resync !== undefined && mode !== 'two_way') throw new UsageError('--resync applies to bisync only');
  if (values.checksum && (mode === 'two_way' || mode === 'incremental')) {
    throw new UsageError(`--checksum does not apply to ${command}`);
  }
  const transfers = countOf(values.transfers, 'transfers');
  for (const flag of CHECK_ONLY)
    if (values[flag] !== undefined) throw new UsageError(`--${flag} applies to check only`);
  if (values.download !== undefined && command !== 'move')
    throw new UsageError('--download applies to check and move only');
  if (values['delete-empty-src-dirs'] !== undefined && command !== 'move')
    throw new UsageError('--delete-empty-src-dirs applies to move only');
  if (values['copy-links'] && values['skip-links'])
    throw new UsageError('--copy-links and --skip-links cannot be used together');
  // One run of a pair at a time (a dry run changes nothing and takes no lock). A two-way pair is
  // the same pair whichever side is named first.
  const lockName =
    mode === 'two_way'
      ? fileKey(['two_way', ...[origin.key, target.key].sort()])
      : fileKey([mode, sources.map((s) => s.key), target.key]);
  const release = values['dry-run'] ? undefined : await lockPair(stateDir, lockName, command);
  try {
    return await transfer(command, mode, sources, target, values, filter, io, stateDir, {
      sameNamePolicy,
      conflictResolution,
      transfers,
    });
  } finally {
    await release?.();
  }
}

async function transfer(
  command: string,
  mode: TransferMode,
  sources: Location[],
  target: Location,
  values: Values,
  filter: FileFilter | null,
  io: CliIo,
  stateDir: string,
  o: { sameNamePolicy?: SameNamePolicy; conflictResolution?: ConflictResolution; transfers?: number },
): Promise<number> {
  const { sameNamePolicy, conflictResolution, transfers } = o;
  const origin = sources[0] as Location;

  // Checked before anything is opened: a mistake in them is a usage error.
  const bandwidth = values.bwlimit === undefined ? undefined : new Bandwidth(new BwTimetable(values.bwlimit));
  const maxTransfer =
    values['max-transfer'] === undefined ? undefined : parseSize(values['max-transfer'], 'max-transfer');
  // Checked before anything is opened too.
  trafficOf(maxTransfer);
  const opened = await openBoth(origin, target);
  const [source, targetProvider] = bandwidth
    ? (opened.map((p) => limitProvider(p, bandwidth)) as [Provider, Provider])
    : opened;
  try {
    // Resume files and two-way state are keyed by the run's mode and places, not by its options.
    const runKey = fileKey([mode, sources.map((s) => s.key), target.key]);
    // A sync to a target that keeps no modification times keeps a record of what it copied, so its
    // next run can tell what changed (written only where the plan says so).
    const twoWayState =
      mode === 'two_way'
        ? new FileTwoWayStateStore(join(stateDir, 'two-way', `${fileKey([origin.key, target.key])}.jsonl`))
        : mode !== 'migrate'
          ? new FileTwoWayStateStore(join(stateDir, 'records', `${fileKey([mode, origin.key, target.key])}.jsonl`))
          : undefined;
    // The stores make their folders; the state folder itself is the user's alone.
    await mkdir(stateDir, { recursive: true, mode: 0o700 });
    const progress = progressOf(values, io);
    const planRequest: PlanRequest = {
      source,
      target: targetProvider,
      mode,
      sourcePaths: sources.map((s) => s.path),
      targetPath: target.path,
      ...(sameNamePolicy ? { sameNamePolicy } : {}),
      filter,
      ...(conflictResolution ? { conflictResolution } : {}),
      ...(twoWayState ? { twoWayState } : {}),
      ...(values['copy-links'] ? { followLinks: true } : {}),
      ...(values.resync ? { resync: true } : {}),
      ...(values.checksum ? { checksum: true } : {}),
      sideNames: { source: origin.remote ?? 'local', target: target.remote ?? 'local' },
      keepSkipped: values['dry-run'] === true,
      ...(io.signal ? { signal: io.signal } : {}),
      ...(progress ? { onScan: progress.scan } : {}),
    };
    // A copy or a one-way sync copies while it plans, folder by folder: its memory does not grow
    // with the tree. A dry run shows the whole plan; a move, mirror and bisync judge it whole.
    if (!values['dry-run'] && command !== 'move' && streamable(planRequest)) {
      return await streamed(planRequest, { mode, sources, target, values, io, stateDir, runKey, progress, transfers });
    }
    let plan: TransferPlan;
    try {
      plan = await planTransfer(planRequest);
    } finally {
      progress?.clear();
    }
    await refuseOverlap(plan, mode, source, targetProvider);
    for (const e of plan.errors)
      io.stderr.write(`warning: could not list ${e.side} ${e.path} (${e.code}: ${e.message}); left alone\n`);
    const reportLinks = values['skip-links'] !== true;
    const name = namer(plan, sources, target);
    if (values['dry-run']) {
      printPlan(plan, io, values.json === true, name, reportLinks);
      if (command === 'move' && !values.json)
        io.stdout.write('Then each source file the target is checked to hold the same is deleted.\n');
      return EXIT.ok;
    }
    const store = new FileCheckpointStore(join(stateDir, 'runs', `${runKey}.jsonl`), {
      keepReadPaths: command === 'move',
    });
    // A move started again after an interruption: what its earlier attempt wrote and checked (read
    // before the run). A move keeps that record past its copy, until its deletions are done: a
    // cancel while it compares and deletes leaves the next run something to trust.
    const moving = command === 'move' ? copiedFiles(plan, await store.all()) : undefined;
    const checkpoints: CheckpointStore = moving
      ? {
          get: (key) => store.get(key),
          getMany: (keys) => store.getMany(keys),
          markDone: (key, info) => store.markDone(key, info),
          clear: async () => undefined,
        }
      : store;
    // With --log-file, each file done or failed is a line of the log.
    const logged = values['log-file'] === undefined ? undefined : itemLogger(io, name);
    const onItem =
      moving && logged
        ? (e: ItemEvent) => {
            moving.onItem(e);
            logged(e);
          }
        : (moving?.onItem ?? logged);
    const traffic = trafficOf(maxTransfer);
    const result = await executePlan(plan, {
      source,
      target: targetProvider,
      ...(onItem ? { onItem } : {}),
      ...(traffic ? { traffic } : {}),
      ...(transfers ? { transfers } : {}),
      checkpoints,
      ...(twoWayState ? { twoWayState } : {}),
      confirmDeletes: values.yes === true,
      ignoreSpaceCheck: values['ignore-free-space'] === true,
      useTrash: values['no-trash'] !== true,
      ...(io.signal ? { signal: io.signal } : {}),
      ...(progress ? { onProgress: progress.run } : {}),
    });
    progress?.clear();
    // A move deletes from the source only after a copy that ran to its end (some files may have failed).
    if (!moving || (result.outcome !== 'success' && result.outcome !== 'partial')) {
      const code = printResult(result, plan, io, values.json === true, undefined, reportLinks ? name : undefined);
      if (moving) io.stderr.write('Nothing was deleted from the source.\n');
      return code;
    }
    const moved = await deleteMoved({
      source,
      target: targetProvider,
      plan,
      copied: moving.copied,
      filter,
      download: values.download === true,
      removeEmptyFolders: values['delete-empty-src-dirs'] === true,
      ...(io.signal ? { signal: io.signal } : {}),
    });
    await store.clear();
    const code = printResult(
      result,
      plan,
      io,
      values.json === true,
      values.json ? { moved } : undefined,
      reportLinks ? name : undefined,
    );
    if (!values.json) printMoved(moved, io, values['delete-empty-src-dirs'] === true);
    return moved.kept.length > 0 || moved.failed.length > 0 ? EXIT.failed : code;
  } finally {
    await closeAll(source, targetProvider);
  }
}

/**
 * --max-transfer: a file that would take the bytes moved past the limit is not started (rclone's
 * cautious cut-off); the run stops as traffic_exceeded. Server-side copies count too.
 */
function trafficOf(maxTransfer: number | undefined): TrafficHook | undefined {
  if (maxTransfer === undefined) return undefined;
  let started = 0;
  return {
    beforeBytes: (bytes) => {
      if (started + bytes > maxTransfer) return false;
      started += bytes;
      return true;
    },
  };
}

/**
 * A copy or one-way sync planned and executed at once (`streamTransfer`): the overlap of source
 * and target is refused once the roots are known, before anything is written; folders that could
 * not be listed are warned about at the end.
 */
async function streamed(
  planRequest: PlanRequest,
  c: {
    mode: TransferMode;
    sources: Location[];
    target: Location;
    values: Values;
    io: CliIo;
    stateDir: string;
    runKey: string;
    progress: ReturnType<typeof progressOf>;
    transfers: number | undefined;
  },
): Promise<number> {
  const { values, io, progress } = c;
  const { source, target } = planRequest;
  const store = new FileCheckpointStore(join(c.stateDir, 'runs', `${c.runKey}.jsonl`), { keepReadPaths: false });
  const maxTransfer =
    values['max-transfer'] === undefined ? undefined : parseSize(values['max-transfer'], 'max-transfer');
  const traffic = trafficOf(maxTransfer);
  let logged: ((e: ItemEvent) => void) | undefined;
  let name: ReturnType<typeof namer> | undefined;
  try {
    const { plan, result } = await streamTransfer({
      ...planRequest,
      ...(values['log-file'] !== undefined ? { onItem: (e: ItemEvent) => logged?.(e) } : {}),
      ...(traffic ? { traffic } : {}),
      ...(c.transfers ? { transfers: c.transfers } : {}),
      checkpoints: store,
      confirmDeletes: values.yes === true,
      ignoreSpaceCheck: values['ignore-free-space'] === true,
      useTrash: values['no-trash'] !== true,
      ...(progress ? { onProgress: progress.run } : {}),
      beforeWrites: async (p) => {
        await refuseOverlap(p, c.mode, source, target);
        name = namer(p, c.sources, c.target);
        if (values['log-file'] !== undefined) logged = itemLogger(io, name);
      },
    });
    progress?.clear();
    // The run could not start (source missing, auth expired): told as a planning failure is.
    if (!plan || !name) {
      const e = result.error ?? { code: 'unknown', message: 'the run could not start' };
      throw new ProviderError(e.code as ProviderErrorCode, e.message);
    }
    for (const e of plan.errors)
      io.stderr.write(`warning: could not list ${e.side} ${e.path} (${e.code}: ${e.message}); left alone\n`);
    return printResult(
      result,
      plan,
      io,
      values.json === true,
      undefined,
      values['skip-links'] !== true ? name : undefined,
    );
  } finally {
    progress?.clear();
    await store.close();
  }
}

/** Releases providers' connections; a failure to close is no failure of the command. */
async function closeAll(...providers: Provider[]): Promise<void> {
  await Promise.all(providers.map((p) => p.close?.().catch(() => undefined)));
}

/**
 * Opens both places at once; when one cannot be opened the other is closed again (an open SFTP or
 * FTP connection would keep the process alive).
 */
async function openBoth(a: Location, b: Location): Promise<[Provider, Provider]> {
  const opened = await Promise.allSettled([a.open(), b.open()]);
  const failedOpen = opened.find((o) => o.status === 'rejected');
  if (failedOpen) {
    await closeAll(...opened.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : [])));
    throw failedOpen.reason;
  }
  return opened.map((o) => (o as PromiseFulfilledResult<Provider>).value) as [Provider, Provider];
}

async function check(from: Location, to: Location, values: Values, io: CliIo): Promise<number> {
  const filter = await filterOf(values, io);
  const checkers = countOf(values.checkers, 'checkers');
  const [source, target] = await openBoth(from, to);
  const progress = progressOf(values, io);
  try {
    const result = await checkTrees({
      source,
      sourcePath: from.path,
      target,
      targetPath: to.path,
      filter,
      oneWay: values['one-way'] === true,
      download: values.download === true,
      ...(checkers ? { checkers } : {}),
      ...(io.signal ? { signal: io.signal } : {}),
      ...(progress ? { onProgress: progress.check } : {}),
    });
    progress?.clear();
    return printCheck(result, io, values.json === true);
  } finally {
    progress?.clear();
    await closeAll(source, target);
  }
}

/** A file name for state kept about these places (a hash: paths may hold any character). */
function fileKey(parts: unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 32);
}

function parentKey(l: Location): string {
  return l.key.slice(0, l.key.lastIndexOf('/'));
}

async function list(where: Location, io: CliIo, json: boolean): Promise<number> {
  const provider: Provider = await where.open();
  try {
    const entries: Entry[] = [];
    let token: string | undefined;
    try {
      do {
        const page = await provider.list(where.path, {
          ...(token ? { pageToken: token } : {}),
          ...(io.signal ? { signal: io.signal } : {}),
        });
        entries.push(...page.entries);
        token = page.nextPageToken;
      } while (token);
    } catch (err) {
      // A file: shown alone, as ls does.
      if (toProviderError(err).code !== 'not_dir') throw err;
      entries.push(await provider.stat(where.path, io.signal ? { signal: io.signal } : {}));
    }
    entries.sort((a, b) => (a.kind === b.kind ? a.name.localeCompare(b.name) : a.kind === 'dir' ? -1 : 1));
    if (json) {
      io.stdout.write(
        JSON.stringify(
          entries.map((e) => ({ name: e.name, kind: e.kind, size: e.size, modTime: e.modTime?.toISOString() })),
        ) + '\n',
      );
      return EXIT.ok;
    }
    for (const e of entries) {
      const size = e.kind === 'dir' ? '-' : formatBytes(e.size);
      const when = e.modTime ? e.modTime.toISOString().slice(0, 16).replace('T', ' ') : '';
      io.stdout.write(`${size.padStart(10)}  ${when.padEnd(16)}  ${e.name}${e.kind === 'dir' ? '/' : ''}\n`);
    }
    return EXIT.ok;
  } finally {
    await closeAll(provider);
  }
}

/**
 * `skyferry admin grant <email> <plan> [--until DATE]` and `admin revoke <email>`: the operator's
 * plan changes on the server's host, through the server's own billing service and database (named
 * by the same environment the server runs with), audited as `cli`.
 */
type ServerAdmin = typeof ServerAdminModule;

async function admin(values: Values, args: string[], io: CliIo): Promise<number> {
  const [action, email, plan] = args;
  if (action === 'grant' ? !email || !plan || args.length > 3 : action !== 'revoke' || !email || args.length > 2)
    throw new UsageError('usage: skyferry admin grant <email> <plan> [--until YYYY-MM-DD] | admin revoke <email>');
  let until: Date | undefined;
  if (values.until !== undefined) {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(values.until) || Number.isNaN(Date.parse(values.until)))
      throw new UsageError(`--until: "${values.until}" is not a date (YYYY-MM-DD)`);
    // The whole last day counts: the plan runs to its end (UTC).
    until = new Date(Date.parse(values.until) + 86_400_000 - 1000);
  }
  // Loaded only here: the server's modules are not part of the transfer commands.
  const serverAdmin = '@skyferry/server/admin';
  const { adminPlan, AdminError } = (await import(serverAdmin)) as ServerAdmin;
  try {
    const result = await adminPlan(
      io.env,
      io.cwd,
      action === 'grant'
        ? { kind: 'grant', email: email ?? '', plan: plan ?? '', ...(until ? { until } : {}) }
        : { kind: 'revoke', email: email ?? '' },
    );
    const expire = result.expire > 0 ? new Date(result.expire * 1000).toISOString() : 'none';
    io.stdout.write(`${result.email}: plan ${result.plan ?? 'free'}, until ${expire}\n`);
    return EXIT.ok;
  } catch (err) {
    if (err instanceof AdminError) throw new UsageError(err.message);
    throw err;
  }
}
