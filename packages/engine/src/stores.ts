import { createHash, randomUUID } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { EntryKind } from '@skyferry/providers';
import type { Fingerprint, PlanAction, Side } from './types.ts';

// ---------------------------------------------------------------------------------------------
// Checkpoints: every finished item is recorded, so a run restarted after a crash skips it.
// ---------------------------------------------------------------------------------------------

/** What is remembered about a finished item. */
export interface CheckpointInfo {
  action: PlanAction;
  /** Bytes the item moved. */
  bytes: number;
  /** two_way: the state record(s) the item produced, staged again when the run resumes. */
  records?: TwoWayRecord[];
  /** A file written: the file it was written from (its path on the side read, and its size then). */
  read?: { path: string; size: number };
}

/**
 * Where a run records finished items. The caller owns it and scopes it to one task (the server
 * keeps it in its database). Keys are stable across re-planning: they name the action, the paths
 * and the source file's size and modification time, so a file changed since is copied again. A
 * record counts only where the new plan agrees (see `stillStands` in executor.ts).
 */
export interface CheckpointStore {
  /** The record of a finished item, or undefined. */
  get(key: string): Promise<CheckpointInfo | undefined>;
  /** Optional bulk lookup (used in batches when present). */
  getMany?(keys: string[]): Promise<Map<string, CheckpointInfo>>;
  /** Called once an item has fully succeeded (after verification). Must be durable when it resolves. */
  markDone(key: string, info: CheckpointInfo): Promise<void>;
  /**
   * Forget the finished items: called when a run ends (success, partial or failed), not when it is
   * interrupted. Temporary-file records stay (see `removeTempFolders`).
   */
  clear(): Promise<void>;
  /**
   * Records, durably, that the run writes through temporary files tagged `tag` into folder `dir`
   * of a side, before its first write there. A run resuming after a crash (or a later run) removes
   * what such writes left (`Provider.removeTemps`), then forgets the record. Optional: without it
   * leftovers wait for the backends' own sweep (two hours).
   */
  addTempFolder?(folder: TempFolder): Promise<void>;
  /** The folders recorded by `addTempFolder` and not removed since. */
  tempFolders?(): Promise<TempFolder[]>;
  /** Forgets folders once nothing of the run's is left in them. */
  removeTempFolders?(folders: TempFolder[]): Promise<void>;
  /**
   * What is recorded (by earlier, interrupted attempts of the run): a resumed run counts what they
   * did that its own plan no longer holds (a file they copied is a skip now) as done, so that the
   * run's figures are those of the whole run. Optional: without it such items count as skipped.
   */
  tally?(): Promise<CheckpointTally>;
  /**
   * Keeps what the first attempt of the run planned (until `clear`): an attempt resuming it counts
   * the files an earlier one wrote but was cut off before recording (killed between the write and
   * its record) by the skips its own plan has beyond the first one's. Optional, with `planned`.
   */
  savePlanned?(figures: PlannedFigures): Promise<void>;
  /** What `savePlanned` kept, if anything. */
  planned?(): Promise<PlannedFigures | undefined>;
  /**
   * Records, durably, a batch of files a streamed run is about to write (before the first byte of
   * any), with the action each is planned for; resolves to the batch's id. A run resuming after a
   * kill counts a file its plan now skips, and that a batch still held names, as written by the
   * attempt before (cut off between the write and its record). Optional, with `intentsDone` and
   * `intents`; `clear` forgets them too.
   */
  intend?(items: Array<[key: string, action: PlanAction]>): Promise<string>;
  /** The batch's files are each recorded done, or failed: the batch is forgotten. */
  intentsDone?(id: string): Promise<void>;
  /** The batches still held, as a lookup of a file's key; undefined when there are none. */
  intents?(): Promise<IntentLookup | undefined>;
}

/** What an earlier attempt meant to do with a file it may have written (`CheckpointStore.intents`). */
export type IntentLookup = (key: string) => PlanAction | undefined;

/** Files the first attempt of a run planned, by action (`CheckpointStore.savePlanned`). */
export interface PlannedFigures {
  copy: number;
  update: number;
  skip: number;
  /** The plan's options (JSON): figures of a run planned otherwise (the task was edited since) do not apply. */
  of?: string;
}

