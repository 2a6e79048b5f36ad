/**
 * The `skyferry` command line: copies and syncs between remotes and folders of this machine with
 * the engine the server's workers run (same planner, executor, verification and resume), and lists
 * folders. Runs are resumable: a run stopped midway (killed, or the machine restarted) and started
 * again with the same paths does not copy again the files it had finished.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
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
  type TransferMode,
  type TransferPlan,
} from '@skyferry/engine';
import { toProviderError, type Entry, type Provider } from '@skyferry/providers';
import { UsageError } from './errors.ts';
import { EXIT, type CliIo } from './io.ts';
import { PairLockedError, lockPair } from './lock.ts';
import { copiedFiles, deleteMoved, printMoved } from './move.ts';
import { FILTER_HELP, FILTER_OPTIONS, filterOf, joinFilterValues } from './filter-flags.ts';
import { refuseOverlap } from './places.ts';
import { addRemote, removeRemote } from './remotes-edit.ts';
import { namer, printCheck, printPlan, printResult, progressPrinter } from './output.ts';
import { CLI_KINDS, loadRemotes, locate, remotesFilePath, stateDirPath, type Location } from './remotes.ts';

export { EXIT, type CliIo } from './io.ts';

const COMMANDS: Record<string, { mode?: TransferMode; args: string; about: string }> = {
  copy: { mode: 'migrate', args: '<source>... <target>', about: 'copy files and folders into a folder; never deletes' },
  move: {
    mode: 'migrate',
    args: '<source>... <target>',
    about: 'copy, then delete each source file the target is checked to hold the same',
  },
  sync: { mode: 'one_way', args: '<source> <target>', about: "one-way sync: add and update the target's files" },
  mirror: {
    mode: 'mirror',
    args: '<source> <target>',
    about: 'make the target an exact copy (extras removed once every copy succeeded)',
  },
  incremental: {
    mode: 'incremental',
    args: '<source> <target>',
    about: 'copy only new files and files newer than the same name on the target',
  },
  bisync: {
    mode: 'two_way',
    args: '<a> <b>',
    about: 'two-way sync: changes and deletions on either side reach the other',
  },
  check: {
    args: '<source> <target>',
    about: 'compare two folders: files missing on either side, or different (writes nothing)',
  },
  ls: { args: '<path>', about: 'list a folder' },
  remotes: {
    args: '[add|remove ...]',
    about: 'list the remotes; add <name> <kind> field=value...; remove <name>',
  },
};

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
] as const;
const CHECK_ONLY = ['one-way', 'checkers'] as const;

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
  config: { type: 'string' },
  'dry-run': { type: 'boolean', short: 'n' },
  transfers: { type: 'string' },
  'same-name': { type: 'string' },
  ...FILTER_OPTIONS,
  conflict: { type: 'string' },
  yes: { type: 'boolean', short: 'y' },
  'no-trash': { type: 'boolean' },
  'ignore-free-space': { type: 'boolean' },
  'copy-links': { type: 'boolean', short: 'L' },
  'skip-links': { type: 'boolean' },
  resync: { type: 'boolean' },
  'one-way': { type: 'boolean' },
  download: { type: 'boolean' },
  checkers: { type: 'string' },
  'delete-empty-src-dirs': { type: 'boolean' },
  json: { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
} as const satisfies ParseArgsConfig['options'];

type Values = {
  [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K] extends { multiple: true }
    ? string[]
    : (typeof OPTIONS)[K]['type'] extends 'string'
      ? string
      : boolean;
};

export function helpText(): string {
  const width = Math.max(...Object.entries(COMMANDS).map(([n, c]) => `${n} ${c.args}`.length));
  const commands = Object.entries(COMMANDS)
    .map(([n, c]) => `  ${`${n} ${c.args}`.padEnd(width)}  ${c.about}`)
    .join('\n');
  return `Usage: skyferry <command> [options] <paths>

Commands:
${commands}

Paths: "<remote>:<path>" for a remote of the remotes file, anything else a file or folder of this
machine. copy puts each source into the target folder under its own name; the sync commands pair
the source folder's contents with the target folder's.

Options:
  -n, --dry-run              show what would be done, change nothing
      --transfers <n>        files at once (default 8)
      --same-name <policy>   copy, sync, incremental: ${SAME_NAME_POLICIES.join(' | ')}
                             (default size_differs_or_newer)
      --conflict <rule>      bisync, a file changed on both sides: ${CONFLICT_RESOLUTIONS.join(' | ')}
                             (default keep_both: the older one is renamed)
  -y, --yes                  run a sync that deletes more than half of a side's files
      --resync               bisync: start over as a merge that deletes nothing (the way on
                             when a side is missing or lists no file where the last run left files)
      --no-trash             delete for good, not to the side's trash
      --ignore-free-space    run although the target reports too little free space
  -L, --copy-links           follow symbolic links (inside each side's folder, never round a
                             loop); by default each is left alone and reported (exit 3)
      --skip-links           leave symbolic links alone without reporting them
      --one-way              check: only that the source's files are on the target and the same
      --download             check, move: read files the two sides have no common hash for
      --checkers <n>         check: listings and comparisons at once (default 8)
      --delete-empty-src-dirs
                             move: then remove the source folders it left empty
      --json                 print the result (or, with --dry-run, the plan) as JSON
  -q, --quiet                no progress
      --config <file>        the remotes file
  -h, --help                 this text
  -V, --version              the version

${FILTER_HELP}

Remotes file: --config, $SKYFERRY_CONFIG, or ~/.config/skyferry/remotes.json:
  { "remotes": { "photos": { "kind": "s3_compatible", "credentials": {
      "endpoint": "https://s3.example.com", "bucket": "photos", "access_key_id": "AK...",
      "secret_access_key": { "env": "PHOTOS_SECRET" } } } } }
Kinds: ${CLI_KINDS.join(', ')} (fields as in the web app's
Add cloud form). A secret may be read from an environment variable ({ "env": "NAME" }); a file
holding secrets itself must be readable by you alone (chmod 600). Or let skyferry write it:
  skyferry remotes add photos s3_compatible endpoint=https://s3.example.com bucket=photos \\
    access_key_id=AK... secret_access_key=@env:PHOTOS_SECRET
  skyferry remotes add nas sftp host=nas.lan username=me private_key=@file:~/.ssh/id_ed25519
  (field=- reads a value from standard input: echo "$PASS" | skyferry remotes add dav webdav ... password=-)
Remotes may be at any address, this machine's and the LAN's included: skyferry runs as you (the
server's private-network guard does not apply here).
Resume files, two-way state and the lock that keeps a second run of the same pair from starting:
$SKYFERRY_STATE_DIR or ~/.local/state/skyferry.

Exit codes: 0 done (check: no differences), 1 files failed, names were left alone as conflicts
no rule resolves (a file and a folder of one name, names differing only in case, names that are
not UTF-8), the run stopped, another run of the pair is under way, check found differences or move
kept source files, 2 usage or remotes file mistake, 3 everything else done but symbolic links were
left alone (each is listed; see -L, --skip-links; 1 wins when both apply), 130 canceled.
`;
}

async function version(): Promise<string> {
  const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

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
  if (values.version) {
    io.stdout.write(`skyferry ${await version()}\n`);
    return EXIT.ok;
  }
  const [command, ...paths] = positionals;
  if (values.help || command === undefined || command === 'help') {
    io.stdout.write(helpText());
    return values.help || command === 'help' ? EXIT.ok : EXIT.usage;
  }
  const spec = COMMANDS[command];
  if (!spec) throw new UsageError(`unknown command "${command}"; commands: ${Object.keys(COMMANDS).join(', ')}`);

  const remotesFile = remotesFilePath(io, values.config);
  const remotes = await loadRemotes(remotesFile, io.env);
  const stateDir = stateDirPath(io);

  if (command === 'remotes') {
    const [action, ...rest] = paths;
    if (action === 'add') {
      await addRemote(remotesFile, rest, io);
      return EXIT.ok;
    }
    if (action === 'remove') {
      await removeRemote(remotesFile, stateDir, rest, io);
      return EXIT.ok;
    }
    if (action !== undefined) throw new UsageError(`remotes ${action}: use remotes, remotes add or remotes remove`);
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

  const [source, targetProvider] = await openBoth(origin, target);
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
    const progress = values.quiet || values.json ? undefined : progressPrinter(io);
    let plan: TransferPlan;
    try {
      plan = await planTransfer({
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
        sideNames: { source: origin.remote ?? 'local', target: target.remote ?? 'local' },
        keepSkipped: values['dry-run'] === true,
        ...(io.signal ? { signal: io.signal } : {}),
        ...(progress ? { onScan: progress.scan } : {}),
      });
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
    const store = new FileCheckpointStore(join(stateDir, 'runs', `${runKey}.jsonl`));
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
    const result = await executePlan(plan, {
      source,
      target: targetProvider,
      ...(moving ? { onItem: moving.onItem } : {}),
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
  const progress = values.quiet || values.json ? undefined : progressPrinter(io);
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
