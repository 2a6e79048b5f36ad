import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { Pacer, ProviderError, toProviderError } from '@skyferry/providers';
import type { Entry, Provider } from '@skyferry/providers';
import { copyFile, type CopyContext, type Verification } from './copy-file.ts';
import { Lane, type PlanFeed } from './feed.ts';
import { precisionOf } from './plan/compare.ts';
import { ProgressTracker } from './progress.ts';
import {
  tempFolderKey,
  type CheckpointInfo,
  type CheckpointStore,
  type CheckpointTally,
  type IntentLookup,
  type TempFolder,
  type TwoWayRecord,
  type TwoWayStateStore,
} from './stores.ts';
import { emptyResultSummary } from './types.ts';
import type {
  ConflictPlan,
  FailedItem,
  Fingerprint,
  PlanItem,
  PlanPair,
  ResultSummary,
  SetAsideItem,
  Side,
  SkippedItem,
  TransferOutcome,
  TransferPlan,
  TransferProgress,
  TransferResult,
} from './types.ts';
import { Semaphore, baseName, fingerprintOf, joinRel, parentPath, poolSent, relOn, sameHashes } from './util.ts';

/** Lets the caller meter and cap the bytes a run moves (the user's traffic allowance). */
export interface TrafficHook {
  /** Before anything moves, with the bytes the run still has to move. Return false to stop (traffic_exceeded). */
  beforeRun?(bytes: number): boolean | Promise<boolean>;
  /**
   * Before each file, with its size. Return false to stop the run (traffic_exceeded); files in
   * flight finish. Files run side by side: several are allowed before the first one's `afterBytes`,
   * so a hook that allows a file holds its size until then.
   */
  beforeBytes(bytes: number, info: { path: string; serverSide: boolean }): boolean | Promise<boolean>;
  /** After each file, with the bytes it moved. */
  afterBytes?(bytes: number, info: { path: string; serverSide: boolean }): void | Promise<void>;
  /** A file allowed by `beforeBytes` failed: what the hook holds for it is free again (nothing is charged). */
  released?(info: { path: string }): void;
}

export interface ItemEvent {
  /**
   * `skipped`: not done, for a reason the result names (`TransferResult.skipped`); `conflict`: a
   * name the run cannot act on, left alone (`FailedItem.conflict`), with its reason in `error`.
   */
  type: 'done' | 'failed' | 'resumed' | 'skipped' | 'conflict';
  item: PlanItem;
  bytes: number;
  /** Copies: how the written file was checked; server-side copies and deletes: undefined. */
  verified?: Verification;
  serverSide?: boolean;
  chunked?: boolean;
  error?: { code: string; message: string };
}

export interface ExecuteOptions {
  source: Provider;
  target: Provider;
  signal?: AbortSignal;
  /** Files in parallel. Default 8. */
  transfers?: number;
  /**
   * Files smaller than `smallFileSize` run in a lane of their own, this many at once (small files
   * are bound by round trips, not bandwidth). Default 64 (a round trip of 20 ms left S3 and SFTP waiting at 32).
   */
  smallFileTransfers?: number;
  /** Default 1 MiB. */
  smallFileSize?: number;
  /** Finished items, for resuming after a crash. Default: none (nothing is resumed). */
  checkpoints?: CheckpointStore;
  /** two_way: where the state for the next run is staged and committed. Required for two_way plans. */
  twoWayState?: TwoWayStateStore;
  /** The caller confirmed a plan that deletes more than half of a side. */
  confirmDeletes?: boolean;
  /** The user chose to continue although a side reports too little free space. */
  ignoreSpaceCheck?: boolean;
  traffic?: TrafficHook;
  onProgress?: (p: TransferProgress) => void;
  /** How often progress is emitted while running. Default 500 ms. */
  progressIntervalMs?: number;
  onItem?: (e: ItemEvent) => void;
  /** Whole-file retries of `retry`-class errors. Defaults: 6 retries, 200 ms first backoff ceiling, 8 s max. */
  retries?: { retries?: number; minSleepMs?: number; maxSleepMs?: number };
  /** Files at least this large use the target's chunk writer when it has one. Default 64 MiB. */
  chunkThreshold?: number;
  /** Memory for chunk buffers of all files together. Default 128 MiB. */
  memoryBudget?: number;
  /**
   * Rounds of retrying, after all other files, the files that failed for a reason that may pass
   * (network, server, not found while writing, ...). An item can then report `failed` and later `done`. Default 1.
   */
  finalRetries?: number;
  /** Deleted items go to the side's trash where it has one. Default true. */
  useTrash?: boolean;
  /** 'strict' stats the target when its write returned no hash to compare. Default 'auto'. */
  verify?: 'auto' | 'strict';
  /** The caller's ids of the two clouds, copied into failed items (the spec's source.token_id). */
  tokenIds?: Partial<Record<Side, string>>;
  /** Where a source of unknown size is buffered for targets that need the size first. Default os.tmpdir(). */
  tempDir?: string;
}

const other = (s: Side): Side => (s === 'source' ? 'target' : 'source');

/** Failure reasons worth one more try at the end of a run (not permanent refusals). */
const RETRY_AGAIN = new Set(['network', 'server', 'rate_limited', 'corrupted', 'conflict', 'not_found', 'unknown']);

/** The key of an item in the checkpoint store: stable across re-planning, changed when the file read changes. */
export function checkpointKey(plan: TransferPlan, item: PlanItem): string {
  const pair = plan.pairs[item.pair] as PlanPair;
  const readFrom = item.action === 'delete' ? item.side : other(item.side);
  const fp = readFrom === 'source' ? item.source : item.target;
  const conflictWinner = item.conflict ? `|${item.conflict.resolution}:${item.conflict.winner}` : '';
  // copy and update are one kind: a file copied before a crash is planned as an update afterwards.
  const op = item.action === 'copy' || item.action === 'update' ? 'write' : item.action;
  return [op, item.side, pair.source, pair.target, item.rel, fp?.size ?? '', fp?.mtime ?? '', conflictWinner].join('|');
}

/** The key a file skipped now had when an earlier attempt planned to write it (`CheckpointStore.intend`). */
export function writeKey(plan: TransferPlan, item: PlanItem): string {
  return checkpointKey(plan, { ...item, action: 'copy' });
}

/**
 * Whether what an earlier attempt did to an item still stands as this plan sees it (the plan of a
 * resumed run is made again from both sides): a written file is there at the size it was written
 * (one removed or replaced since is written again); a folder made or an item deleted would not be
 * planned again at all, so one that is planned is done again. A conflict's outcome is kept.
 */
function stillStands(item: PlanItem): boolean {
  if (item.action === 'copy' || item.action === 'update') {
    const written = item.side === 'target' ? item.target : item.source;
    const read = item.side === 'target' ? item.source : item.target;
    return written !== undefined && read !== undefined && written.size === read.size;
  }
  return item.action === 'conflict';
}

function pathOn(plan: TransferPlan, item: PlanItem, side: Side, rel = relOn(item, side)): string {
  const pair = plan.pairs[item.pair] as PlanPair;
  return joinRel(side === 'source' ? pair.source : pair.target, rel);
}

/** Why the run leaves a name alone that the plan could not resolve. */
function unresolvedMessage(it: PlanItem): string {
  switch (it.reason) {
    case 'kind_mismatch':
      return `a file and a folder have the same name: ${it.rel}`;
    case 'case_clash':
      return `names differing only in case where a side takes them for one: ${relOn(it, other(it.side))}`;
    case 'invalid_name':
      return `a name that is not valid UTF-8 cannot be copied: ${relOn(it, other(it.side))}`;
    default:
      return `not resolved: ${it.rel}`;
  }
}