/** Items a checkpoint store holds, by the action recorded, and the bytes they moved. */
export interface CheckpointTally {
  count: number;
  bytes: number;
  byAction: Partial<Record<PlanAction, number>>;
}

/** Sums up checkpoint records. */
export function tallyOf(infos: Iterable<CheckpointInfo>): CheckpointTally {
  const tally: CheckpointTally = { count: 0, bytes: 0, byAction: {} };
  for (const info of infos) {
    tally.count++;
    tally.bytes += info.bytes;
    tally.byAction[info.action] = (tally.byAction[info.action] ?? 0) + 1;
  }
  return tally;
}

/** A folder a run writes temporary files into (`CheckpointStore.addTempFolder`). */
export interface TempFolder {
  side: Side;
  dir: string;
  /** The run's tag of its temporary files (`WriteOptions.tempTag`). */
  tag: string;
}

/** The key of a temporary-file record (stores keep one record per key). */
export function tempFolderKey(f: TempFolder): string {
  return `${f.side}|${f.tag}|${f.dir}`;
}

export class MemoryCheckpointStore implements CheckpointStore {
  readonly done = new Map<string, CheckpointInfo>();
  readonly temps = new Map<string, TempFolder>();
  figures: PlannedFigures | undefined;
  async get(key: string): Promise<CheckpointInfo | undefined> {
    return this.done.get(key);
  }
  async getMany(keys: string[]): Promise<Map<string, CheckpointInfo>> {
    const out = new Map<string, CheckpointInfo>();
    for (const k of keys) {
      const v = this.done.get(k);
      if (v) out.set(k, v);
    }
    return out;
  }
  async markDone(key: string, info: CheckpointInfo): Promise<void> {
    this.done.set(key, info);
  }
  async clear(): Promise<void> {
    this.done.clear();
    this.announced.clear();
    this.figures = undefined;
  }
  async tally(): Promise<CheckpointTally> {
    return tallyOf(this.done.values());
  }
  async savePlanned(figures: PlannedFigures): Promise<void> {
    this.figures = figures;
  }
  async planned(): Promise<PlannedFigures | undefined> {
    return this.figures;
  }
  async addTempFolder(folder: TempFolder): Promise<void> {
    this.temps.set(tempFolderKey(folder), folder);
  }
  async tempFolders(): Promise<TempFolder[]> {
    return [...this.temps.values()];
  }
  async removeTempFolders(folders: TempFolder[]): Promise<void> {
    for (const f of folders) this.temps.delete(tempFolderKey(f));
  }
  readonly announced = new Map<string, Array<[string, PlanAction]>>();
  async intend(items: Array<[key: string, action: PlanAction]>): Promise<string> {
    const id = randomUUID();
    this.announced.set(id, items);
    return id;
  }
  async intentsDone(id: string): Promise<void> {
    this.announced.delete(id);
  }
  async intents(): Promise<IntentLookup | undefined> {
    return intentLookup(this.announced.values(), (k) => k);
  }
}

/** The lookup of the writes in announced batches (`CheckpointStore.intents`), by `keyOf` each key. */
function intentLookup(
  batches: Iterable<Array<[string, PlanAction]>>,
  keyOf: (key: string) => string,
): IntentLookup | undefined {
  const meant = new Map<string, PlanAction>();
  for (const batch of batches) for (const [k, a] of batch) if (a === 'copy' || a === 'update') meant.set(k, a);
  return meant.size === 0 ? undefined : (key) => meant.get(keyOf(key));
}

/** Appends one JSON line per write to a file; concurrent appends are coalesced into one write. */
class LineAppender {
  readonly path: string;
  private handle: FileHandle | undefined;
  private pending: string[] = [];
  private waiters: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  private writing = false;

  constructor(path: string) {
    this.path = path;
  }

  append(line: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push(line);
      this.waiters.push({ resolve, reject });
      if (!this.writing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.writing = true;
    while (this.pending.length > 0) {
      const lines = this.pending;
      const waiters = this.waiters;
      this.pending = [];
      this.waiters = [];
      try {
        let text = lines.join('');
        if (!this.handle) {
          await mkdir(dirname(this.path), { recursive: true });
          this.handle = await open(this.path, 'a+');
          // A line torn by a kill is ended first, or the next record would be lost with it.
          const { size } = await this.handle.stat();
          if (size > 0) {
            const last = Buffer.alloc(1);
            await this.handle.read(last, 0, 1, size - 1);
            if (last[0] !== 0x0a) text = '\n' + text;
          }
        }
        // write() returning means the kernel has the bytes: they survive the process being killed.
        await this.handle.write(text);
        for (const w of waiters) w.resolve();
      } catch (err) {
        for (const w of waiters) w.reject(err);
      }
    }
    this.writing = false;
  }

  async close(): Promise<void> {
    while (this.writing || this.pending.length > 0) await new Promise((r) => setTimeout(r, 1));
    await this.handle?.close();
    this.handle = undefined;
  }
}

async function readLines(path: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return [];
    throw err;
  }
  const lines = text.split('\n');
  // A process killed mid-write can leave a torn last line; it is ignored.
  return lines.filter((l) => l.length > 0);
}

function parseLine<T>(line: string): T | undefined {
  try {
    return JSON.parse(line) as T;
  } catch {
    return undefined;
  }
}

/**
 * A checkpoint store in one append-only JSON-lines file (for the CLI and tests; the server uses its
 * database); temporary-file records in a second one beside it (`<path>.temps`), which `clear` keeps.
 */
export class FileCheckpointStore implements CheckpointStore {
  private readonly appender: LineAppender;
  /** Earlier attempts' records, by a digest of their key (`keyOf`). */
  private done: Map<string, CheckpointInfo> | undefined;
  private readonly tempsPath: string;
  private temps: Map<string, TempFolder> | undefined;
  private tempsAppender: LineAppender | undefined;
  private readonly keepReadPaths: boolean;

  /**
   * `keepReadPaths`: `all` answers the path each file was written from (a move deletes by them);
   * without, records are read back without it (a resumed run of a million files holds less).
   */
  constructor(path: string, opts: { keepReadPaths?: boolean } = {}) {
    this.appender = new LineAppender(path);
    this.tempsPath = `${path}.temps`;
    this.keepReadPaths = opts.keepReadPaths ?? true;
  }

  /** A record's key in memory: a digest of 22 characters, whatever the length of the path in it. */
  private keyOf(key: string): string {
    return createHash('sha256').update(key).digest('base64url').slice(0, 22);
  }

  private async loadTemps(): Promise<Map<string, TempFolder>> {
    if (!this.temps) {
      const map = new Map<string, TempFolder>();
      for (const line of await readLines(this.tempsPath)) {
        const rec = parseLine<{ add?: TempFolder; remove?: TempFolder }>(line);
        if (rec?.add) map.set(tempFolderKey(rec.add), rec.add);
        if (rec?.remove) map.delete(tempFolderKey(rec.remove));
      }
      this.temps = map;
    }
    return this.temps;
  }

  async addTempFolder(folder: TempFolder): Promise<void> {
    (await this.loadTemps()).set(tempFolderKey(folder), folder);
    this.tempsAppender ??= new LineAppender(this.tempsPath);
    await this.tempsAppender.append(JSON.stringify({ add: folder }) + '\n');
  }

  async tempFolders(): Promise<TempFolder[]> {
    return [...(await this.loadTemps()).values()];
  }

  async removeTempFolders(folders: TempFolder[]): Promise<void> {
    const temps = await this.loadTemps();
    for (const f of folders) temps.delete(tempFolderKey(f));
    await this.tempsAppender?.close();
    this.tempsAppender = undefined;
    // Written anew with what is left (a few lines: one per folder with leftovers).
    if (temps.size === 0) await rm(this.tempsPath, { force: true });
    else await writeFile(this.tempsPath, [...temps.values()].map((f) => JSON.stringify({ add: f }) + '\n').join(''));
  }

  private async load(): Promise<Map<string, CheckpointInfo>> {
    if (!this.done) {
      const map = new Map<string, CheckpointInfo>();
      // Line by line: the file of a long run holds a line per file done.
      let lines: AsyncIterable<string> | string[] = [];
      try {
        const fh = await open(this.appender.path, 'r');
        lines = createInterface({ input: fh.createReadStream({ encoding: 'utf8' }), crlfDelay: Infinity });
      } catch (err) {
        if ((err as { code?: string }).code !== 'ENOENT') throw err;
      }
      for await (const line of lines) {
        // A process killed mid-write can leave a torn last line; it is ignored.
        const rec = line.length > 0 ? parseLine<{ k: string; i: CheckpointInfo }>(line) : undefined;
        if (!rec) continue;
        // A fresh object of the fields kept (a deleted field would leave a slower, larger one).
        const info: CheckpointInfo = { action: rec.i.action, bytes: rec.i.bytes };
        if (rec.i.records) info.records = rec.i.records;
        if (this.keepReadPaths && rec.i.read) info.read = rec.i.read;
        map.set(this.keyOf(rec.k), info);
      }
      this.done = map;
    }
    return this.done;
  }