/** How deep a path is below its pair's root ('/' is 0). */
function depthOf(rel: string): number {
  return rel === '/' ? 0 : rel.split('/').length - 1;
}

/**
 * Whether a file is no longer as the plan listed it: another size, another hash of a type both
 * know, or a modification time later than the listed one (a service may list another time than it
 * states, S3's upload time for one, so only a later time counts).
 */
function changedSincePlanned(now: Entry, planned: Fingerprint, precisionMs: number): boolean {
  if (now.size !== planned.size) return true;
  const h = sameHashes(now.hashes, planned.hashes);
  if (h !== undefined) return !h;
  const t = now.modTime?.getTime();
  return t !== undefined && planned.mtime !== undefined && t - planned.mtime >= precisionMs;
}

function renamedRel(rel: string, name: string): string {
  const parent = parentPath(rel);
  return parent === '/' ? `/${name}` : `${parent}/${name}`;
}

class FatalStop extends Error {
  readonly outcome: TransferOutcome;
  readonly error: ProviderError | undefined;
  constructor(outcome: TransferOutcome, error?: ProviderError) {
    super(outcome);
    this.outcome = outcome;
    this.error = error;
  }
}

class Execution {
  readonly plan: TransferPlan;
  readonly opts: ExecuteOptions;
  readonly providers: Record<Side, Provider>;
  readonly controller = new AbortController();
  readonly progress: ProgressTracker;
  readonly copyCtx: CopyContext;
  readonly failed: FailedItem[] = [];
  readonly summary: ResultSummary = emptyResultSummary();
  readonly skipped: SkippedItem[] = [];
  /** Conflicts without a resolution (names the run cannot act on): reported as failed. */
  readonly unresolved: PlanItem[] = [];
  readonly startedAt = Date.now();
  readonly done = new Map<string, CheckpointInfo>();
  /** This run's tag of its temporary files (stores.ts, `TempFolder`). */
  readonly tempTag = randomBytes(4).toString('hex');
  /** Folders recorded as receiving this run's temporary files, by `tempFolderKey`. */
  private readonly tempFolders = new Map<string, { folder: TempFolder; noted: Promise<void>; failed: boolean }>();
  private stopped: FatalStop | undefined;
  /** Told once the run stops (a streamed run's loop may be waiting for the walk, which waits for room). */
  private onStop: (() => void) | undefined;
  /** Why the run stops, once it does: nothing more is started. */
  get stop(): FatalStop | undefined {
    return this.stopped;
  }
  set stop(s: FatalStop | undefined) {
    this.stopped = s;
    if (s) this.onStop?.();
  }
  successCount = 0;
  transferredBytes = 0;
  trafficStopped = false;
  private readonly onUserAbort = () => this.controller.abort();