  async get(key: string): Promise<CheckpointInfo | undefined> {
    return (await this.load()).get(this.keyOf(key));
  }
  async tally(): Promise<CheckpointTally> {
    return tallyOf((await this.load()).values());
  }
  async getMany(keys: string[]): Promise<Map<string, CheckpointInfo>> {
    const done = await this.load();
    const out = new Map<string, CheckpointInfo>();
    for (const k of keys) {
      const v = done.get(this.keyOf(k));
      if (v) out.set(k, v);
    }
    return out;
  }
  /** Every item recorded (a resumed move trusts the files an earlier attempt wrote and checked). */
  async all(): Promise<CheckpointInfo[]> {
    return [...(await this.load()).values()];
  }
  /**
   * Appends the record for the attempts that come after this one. `get`, `getMany`, `tally` and
   * `all` answer what the file held when first read (earlier attempts): a run of a million files
   * keeps none of its own records in memory.
   */
  async markDone(key: string, info: CheckpointInfo): Promise<void> {
    await this.appender.append(JSON.stringify({ k: key, i: info }) + '\n');
  }
  async clear(): Promise<void> {
    await this.appender.close();
    await this.intentsAppender?.close();
    this.intentsAppender = undefined;
    await rm(this.appender.path, { force: true });
    await rm(`${this.appender.path}.planned`, { force: true });
    await rm(this.intentsPath, { force: true });
    this.done = new Map();
  }
  async savePlanned(figures: PlannedFigures): Promise<void> {
    await mkdir(dirname(this.appender.path), { recursive: true });
    await writeFile(`${this.appender.path}.planned`, JSON.stringify(figures));
  }
  async planned(): Promise<PlannedFigures | undefined> {
    try {
      return parseLine<PlannedFigures>(await readFile(`${this.appender.path}.planned`, 'utf8'));
    } catch {
      return undefined;
    }
  }
  async close(): Promise<void> {
    await this.appender.close();
    await this.tempsAppender?.close();
    await this.intentsAppender?.close();
  }

  private intentsAppender: LineAppender | undefined;
  private get intentsPath(): string {
    return `${this.appender.path}.intents`;
  }

  /** A line per batch (its writes by key digest), and a line when it is settled. */
  async intend(items: Array<[key: string, action: PlanAction]>): Promise<string> {
    const id = randomUUID();
    const w = items.filter(([, a]) => a === 'copy' || a === 'update').map(([k, a]) => [this.keyOf(k), a]);
    this.intentsAppender ??= new LineAppender(this.intentsPath);
    await this.intentsAppender.append(JSON.stringify({ n: id, w }) + '\n');
    return id;
  }
  async intentsDone(id: string): Promise<void> {
    this.intentsAppender ??= new LineAppender(this.intentsPath);
    await this.intentsAppender.append(JSON.stringify({ s: id }) + '\n');
  }
  async intents(): Promise<IntentLookup | undefined> {
    const held = new Map<string, Array<[string, PlanAction]>>();
    for (const line of await readLines(this.intentsPath)) {
      const rec = parseLine<{ n?: string; w?: Array<[string, PlanAction]>; s?: string }>(line);
      if (rec?.n && rec.w) held.set(rec.n, rec.w);
      else if (rec?.s) held.delete(rec.s);
    }
    return intentLookup(held.values(), (k) => this.keyOf(k));
  }
}

// ---------------------------------------------------------------------------------------------
// Two-way sync state: what both sides looked like after the last successful run.
// ---------------------------------------------------------------------------------------------

/** One path as it was on both sides after a successful two-way run. */
export interface TwoWayRecord {
  /** Path below the sync roots, starting with '/'. */
  rel: string;
  kind: EntryKind;
  /** Files: the source side's entry. */
  source?: Fingerprint;
  /** Files: the target side's entry. */
  target?: Fingerprint;
}

/**
 * The previous run's state of a two-way sync, read folder by folder (memory grows with the widest
 * folder), and the next state, staged while a run goes and made current only when it succeeds.
 */
export interface TwoWayStateStore {
  /** Whether a previous successful run left state. */
  hasState(): Promise<boolean>;
  /** Records of the children of folder `dir` ('/' for the root) after the previous run. */
  loadFolder(dir: string): Promise<TwoWayRecord[]>;
  /** Starts staging a new state (drops anything staged by an earlier, unfinished attempt). */
  beginStaging(): Promise<void>;
  stage(records: TwoWayRecord[]): Promise<void>;
  /** The staged state becomes current (only after a fully successful run). */
  commit(): Promise<void>;
  /** Drops the staged state; the previous one stays current. */
  discard(): Promise<void>;
}

export function parentRel(rel: string): string {
  const i = rel.lastIndexOf('/');
  return i <= 0 ? '/' : rel.slice(0, i);
}

function indexByFolder(records: Iterable<TwoWayRecord>): Map<string, TwoWayRecord[]> {
  const map = new Map<string, TwoWayRecord[]>();
  for (const r of records) {
    const dir = parentRel(r.rel);
    let list = map.get(dir);
    if (!list) map.set(dir, (list = []));
    list.push(r);
  }
  return map;
}

export class MemoryTwoWayStateStore implements TwoWayStateStore {
  private current: Map<string, TwoWayRecord[]> | null = null;
  private staged: TwoWayRecord[] = [];

  async hasState(): Promise<boolean> {
    return this.current !== null;
  }
  async loadFolder(dir: string): Promise<TwoWayRecord[]> {
    return this.current?.get(dir) ?? [];
  }
  async beginStaging(): Promise<void> {
    this.staged = [];
  }
  async stage(records: TwoWayRecord[]): Promise<void> {
    for (const r of records) this.staged.push(r);
  }
  async commit(): Promise<void> {
    this.current = indexByFolder(this.staged);
    this.staged = [];
  }
  async discard(): Promise<void> {
    this.staged = [];
  }
  /** Every record of the current state (tests). */
  records(): TwoWayRecord[] {
    return [...(this.current?.values() ?? [])].flat();
  }
}

/**
 * Two-way state in a JSON-lines file; the run stages into `<path>.next` and commit renames it over
 * `<path>`, so a crash leaves the previous state intact.
 */
export class FileTwoWayStateStore implements TwoWayStateStore {
  private readonly path: string;
  private index: Map<string, TwoWayRecord[]> | null | undefined;
  private appender: LineAppender | undefined;

  constructor(path: string) {
    this.path = path;
  }

  private async load(): Promise<Map<string, TwoWayRecord[]> | null> {
    if (this.index === undefined) {
      let exists = true;
      try {
        await stat(this.path);
      } catch {
        exists = false;
      }
      if (!exists) this.index = null;
      else {
        const records: TwoWayRecord[] = [];
        for (const line of await readLines(this.path)) {
          const r = parseLine<TwoWayRecord>(line);
          if (r) records.push(r);
        }
        this.index = indexByFolder(records);
      }
    }
    return this.index;
  }

  async hasState(): Promise<boolean> {
    return (await this.load()) !== null;
  }
  async loadFolder(dir: string): Promise<TwoWayRecord[]> {
    return (await this.load())?.get(dir) ?? [];
  }
  async beginStaging(): Promise<void> {
    await this.appender?.close();
    await mkdir(dirname(this.path), { recursive: true });
    await writeFile(this.path + '.next', '');
    this.appender = new LineAppender(this.path + '.next');
  }
  async stage(records: TwoWayRecord[]): Promise<void> {
    if (!this.appender) throw new Error('beginStaging first');
    if (records.length === 0) return;
    await this.appender.append(records.map((r) => JSON.stringify(r) + '\n').join(''));
  }
  async commit(): Promise<void> {
    if (!this.appender) throw new Error('beginStaging first');
    await this.appender.close();
    this.appender = undefined;
    await rename(this.path + '.next', this.path);
    this.index = undefined;
  }
  async discard(): Promise<void> {
    await this.appender?.close();
    this.appender = undefined;
    await rm(this.path + '.next', { force: true });
  }
}