  constructor(plan: TransferPlan, opts: ExecuteOptions) {
    this.plan = plan;
    this.opts = opts;
    this.providers = { source: opts.source, target: opts.target };
    this.progress = new ProgressTracker(opts.onProgress);
    const budget = opts.memoryBudget ?? 128 * 1024 * 1024;
    this.copyCtx = {
      signal: this.controller.signal,
      tempTag: this.tempTag,
      pacer: new Pacer({
        retries: opts.retries?.retries ?? 6,
        minSleepMs: opts.retries?.minSleepMs ?? 200,
        maxSleepMs: opts.retries?.maxSleepMs ?? 8000,
        maxRetryAfterMs: 60_000,
      }),
      chunkThreshold: opts.chunkThreshold ?? 64 * 1024 * 1024,
      memory: new Semaphore(budget),
      memoryBudget: budget,
      tempDir: opts.tempDir ?? tmpdir(),
      verify: opts.verify ?? 'auto',
      onBytes: (n) => {
        this.transferredBytes += n;
        this.progress.transferred += n;
      },
      returnedHashes: new Map(),
    };
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  private userCanceled(): boolean {
    return this.opts.signal?.aborted === true;
  }

  private fail(item: PlanItem, err: unknown): void {
    const e = toProviderError(err);
    const failed = this.failedItemOf(item, e);
    this.failed.push(failed);
    this.progress.failed++;
    this.opts.onItem?.({ type: 'failed', item, bytes: 0, error: { code: failed.reason, message: e.message } });
  }

  /** How the result lists an item not done: its file, the side it was read from, why. */
  private failedItemOf(item: PlanItem, e: ProviderError): FailedItem {
    const readFrom: Side = item.action === 'delete' || item.action === 'mkdir' ? item.side : other(item.side);
    const path = pathOn(this.plan, item, readFrom);
    const failed: FailedItem = {
      sourceFile: { name: baseName(path), parent: parentPath(path) },
      sourceSide: readFrom,
      reason: e.serviceCode === 'source_changed' ? 'source_changed' : e.code,
      message: e.message,
      item,
      pair: this.plan.pairs[item.pair] as PlanPair,
    };
    const token = this.opts.tokenIds?.[readFrom];
    if (token !== undefined) failed.sourceTokenId = token;
    return failed;
  }

  /** Classifies an error of an item: fatal ones stop the whole run. */
  private handleError(item: PlanItem, err: unknown): void {
    const e = toProviderError(err);
    if (this.userCanceled() || (e.code === 'canceled' && this.signal.aborted)) {
      this.stop ??= new FatalStop('canceled');
      return;
    }
    if (e.retry === 'fatal') {
      const outcome: TransferOutcome =
        e.code === 'quota' ? 'insufficient_space' : e.code === 'canceled' ? 'canceled' : 'failed';
      this.stop ??= new FatalStop(outcome, e);
      if (outcome === 'insufficient_space') this.stopSide = item.side;
      this.fail(item, e);
      this.controller.abort();
      return;
    }
    this.fail(item, e);
  }

  stopSide: Side | undefined;

  /** The run stages the next state (two-way) or record (a one-way sync keeping one) and commits it at the end. */
  get managesState(): boolean {
    return (this.plan.options.mode === 'two_way' || this.plan.keepsRecord === true) && this.plan.kind === 'full';
  }

  private async stageRecords(records: TwoWayRecord[]): Promise<void> {
    if (records.length > 0 && this.managesState) await this.opts.twoWayState?.stage(records);
  }

  private async markDone(item: PlanItem, info: CheckpointInfo): Promise<void> {
    await this.stageRecords(info.records ?? []);
    await this.opts.checkpoints?.markDone(checkpointKey(this.plan, item), info);
  }

  private record(
    item: PlanItem,
    rel: string,
    source: Fingerprint | undefined,
    target: Fingerprint | undefined,
  ): TwoWayRecord {
    const r: TwoWayRecord = { rel, kind: item.kind };
    if (source) r.source = source;
    if (target) r.target = target;
    return r;
  }

  // ---- items -----------------------------------------------------------------------------------

  private async copyOne(
    item: PlanItem,
    to: Side,
    fromRel: string,
    toRel: string,
    fp: Fingerprint,
    sent?: () => void,
  ): Promise<{ entry: Entry; bytes: number; verified: Verification; serverSide: boolean; chunked: boolean }> {
    const from = other(to);
    const fromPath = pathOn(this.plan, item, from, fromRel);
    const toPath = pathOn(this.plan, item, to, toRel);
    const temps = await this.noteTempFolder(to, parentPath(toPath));
    return this.copyCtx.pacer.call(
      async () => {
        try {
          return await copyFile(this.providers[from], this.providers[to], fromPath, toPath, fp, this.copyCtx, sent);
        } catch (err) {
          // A write cut off may have left its temporary file: looked for when the run ends.
          if (temps) temps.failed = true;
          throw err;
        }
      },
      { signal: this.signal },
    );
  }

  /**
   * Before the first write into a folder: notes it, in the checkpoints too (durably) where they
   * keep such records, so that what a cut-off write leaves there is removed when the run ends, or
   * by the run resuming after a crash.
   */
  private async noteTempFolder(side: Side, dir: string): Promise<{ failed: boolean } | undefined> {
    if (!this.providers[side].removeTemps) return undefined;
    const folder: TempFolder = { side, dir, tag: this.tempTag };
    const key = tempFolderKey(folder);
    let t = this.tempFolders.get(key);
    if (!t) {
      const store = this.opts.checkpoints;
      t = { folder, noted: store?.addTempFolder ? store.addTempFolder(folder) : Promise.resolve(), failed: false };
      this.tempFolders.set(key, t);
    }
    await t.noted;
    return t;
  }

  /**
   * Removes the temporary files runs left in recorded folders (`folders`; default: this run's
   * folders where a write failed) and forgets the folders where that worked, and this run's folders
   * where every write went through. Never fails: what cannot be removed now stays recorded.
   */
  private async removeLeftTemps(earlier?: TempFolder[]): Promise<void> {
    const store = this.opts.checkpoints;
    const clean: TempFolder[] = [];
    const sweep: TempFolder[] = earlier ?? [];
    if (!earlier) {
      for (const t of this.tempFolders.values()) {
        await t.noted.catch(() => undefined);
        (t.failed ? sweep : clean).push(t.folder);
      }
    }
    await Promise.all(
      sweep.map(async (f) => {
        const p = this.providers[f.side];
        try {
          await p.removeTemps?.(f.dir, f.tag);
          clean.push(f);
        } catch {
          // The side is out of reach: the next run tries again.
        }
      }),
    );
    if (clean.length > 0) await store?.removeTempFolders?.(clean).catch(() => undefined);
  }

  private async traffic(item: PlanItem, bytes: number): Promise<boolean> {
    const hook = this.opts.traffic;
    if (!hook) return true;
    const to = item.side;
    const serverSide =
      this.providers.source.accountKey === this.providers.target.accountKey && this.providers[to].copy !== undefined;
    const ok = await hook.beforeBytes(bytes, { path: pathOn(this.plan, item, to), serverSide });
    if (!ok) {
      this.trafficStopped = true;
      this.stop ??= new FatalStop('traffic_exceeded');
    }
    return ok;
  }

  private async afterTraffic(item: PlanItem, bytes: number, serverSide: boolean): Promise<void> {
    await this.opts.traffic?.afterBytes?.(bytes, { path: pathOn(this.plan, item, item.side), serverSide });
  }

  /** A file the allowance let through failed: the size it held goes back to the allowance. */
  private releaseTraffic(item: PlanItem): void {
    this.opts.traffic?.released?.({ path: pathOn(this.plan, item, item.side) });
  }

  async runCopy(item: PlanItem, sent?: () => void): Promise<boolean> {
    const to = item.side;
    const fp = (to === 'target' ? item.source : item.target) as Fingerprint;
    if (!(await this.traffic(item, item.size))) return false;
    const r = await this.copyOne(item, to, relOn(item, other(to)), relOn(item, to), fp, sent);
    await this.afterTraffic(item, r.bytes, r.serverSide);
    const written = fingerprintOf(r.entry);
    const records = this.managesState
      ? [this.record(item, item.rel, to === 'target' ? fp : written, to === 'target' ? written : fp)]
      : undefined;
    await this.markDone(item, {
      action: item.action,
      bytes: r.bytes,
      read: { path: pathOn(this.plan, item, to === 'target' ? 'source' : 'target'), size: fp.size },
      ...(records ? { records } : {}),
    });
    if (item.action === 'copy') this.summary.added++;
    else if (this.copiesPlannedAsUpdates > 0) {
      // A copy of the first attempt's plan that it wrote without recording it (settleUnrecorded).
      this.copiesPlannedAsUpdates--;
      this.summary.added++;
    } else this.summary.updated++;
    this.opts.onItem?.({
      type: 'done',
      item,
      bytes: r.bytes,
      verified: r.verified,
      serverSide: r.serverSide,
      chunked: r.chunked,
    });
    return true;
  }

  async runConflict(item: PlanItem): Promise<boolean> {
    const c = item.conflict as ConflictPlan;
    const winner = c.winner;
    const loser = other(winner);
    const winFp = (winner === 'source' ? item.source : item.target) as Fingerprint;
    const loseFp = (loser === 'source' ? item.source : item.target) as Fingerprint;
    if (!(await this.traffic(item, item.size))) return false;
    let bytes: number;
    let verified: Verification = 'hash';
    const records: TwoWayRecord[] = [];
    if (c.resolution === 'keep_both' && c.loserName) {
      // The loser's new name, in each side's spelling of the folder (the record keeps the source's).
      const loserRel = renamedRel(item.rel, c.loserName);
      const loserOn = (side: Side) => renamedRel(relOn(item, side), c.loserName as string);
      const loserPath = pathOn(this.plan, item, loser);
      // 1. the loser steps aside on its own side, 2. the winner takes the name there, 3. the loser is copied across.
      await this.copyCtx.pacer.call(
        async () => {
          try {
            await this.providers[loser].rename(loserPath, c.loserName as string);
          } catch (err) {
            // Renamed by an earlier attempt: carry on.
            if (!(
              ProviderError.is(err, 'not_found') &&
              (await this.exists(loser, pathOn(this.plan, item, loser, loserOn(loser))))
            ))
              throw err;
          }
        },
        { signal: this.signal },
      );
      const w = await this.copyOne(item, loser, relOn(item, winner), relOn(item, loser), winFp);
      const l = await this.copyOne(item, winner, loserOn(loser), loserOn(winner), loseFp);
      bytes = w.bytes + l.bytes;
      if (w.verified === 'size' || l.verified === 'size') verified = 'size';
      const wf = fingerprintOf(w.entry);
      const lf = fingerprintOf(l.entry);
      records.push(this.record(item, item.rel, winner === 'source' ? winFp : wf, winner === 'source' ? wf : winFp));
      records.push(this.record(item, loserRel, loser === 'source' ? loseFp : lf, loser === 'source' ? lf : loseFp));
    } else {
      const w = await this.copyOne(item, loser, relOn(item, winner), relOn(item, loser), winFp);
      bytes = w.bytes;
      verified = w.verified;
      const wf = fingerprintOf(w.entry);
      records.push(this.record(item, item.rel, winner === 'source' ? winFp : wf, winner === 'source' ? wf : winFp));
    }
    await this.afterTraffic(item, bytes, false);
    await this.markDone(item, { action: 'conflict', bytes, records });
    this.summary.conflicts++;
    this.opts.onItem?.({ type: 'done', item, bytes, verified });
    return true;
  }

  private async exists(side: Side, path: string): Promise<boolean> {
    try {
      await this.providers[side].stat(path, { signal: this.signal });
      return true;
    } catch {
      return false;
    }
  }

  /** An item the run leaves alone for a reason the result names. */
  private skip(item: PlanItem, reason: SkippedItem['reason'], message: string): void {
    this.skipped.push({ item, reason, message });
    if (item.kind === 'file') this.summary.skipped++;
    this.opts.onItem?.({ type: 'skipped', item, bytes: 0, error: { code: reason, message } });
  }

  /**
   * Deletes a file as the plan listed it (one changed or replaced since is left alone), or removes
   * a folder that is empty now (one that holds anything, saved there while the run went on or never
   * listed, stays). Folders are removed whole only by this emptiness rule.
   */
  async runDelete(item: PlanItem): Promise<boolean> {
    const p = this.providers[item.side];
    const path = pathOn(this.plan, item, item.side);
    const removed = await this.copyCtx.pacer.call(
      async () => {
        try {
          if (item.kind === 'dir') {
            const page = await p.list(path, { signal: this.signal, pageSize: 1 });
            if (page.entries.length > 0 || page.nextPageToken !== undefined) return 'not_empty' as const;
            await p.rmdir(path);
            return 'removed' as const;
          }
          const now = await p.stat(path, { signal: this.signal });
          const planned = item.side === 'source' ? item.source : item.target;
          if (now.kind !== 'file' || (planned && changedSincePlanned(now, planned, precisionOf(p.features))))
            return 'changed' as const;
          if (this.opts.useTrash !== false && p.features.trash && p.trash) await p.trash(path);
          else await p.remove(path);
        } catch (err) {
          if (!ProviderError.is(err, 'not_found')) throw err; // already gone: done
        }
        return 'removed' as const;
      },
      { signal: this.signal },
    );
    if (removed === 'not_empty') {
      this.skip(item, 'not_empty', `kept: something is in it that the plan did not judge: ${path}`);
      return true;
    }
    if (removed === 'changed') {
      this.skip(item, 'changed_since_planned', `kept: it changed after the plan was made: ${path}`);
      return true;
    }
    await this.markDone(item, { action: 'delete', bytes: 0 });
    this.summary.deleted += item.kind === 'dir' ? (item.files ?? 0) : 1;
    this.opts.onItem?.({ type: 'done', item, bytes: 0 });
    return true;
  }

  async runMkdir(item: PlanItem): Promise<boolean> {
    const path = pathOn(this.plan, item, item.side);
    await this.copyCtx.pacer.call(() => this.providers[item.side].mkdir(path), { signal: this.signal });
    await this.markDone(item, {
      action: 'mkdir',
      bytes: 0,
      records: [this.record(item, item.rel, undefined, undefined)],
    });
    return true;
  }

  /**
   * Runs items `n` at a time until done or stopped. An item that calls `sent` (all its bytes are
   * on their way) frees its place for the next while it waits for the service's answer and its
   * verification, so the link does not idle through every file's last round trips; at most `2n`
   * items are under way.
   */
  async pool(
    items: PlanItem[] | AsyncIterable<PlanItem>,
    n: number,
    fn: (item: PlanItem, sent: () => void) => Promise<boolean>,
    counted: boolean,
  ): Promise<void> {
    await poolSent(
      items,
      n,
      async (item, sent) => {
        try {
          if (!(await fn(item, sent))) return; // not started (traffic allowance reached)
          // A streamed run knows what is under way (`inFlight`): it keeps nothing per finished item.
          if (!this.streamed) this.finishedItems.add(item);
          if (item.action !== 'delete' && item.action !== 'mkdir') this.finishedBytes += item.size;
          if (counted) this.successCount++;
          if (counted) this.progress.finished++;
        } catch (err) {
          // A file the allowance let through gives its hold back (nothing was charged for it).
          if (item.kind === 'file' && item.action !== 'delete') this.releaseTraffic(item);
          // Failures are not finished: the count only grows, and a file retried later counts once.
          this.handleError(item, err);
        }
      },
      () => {
        // A cancel starts nothing more, also where the items in flight do not hear it (deletes).
        if (this.userCanceled()) this.stop ??= new FatalStop('canceled');
        return this.stop !== undefined;
      },
    );
  }

  // ---- the run -----------------------------------------------------------------------------------

  private async lookupCheckpoints(items: PlanItem[]): Promise<void> {
    const store = this.opts.checkpoints;
    if (!store) return;
    this.carried = await store.tally?.();
    if (items.length === 0) return;
    const keys = items.map((it) => checkpointKey(this.plan, it));
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000);
      if (store.getMany) {
        for (const [k, v] of await store.getMany(batch)) this.done.set(k, v);
      } else {
        for (const k of batch) {
          const v = await store.get(k);
          if (v) this.done.set(k, v);
        }
      }
    }
  }

  private async spaceCheck(need: Record<Side, number>): Promise<FatalStop | undefined> {
    if (this.opts.ignoreSpaceCheck) return undefined;
    for (const side of ['target', 'source'] as Side[]) {
      const p = this.providers[side];
      if (need[side] <= 0 || !p.about) continue;
      let free: number | undefined;
      try {
        const a = await p.about();
        free = a.free ?? (a.total !== undefined && a.used !== undefined ? a.total - a.used : undefined);
      } catch {
        continue; // the service cannot tell: find out while writing
      }
      if (free !== undefined && need[side] > free) {
        this.stopSide = side;
        this.neededBytes = need[side];
        return new FatalStop('insufficient_space');
      }
    }
    return undefined;
  }

  /**
   * The checks before anything is written, on the transfers still to do: the space each side
   * needs, then the transfer allowance (`TrafficHook.beforeRun`). The outcome that stops the run,
   * or undefined to go on.
   */
  private async beforeWriting(todo: Iterable<PlanItem>): Promise<TransferOutcome | undefined> {
    const need: Record<Side, number> = { source: 0, target: 0 };
    let left = 0;
    for (const it of todo) {
      left += it.size;
      if (it.action === 'conflict' && it.conflict?.resolution === 'keep_both') {
        need.source += it.target?.size ?? 0;
        need.target += it.source?.size ?? 0;
      } else {
        const old = it.side === 'target' ? it.target?.size : it.source?.size;
        need[it.side] += Math.max(0, it.size - (it.action === 'update' || it.action === 'conflict' ? (old ?? 0) : 0));
      }
    }
    const spaceStop = await this.spaceCheck(need);
    if (spaceStop) {
      this.stop = spaceStop;
      return spaceStop.outcome;
    }
    const traffic = this.opts.traffic;
    if (traffic?.beforeRun && left > 0 && !(await traffic.beforeRun(left))) {
      this.stop = new FatalStop('traffic_exceeded');
      this.neededBytes = left;
      return 'traffic_exceeded';
    }
    return undefined;
  }

  neededBytes: number | undefined;
  /** What the checkpoints held when the run began: the work of earlier, interrupted attempts. */
  private carried: CheckpointTally | undefined;
  /** Bytes moved by earlier attempts (resumed items and those carried over). */
  resumedBytes = 0;

  /**
   * Counts the work of earlier attempts that this plan no longer holds as work (a file they copied
   * is a skip now, a file they deleted is gone) as done, by the action they recorded, so that the
   * figures are those of the whole run: `matched` is what this plan resumed or does again. The
   * skips that work became are not skips of the run (a conflict kept both ways became two).
   */
  private carryOver(matched: { by: Partial<Record<PlanItem['action'], number>>; bytes: number }): void {
    const t = this.carried;
    this.progress.earlier = { files: 0, bytes: 0 };
    if (!t) return;
    const extra = (a: PlanItem['action']) => Math.max(0, (t.byAction[a] ?? 0) - (matched.by[a] ?? 0));
    const [copies, updates, deletes, conflicts] = [extra('copy'), extra('update'), extra('delete'), extra('conflict')];
    const n = copies + updates + deletes + conflicts;
    if (n === 0) return;
    const bytes = Math.max(0, t.bytes - matched.bytes);
    this.summary.added += copies;
    this.summary.updated += updates;
    this.summary.deleted += deletes;
    this.summary.conflicts += conflicts;
    this.summary.resumed += n;
    const perConflict = this.plan.options.conflictResolution === 'keep_both' ? 2 : 1;
    this.summary.skipped = Math.max(0, this.summary.skipped - copies - updates - conflicts * perConflict);
    this.successCount += n;
    this.progress.total += n;
    this.progress.finished += n;
    this.progress.length += bytes;
    this.progress.transferred += bytes;
    this.finishedBytes += bytes;
    this.resumedBytes += bytes;
  }

  /**
   * Files an earlier attempt wrote but was cut off before recording (killed between a write and its
   * record): the plan made again sees them as skips (or, overwriting, as updates). The first
   * attempt's plan figures (`CheckpointStore.savePlanned`) tell how many: skips beyond that plan's
   * count as added (then updated) as far as its copies (then updates) are not accounted for, and
   * that many of this plan's extra updates count as added when done. One-way runs only: a two-way
   * run settles what it finds through its state.
   */
  private async settleUnrecorded(resumedCopiesAsUpdates: number): Promise<void> {
    const store = this.opts.checkpoints;
    const plan = this.plan;
    if (!store?.planned || !store.savePlanned || plan.kind !== 'full' || plan.options.mode === 'two_way') return;
    const of = JSON.stringify(plan.options);
    const now = { copy: plan.summary.copy.count, update: plan.summary.update.count, skip: plan.summary.skip.count, of };
    const first = await store.planned();
    if (first && first.of !== undefined && first.of !== of) return; // planned with other options
    if (!first) {
      // The first attempt (nothing recorded before it) keeps its figures for those that resume it.
      if ((this.carried?.count ?? 0) === 0) await store.savePlanned(now);
      return;
    }
    const t = this.carried;
    // Copies of the first plan written before (no longer planned as copies), less those recorded.
    let unrecorded = Math.max(0, first.copy - now.copy - (t?.byAction.copy ?? 0));
    // Overwriting, they are planned again as updates beyond the first plan's.
    const asUpdates = Math.min(unrecorded, Math.max(0, now.update - first.update - resumedCopiesAsUpdates));
    this.copiesPlannedAsUpdates = asUpdates;
    unrecorded -= asUpdates;
    const extraSkips = Math.max(0, this.summary.skipped - first.skip);
    const added = Math.min(extraSkips, unrecorded);
    const updatesLeft = Math.max(0, first.update - now.update - (t?.byAction.update ?? 0));
    const updated = Math.min(extraSkips - added, updatesLeft);
    const n = added + updated;
    if (n === 0) return;
    this.summary.added += added;
    this.summary.updated += updated;
    this.summary.skipped -= n;
    this.summary.resumed += n;
    this.successCount += n;
    this.progress.total += n;
    this.progress.finished += n;
  }

  /** Updates of this plan that were copies of the first attempt's, written but not recorded. */
  private copiesPlannedAsUpdates = 0;
  /** Skips of a streamed plan that an earlier attempt wrote without recording (`resumedUnrecorded`). */
  private unrecordedSkips = 0;
  /** The batch each file of a streamed run was announced in (`CheckpointStore.intend`), until it settles. */
  private readonly intentOf = new Map<PlanItem, { id: string; left: number }>();

  /** The run executes a plan while it is made (`executeStreamed`). */
  streamed = false;
  /** Streamed: transfer items handed to a lane and not settled (what a stop leaves not done). */
  private readonly inFlight = new Set<PlanItem>();

  /**
   * Counts an item finished by an earlier attempt (its checkpoint stands) as done, and answers
   * true; else false (`redone` counted where it has a checkpoint that no longer stands).
   */
  private resumedOne(
    it: PlanItem,
    info: CheckpointInfo | undefined,
    matched: { by: Partial<Record<PlanItem['action'], number>>; bytes: number },
  ): boolean {
    if (info) {
      matched.by[info.action] = (matched.by[info.action] ?? 0) + 1;
      matched.bytes += info.bytes;
      // Counted here, not among the earlier attempts' work still to carry over.
      const e = this.progress.earlier;
      if (info.action !== 'mkdir') e.files = Math.max(0, e.files - 1);
      e.bytes = Math.max(0, e.bytes - info.bytes);
    }
    if (!info || !stillStands(it)) {
      if (info && it.action !== 'mkdir') this.summary.redone++;
      return false;
    }
    if (it.action === 'mkdir') return true;
    this.summary.resumed++;
    this.successCount++;
    this.progress.finished++;
    this.progress.transferred += it.action === 'delete' ? 0 : it.size;
    this.resumedBytes += info.bytes;
    if (it.action !== 'delete') this.finishedBytes += it.size;
    // A file an earlier attempt added is planned again as an update ("transfer anyway"): it counts
    // as what that attempt did.
    const did = it.action === 'update' && info.action === 'copy' ? 'copy' : it.action;
    if (did === 'copy') this.summary.added++;
    else if (did === 'update') this.summary.updated++;
    else if (did === 'conflict') this.summary.conflicts++;
    else if (it.action === 'delete') this.summary.deleted += it.kind === 'dir' ? (it.files ?? 0) : 1;
    this.opts.onItem?.({ type: 'resumed', item: it, bytes: info.bytes });
    return true;
  }

  /**
   * Runs a plan while it is made (`planStreamed`): items come from `feed` folder by folder, are
   * looked up in the checkpoints a batch at a time and go to the lanes (small and large files) as
   * they come; each settles in the feed once done, which lets the walk list more. What the run
   * holds follows the feed's window, not the tree. Migrations and one-way syncs without a record
   * only: nothing is deleted and no state is staged.
   */
  async runStreamed(feed: PlanFeed, intended?: IntentLookup): Promise<TransferResult> {
    const plan = this.plan;
    const opts = this.opts;
    if (this.managesState || plan.options.mode === 'mirror' || plan.options.mode === 'two_way')
      throw new Error(`a ${plan.options.mode} plan is not executed as a stream`);
    this.streamed = true;
    this.onStop = () => feed.interrupt();
    if (opts.signal?.aborted) this.controller.abort();
    opts.signal?.addEventListener('abort', this.onUserAbort, { once: true });
    this.progress.counting = true;
    this.progress.start(opts.progressIntervalMs ?? 500);
    const n = Math.max(1, opts.transfers ?? 8);
    const smallSize = opts.smallFileSize ?? 1024 * 1024;
    const large = new Lane();
    const small = new Lane();
    const matched = { by: {} as Partial<Record<PlanItem['action'], number>>, bytes: 0 };
    // Folders that receive a file (written with their parents): no mkdir of their own.
    const filled = new Set<string>();
    let left: PlanItem[] = [];
    const runOne = async (it: PlanItem, sent: () => void): Promise<boolean> => {
      // Not started (traffic allowance reached) or cut off by a stop: it stays under way, and a
      // stopped run reports it not done unless it is listed failed.
      let done = false;
      try {
        done = await (it.action === 'conflict' ? this.runConflict(it) : this.runCopy(it, sent));
        return done;
      } finally {
        if (done) this.inFlight.delete(it);
        this.intentSettled(it);
        feed.settle();
      }
    };
    try {
      // What cut-off writes of an earlier attempt (or run) left is removed before anything is written.
      const earlier = await opts.checkpoints?.tempFolders?.().catch(() => []);
      if (earlier && earlier.length > 0) await this.removeLeftTemps(earlier);
      this.carried = await opts.checkpoints?.tally?.();
      // What earlier attempts recorded shows as done from the start (counted at the end, `carryOver`).
      if (this.carried) {
        const by = this.carried.byAction;
        const files = (by.copy ?? 0) + (by.update ?? 0) + (by.delete ?? 0) + (by.conflict ?? 0);
        this.progress.earlier = { files, bytes: this.carried.bytes };
      }
      await this.beforeWritingStreamed(feed);
      this.progress.phase = 'transferring';
      this.progress.emit();
      const lanes = Promise.all([
        this.pool(large, n, runOne, true),
        this.pool(small, Math.max(n, opts.smallFileTransfers ?? 64), runOne, true),
      ]);
      // A lane that throws would leave the feed waiting: its failure stops the run.
      lanes.catch(() => (this.stop ??= new FatalStop('failed')));
      for (;;) {
        if (this.userCanceled()) this.stop ??= new FatalStop('canceled');
        if (this.stop) break;
        const batch = await feed.next(1000);
        if (!batch) break;
        const done = await this.checkpointsOf(batch);
        const mkdirs: PlanItem[] = [];
        const writes: PlanItem[] = [];
        let settled = 0;
        for (const it of batch) {
          if (it.action === 'skip') {
            // Handed over only when an earlier attempt announced it (streamTransfer); one it
            // recorded is counted with the rest of its records (`carryOver`).
            const key = writeKey(plan, it);
            const meant = intended?.(key);
            if ((meant === 'copy' || meant === 'update') && !done?.has(key)) this.resumedUnrecorded(it, meant);
            settled++;
            continue;
          }
          const info = done?.get(checkpointKey(plan, it));
          if (it.action === 'conflict' && !it.conflict) {
            this.unresolved.push(it);
            settled++;
          } else if (it.action === 'mkdir') {
            this.resumedOne(it, info, matched);
            if (filled.has(`${it.pair}|${it.side}|${relOn(it, it.side)}`)) settled++;
            else mkdirs.push(it);
          } else if (it.action === 'copy' || it.action === 'update' || it.action === 'conflict') {
            this.progress.total++;
            this.progress.length += it.size;
            for (const side of it.action === 'conflict' ? (['source', 'target'] as Side[]) : [it.side]) {
              for (let r = parentPath(relOn(it, side)); ; r = parentPath(r)) {
                const k = `${it.pair}|${side}|${r}`;
                if (filled.has(k)) break;
                filled.add(k);
                if (r === '/') break;
              }
            }
            if (this.resumedOne(it, info, matched)) {
              settled++;
              continue;
            }
            // Written by an earlier attempt that was cut off before recording it, and planned
            // again as an update ("transfer anyway"): it counts as that attempt's copy.
            if (it.action === 'update' && !info && intended?.(checkpointKey(plan, it)) === 'copy')
              this.copiesPlannedAsUpdates++;
            this.inFlight.add(it);
            writes.push(it);
          } else settled++; // deletes are not streamed (streamable plans have none)
        }
        if (settled > 0) feed.settle(settled);
        await this.announce(writes);
        for (const it of writes) (it.size >= smallSize ? large : small).push(it);
        if (mkdirs.length > 0) {
          // Folders that receive no file (the walk names them once their contents are judged).
          await this.pool(mkdirs, n, (it) => this.runMkdir(it), false);
          feed.settle(mkdirs.length);
        }
      }
      if (this.stop) left = feed.abandon();
      else if (feed.error) {
        // Planning stopped (a sign-in expired, the run was canceled): so does the run.
        const e = toProviderError(feed.error.err);
        const canceled = e.code === 'canceled' || this.userCanceled();
        this.stop ??= new FatalStop(canceled ? 'canceled' : 'failed', canceled ? undefined : e);
        this.controller.abort();
      }
      // A stopped run starts nothing more: what is still in a lane is under way (`inFlight`) and reported not done.
      for (const lane of [large, small]) {
        if (this.stop) lane.drain();
        else lane.close();
      }
      // The walk is done: the totals are final while the lanes finish.
      this.progress.counting = false;
      await lanes.catch(() => undefined);
      // Files that failed for what may have been a passing reason get another go once the rest is done.
      for (let round = 0; round < (opts.finalRetries ?? 1) && !this.stop; round++) {
        const again = this.failed.filter(
          (f) => !f.notDone && !f.conflict && f.item.action !== 'mkdir' && RETRY_AGAIN.has(f.reason),
        );
        if (again.length === 0) break;
        const items = new Set(again.map((f) => f.item));
        this.failed.splice(0, this.failed.length, ...this.failed.filter((f) => !items.has(f.item)));
        this.progress.failed -= again.length;
        await this.pool(
          [...items],
          n,
          async (it, sent) => {
            const done = await (it.action === 'conflict' ? this.runConflict(it) : this.runCopy(it, sent));
            if (done) this.inFlight.delete(it);
            return done;
          },
          true,
        );
      }
      this.summary.skipped = plan.summary.skip.count - this.unrecordedSkips;
      this.carryOver(matched);
      // Once the walk is done the plan's figures are whole: the first attempt to get here keeps
      // them, and one that resumes a run whose records were already cleared (killed after its end,
      // before its outcome was stored) counts by them what the attempt before it wrote.
      if (!this.stop) await this.settleUnrecorded(0);
      if (this.stop) {
        const failedItems = new Set(this.failed.map((f) => f.item));
        const remaining = [...this.inFlight].filter((it) => !failedItems.has(it));
        for (const it of left) {
          if (it.action !== 'copy' && it.action !== 'update' && it.action !== 'conflict') continue;
          this.progress.total++;
          this.progress.length += it.size;
          remaining.push(it);
        }
        return await this.finish(this.stop.outcome, true, remaining);
      }
      const outcome: TransferOutcome =
        this.failed.length === 0 && plan.errors.length === 0 && this.unresolved.length === 0
          ? 'success'
          : this.successCount === 0 && this.progress.total > 0
            ? 'failed'
            : 'partial';
      return await this.finish(outcome, false);
    } finally {
      this.progress.counting = false;
      this.progress.stop();
      opts.signal?.removeEventListener('abort', this.onUserAbort);
    }
  }

  /**
   * The checks before writing (`beforeWriting`) for a streamed run: they wait until the walk is
   * done or a whole window of items is planned, and judge what that holds. A plan that fits in
   * the window is judged whole, as `run` does; a larger one by its first window, the rest as it
   * is written (the allowance per file, the space by the service's answer). A refusal sets `stop`.
   */
  private async beforeWritingStreamed(feed: PlanFeed): Promise<void> {
    const opts = this.opts;
    const space = !opts.ignoreSpaceCheck && this.providers.target.about !== undefined;
    if (!space && !opts.traffic?.beforeRun) return;
    await feed.filled();
    const queued = [...feed.queued()];
    const done = await this.checkpointsOf(queued);
    const todo = queued.filter(
      (it) =>
        (it.action === 'copy' || it.action === 'update' || (it.action === 'conflict' && it.conflict)) &&
        !done?.has(checkpointKey(this.plan, it)),
    );
    await this.beforeWriting(todo);
  }

  /**
   * Records the files about to be written as one batch (`CheckpointStore.intend`), before any of
   * them is started: a kill after a write and before its record leaves the batch, by which the
   * attempt that resumes counts the file as written rather than skipped.
   */
  private async announce(items: PlanItem[]): Promise<void> {
    const store = this.opts.checkpoints;
    if (!store?.intend || !store.intentsDone || items.length === 0) return;
    const id = await store.intend(items.map((it) => [checkpointKey(this.plan, it), it.action]));
    const batch = { id, left: items.length };
    for (const it of items) this.intentOf.set(it, batch);
  }

  /** A file of an announced batch has run (recorded done, or failed): the batch goes once all have. */
  private intentSettled(it: PlanItem): void {
    const batch = this.intentOf.get(it);
    if (!batch) return;
    this.intentOf.delete(it);
    if (--batch.left > 0) return;
    // Forgetting it late only makes a resumed run look at its files' records.
    this.opts.checkpoints?.intentsDone?.(batch.id).catch(() => undefined);
  }

  /**
   * A file of a streamed plan that is a skip now, and that an earlier attempt announced and wrote
   * without recording (killed between the two): done by that attempt, as it meant to.
   */
  private resumedUnrecorded(it: PlanItem, action: 'copy' | 'update'): void {
    this.unrecordedSkips++;
    this.summary.resumed++;
    if (action === 'copy') this.summary.added++;
    else this.summary.updated++;
    this.successCount++;
    this.progress.total++;
    this.progress.finished++;
    this.progress.length += it.size;
    this.progress.transferred += it.size;
    this.finishedBytes += it.size;
    this.resumedBytes += it.size;
    this.opts.onItem?.({ type: 'resumed', item: { ...it, action }, bytes: it.size });
  }

  /** The checkpoints of a batch of items (earlier attempts' records), or undefined without a store. */
  private async checkpointsOf(items: PlanItem[]): Promise<Map<string, CheckpointInfo> | undefined> {
    const store = this.opts.checkpoints;
    // Nothing recorded by an earlier attempt: no lookups.
    if (!store || (this.carried && this.carried.count === 0)) return undefined;
    return this.lookupEach(items);
  }

  private async lookupEach(items: PlanItem[]): Promise<Map<string, CheckpointInfo>> {
    const store = this.opts.checkpoints as CheckpointStore;
    // A skip handed over by a streamed plan is looked up as the write an earlier attempt recorded.
    const keys = items.map((it) => (it.action === 'skip' ? writeKey(this.plan, it) : checkpointKey(this.plan, it)));
    if (store.getMany) return store.getMany(keys);
    const out = new Map<string, CheckpointInfo>();
    for (const k of keys) {
      const v = await store.get(k);
      if (v) out.set(k, v);
    }
    return out;
  }

  async run(): Promise<TransferResult> {
    const plan = this.plan;
    const opts = this.opts;
    if (opts.signal?.aborted) this.controller.abort();
    opts.signal?.addEventListener('abort', this.onUserAbort, { once: true });
    // A retry plan covers only part of the tree: it never replaces the two-way state.
    const isTwoWay = this.managesState;
    if (isTwoWay && !opts.twoWayState)
      throw new Error('two_way plans (and those keeping a record) need a twoWayState store');

    const mkdirs: PlanItem[] = [];
    const transfers: PlanItem[] = [];
    const deletes: PlanItem[] = [];
    const skips: PlanItem[] = [];
    for (const it of plan.items) {
      if (it.action === 'mkdir') mkdirs.push(it);
      else if (it.action === 'conflict' && !it.conflict) this.unresolved.push(it);
      else if (it.action === 'copy' || it.action === 'update' || it.action === 'conflict') transfers.push(it);
      else if (it.action === 'delete') deletes.push(it);
      else skips.push(it);
    }
    this.summary.skipped = plan.summary.skip.count;
    const actionable = transfers.length + deletes.length;
    this.progress.total = actionable;
    this.progress.length = transfers.reduce((s, it) => s + it.size, 0);

    if (plan.deletes.needsConfirmation && !opts.confirmDeletes) {
      return this.finish('needs_delete_confirmation', false);
    }
    this.progress.start(opts.progressIntervalMs ?? 500);
    try {
      if (isTwoWay) {
        await opts.twoWayState?.beginStaging();
        // Unchanged files and folders carry over to the next state as they are.
        const carried: TwoWayRecord[] = [];
        for (const it of skips) {
          if (
            it.reason === 'unchanged' ||
            (it.kind === 'file' && it.source && it.target && it.reason !== 'kind_mismatch')
          )
            carried.push(this.record(it, it.rel, it.source, it.target));
          if (carried.length >= 1000) await this.stageRecords(carried.splice(0));
        }
        await this.stageRecords(carried);
      }

      // What cut-off writes of an earlier attempt (or run) left is removed before anything is written.
      const earlier = await opts.checkpoints?.tempFolders?.().catch(() => []);
      if (earlier && earlier.length > 0) await this.removeLeftTemps(earlier);
      // Items finished by an earlier attempt of this run are not done again.
      await this.lookupCheckpoints([...mkdirs, ...transfers, ...deletes]);
      const resumedRecords: TwoWayRecord[] = [];
      const matched = { by: {} as Partial<Record<PlanItem['action'], number>>, bytes: 0 };
      let resumedCopiesAsUpdates = 0;
      const pending = (list: PlanItem[]) => {
        const out: PlanItem[] = [];
        for (const it of list) {
          const info = this.done.get(checkpointKey(plan, it));
          if (!this.resumedOne(it, info, matched)) {
            out.push(it);
            continue;
          }
          if (it.action === 'update' && info?.action === 'copy') resumedCopiesAsUpdates++;
          if (info?.records) resumedRecords.push(...info.records);
        }
        return out;
      };
      const todoMkdirs = pending(mkdirs);
      const todoTransfers = pending(transfers);
      const todoDeletes = pending(deletes);
      this.carryOver(matched);
      await this.settleUnrecorded(resumedCopiesAsUpdates);
      await this.stageRecords(resumedRecords);

      const refused = await this.beforeWriting(todoTransfers);
      if (refused) return this.finish(refused, true, [...todoTransfers, ...todoDeletes]);

      const n = Math.max(1, opts.transfers ?? 8);
      this.progress.phase = 'transferring';
      this.progress.emit();
      // Folders first, parents before children; then files, the largest first (they take longest).
      // Writing a file creates its folders, so only folders that receive no file are made here.
      const filled = new Set<string>();
      for (const it of todoTransfers) {
        const sides: Side[] = it.action === 'conflict' ? ['source', 'target'] : [it.side];
        for (const side of sides) {
          for (let r = parentPath(relOn(it, side)); ; r = parentPath(r)) {
            const k = `${it.pair}|${side}|${r}`;
            if (filled.has(k)) break;
            filled.add(k);
            if (r === '/') break;
          }
        }
      }
      const byDepth = new Map<number, PlanItem[]>();
      const implicit: TwoWayRecord[] = [];
      for (const it of todoMkdirs) {
        if (filled.has(`${it.pair}|${it.side}|${relOn(it, it.side)}`)) {
          implicit.push(this.record(it, it.rel, undefined, undefined));
          continue;
        }
        const d = it.rel === '/' ? 0 : it.rel.split('/').length;
        let l = byDepth.get(d);
        if (!l) byDepth.set(d, (l = []));
        l.push(it);
      }
      for (const d of [...byDepth.keys()].sort((a, b) => a - b)) {
        await this.pool(byDepth.get(d) as PlanItem[], n, (it) => this.runMkdir(it), false);
        if (this.stop) break;
      }
      await this.stageRecords(implicit);
      const ordered = todoTransfers.slice().sort((a, b) => b.size - a.size);
      if (!this.stop) {
        const smallSize = opts.smallFileSize ?? 1024 * 1024;
        const cut = ordered.findIndex((it) => it.size < smallSize);
        const large = cut < 0 ? ordered : ordered.slice(0, cut);
        const small = cut < 0 ? [] : ordered.slice(cut);
        const runOne = (it: PlanItem, sent: () => void) =>
          it.action === 'conflict' ? this.runConflict(it) : this.runCopy(it, sent);
        await Promise.all([
          this.pool(large, n, runOne, true),
          this.pool(small, Math.max(n, opts.smallFileTransfers ?? 64), runOne, true),
        ]);
        // Files that failed for what may have been a passing reason get another go once the rest is
        // done (like rclone's --retries): a server that was struggling may have recovered.
        for (let round = 0; round < (opts.finalRetries ?? 1) && !this.stop; round++) {
          const again = this.failed.filter((f) => todoTransfers.includes(f.item) && RETRY_AGAIN.has(f.reason));
          if (again.length === 0) break;
          const items = new Set(again.map((f) => f.item));
          this.failed.splice(0, this.failed.length, ...this.failed.filter((f) => !items.has(f.item)));
          this.progress.failed -= again.length;
          await this.pool([...items], n, runOne, true);
        }
      }

      // Deletes last. Mirror deletes only after every copy succeeded.
      if (!this.stop && todoDeletes.length > 0) {
        const copyFailed = this.failed.length > 0 || plan.errors.length > 0;
        if (plan.options.mode === 'mirror' && copyFailed) {
          for (const it of todoDeletes) {
            this.fail(
              it,
              new ProviderError('unknown', 'not deleted because some copies failed', {
                serviceCode: 'skipped_after_failure',
              }),
            );
            this.failed[this.failed.length - 1]!.reason = 'skipped_after_failure';
          }
        } else {
          this.progress.phase = 'deleting';
          this.progress.emit();
          // Files first, then folders deepest first: a folder goes only once nothing is left in it.
          await this.pool(
            todoDeletes.filter((it) => it.kind === 'file'),
            n,
            (it) => this.runDelete(it),
            true,
          );
          const folders = todoDeletes.filter((it) => it.kind === 'dir');
          for (const d of [...new Set(folders.map((it) => depthOf(it.rel)))].sort((x, y) => y - x)) {
            if (this.stop) break;
            await this.pool(
              folders.filter((it) => depthOf(it.rel) === d),
              n,
              (it) => this.runDelete(it),
              true,
            );
          }
        }
      }
      if (this.stop) {
        const remaining = this.notDone(ordered, todoDeletes);
        return this.finish(this.stop.outcome, true, remaining);
      }
      const outcome: TransferOutcome =
        this.failed.length === 0 && plan.errors.length === 0 && this.unresolved.length === 0
          ? 'success'
          : this.successCount === 0 && actionable > 0
            ? 'failed'
            : 'partial';
      return this.finish(outcome, false);
    } finally {
      this.progress.stop();
      opts.signal?.removeEventListener('abort', this.onUserAbort);
    }
  }

  /** Items neither finished nor already reported failed (when a run stops early). */
  private notDone(transfers: PlanItem[], deletes: PlanItem[]): PlanItem[] {
    const failed = new Set(this.failed.map((f) => f.item));
    return [...transfers, ...deletes].filter((it) => !failed.has(it) && !this.finishedItems.has(it));
  }

  readonly finishedItems = new Set<PlanItem>();
  /** Bytes of the transfer items finished (now or by an earlier attempt). */
  finishedBytes = 0;

  private async finish(
    outcome: TransferOutcome,
    stopped: boolean,
    unfinished: PlanItem[] = [],
  ): Promise<TransferResult> {
    const plan = this.plan;
    const opts = this.opts;
    // Folders that could not be listed and kind clashes are failures too (a retry looks at them again).
    if (outcome !== 'needs_delete_confirmation') {
      for (const e of plan.errors) {
        const pairIdx = Math.max(
          0,
          plan.pairs.findIndex((p) => e.path.startsWith(e.side === 'source' ? p.source : p.target)),
        );
        const pair = plan.pairs[pairIdx] ?? { source: '/', target: '/' };
        const root = e.side === 'source' ? pair.source : pair.target;
        const rel = root === '/' ? e.path : e.path.slice(root.length) || '/';
        const item: PlanItem = {
          action: 'copy',
          kind: 'dir',
          pair: pairIdx,
          rel,
          side: other(e.side),
          reason: 'new',
          size: 0,
        };
        this.failed.push({
          sourceFile: { name: baseName(e.path), parent: parentPath(e.path) },
          sourceSide: e.side,
          ...(opts.tokenIds?.[e.side] !== undefined ? { sourceTokenId: opts.tokenIds[e.side] } : {}),
          reason: e.code,
          message: e.message,
          item,
          pair,
        });
      }
      // Names the run could not act on: conflicts, listed with their reason (the user has to act).
      for (const it of this.unresolved) {
        const message = unresolvedMessage(it);
        const f = this.failedItemOf(it, new ProviderError('conflict', message));
        f.reason = it.reason;
        f.conflict = true;
        this.failed.push(f);
        this.summary.conflicts++;
        this.opts.onItem?.({ type: 'conflict', item: it, bytes: 0, error: { code: it.reason, message } });
      }
    }
    // A stopped run lists what it did not get to, so a retry does exactly that.
    if (stopped) {
      const reason =
        outcome === 'canceled'
          ? 'canceled'
          : outcome === 'traffic_exceeded'
            ? 'traffic_exceeded'
            : outcome === 'insufficient_space'
              ? 'quota'
              : (this.stop?.error?.code ?? outcome);
      for (const it of unfinished)
        this.fail(it, new ProviderError('unknown', `not done: ${outcome}`, { serviceCode: reason }));
      for (const f of this.failed.slice(this.failed.length - unfinished.length)) {
        f.reason = reason;
        f.notDone = true;
      }
    }
    this.summary.notDone = this.failed.filter((f) => f.notDone).length;
    this.summary.failed = this.failed.filter((f) => !f.notDone && !f.conflict).length;
    this.progress.phase = 'finishing';
    await this.removeLeftTemps();
    let committed: boolean | undefined;
    if (this.managesState && outcome !== 'needs_delete_confirmation') {
      const state = opts.twoWayState as TwoWayStateStore;
      // A one-way record holds only what is known to be in step (what failed has none): a partial
      // run's is good too. A two-way state must be whole.
      if (outcome === 'success' || (outcome === 'partial' && this.plan.options.mode !== 'two_way')) {
        await state.commit();
        committed = true;
      } else {
        await state.discard();
        committed = false;
      }
    }
    // A run that came to an end forgets its checkpoints; a canceled or stopped one keeps them to resume.
    if (opts.checkpoints && (outcome === 'success' || outcome === 'partial' || (outcome === 'failed' && !stopped))) {
      await opts.checkpoints.clear();
    }
    this.progress.emit();
    const finishedAt = Date.now();
    const result: TransferResult = {
      outcome,
      successCount: this.successCount,
      totalCount: this.progress.total,
      totalSize: this.progress.length,
      transferredBytes: this.transferredBytes,
      timeTakenMs: finishedAt - this.startedAt,
      startedAt: this.startedAt,
      finishedAt,
      source: { kind: plan.source.kind, paths: plan.options.sourcePaths },
      target: { kind: plan.target.kind, path: plan.options.targetPath },
      failed: this.failed,
      skipped: this.skipped,
      summary: this.summary,
    };
    if (outcome === 'insufficient_space' || outcome === 'traffic_exceeded') {
      result.neededBytes = this.neededBytes ?? Math.max(0, this.progress.length - this.finishedBytes);
      if (this.stopSide) result.fullSide = this.stopSide;
    }
    if (this.stop?.error) result.error = { code: this.stop.error.code, message: this.stop.error.message };
    if (committed !== undefined) result.twoWayStateCommitted = committed;
    if (this.resumedBytes > 0) result.resumedBytes = this.resumedBytes;
    const setAside: SetAsideItem[] = [];
    for (const it of plan.items) {
      if (it.reason !== 'symbolic_link') continue;
      setAside.push({
        side: it.side,
        path: pathOn(plan, it, it.side),
        kind: it.kind,
        reason: 'symbolic_link',
        detail: it.link ?? 'not_followed',
      });
    }
    if (setAside.length > 0) result.setAside = setAside;
    return result;
  }
}

/**
 * Executes a plan while `planStreamed` makes it, its items coming through `feed` (see
 * `Execution.runStreamed`); `plan` is the one `PlanStream.roots` was given, its figures live.
 */
export async function executeStreamed(
  plan: TransferPlan,
  feed: PlanFeed,
  opts: ExecuteOptions,
  intended?: IntentLookup,
): Promise<TransferResult> {
  return new Execution(plan, opts).runStreamed(feed, intended);
}

/**
 * Executes a plan: folders, then files in parallel (streamed, verified, checkpointed), then deletes.
 * Never throws for what happens to items: the result tells the outcome and lists failed items.
 */
export async function executePlan(plan: TransferPlan, opts: ExecuteOptions): Promise<TransferResult> {
  return new Execution(plan, opts).run();
}
