import { normalizePath } from '@skyferry/contract';
import { ProviderError, mapLimit } from '@skyferry/providers';
import type { Provider } from '@skyferry/providers';
import { kindClash } from './plan/clashes.ts';
import { Comparer } from './plan/compare.ts';
import { Deletions } from './plan/deletions.ts';
import { OneWayDecider } from './plan/one-way.ts';
import type { PlanRequest } from './plan/request.ts';
import { PlanTally } from './plan/tally.ts';
import { TwoWayDecider } from './plan/two-way.ts';
import { Walker, type Place } from './plan/walk.ts';
import type { TwoWayStateStore } from './stores.ts';
import type { FailedItem, Fingerprint, PlanItem, PlanPair, Side, TransferMode, TransferPlan } from './types.ts';
import { baseName, fingerprintOf, joinRel, parentPath, relOn } from './util.ts';

export { makeKey } from './plan/walk.ts';
export { conflictName, conflictLabel } from './plan/conflict-name.ts';
export type { PlanRequest } from './plan/request.ts';

/** A two-way side whose root folder is gone: a hard stop, whatever the confirmation. */
function missingSide(side: Side, path: string): ProviderError {
  return new ProviderError(
    'not_found',
    `the ${side} folder ${path} is missing: a two-way sync does not take a missing folder for an empty one` +
      ' (an unmounted disk, a renamed folder). Nothing was changed. Put it back, or start over with a resync.',
    { serviceCode: 'side_missing', retry: 'fatal' },
  );
}

/** A two-way side that lists no file where the last run left files: a hard stop, whatever the confirmation. */
function emptiedSide(side: Side, path: string, files: number): ProviderError {
  return new ProviderError(
    'conflict',
    `the ${side} lists no files where the last run left ${files} (${path}): it is not taken as all deleted.` +
      ' Nothing was changed. If it was emptied on purpose, start over with a resync (a merge that deletes nothing).',
    { serviceCode: 'side_emptied', retry: 'fatal' },
  );
}

/** The place of an earlier plan's item. */
function placeOf(it: PlanItem): Place {
  return it.targetRel === undefined ? { rel: it.rel } : { rel: it.rel, targetRel: it.targetRel };
}

/** Where a migration puts a selected source folder: under its own name, or the root's contents as they are. */
const migratedTo = (targetPath: string, sp: string) =>
  sp === '/' ? targetPath : joinRel(targetPath, '/' + baseName(sp));

/**
 * Makes a plan: the roots are looked at, then the walk lists both trees and the deciders judge
 * what it pairs (one-way and mirror in one module, two-way with its state in another, deletions in
 * a third).
 */
class Planner {
  readonly req: PlanRequest;
  readonly mode: TransferMode;
  readonly walker: Walker;
  readonly tally: PlanTally;
  readonly deletions: Deletions;
  readonly oneWay: OneWayDecider;
  readonly compare: Comparer;
  /** A one-way sync to a target that keeps no modification times: the run keeps a record of what it copied. */
  readonly recording: boolean;
  twoWay: TwoWayDecider | undefined;
  hasState = false;
  /** A streamed plan (`planStreamed`): told once the pairs of roots are known, before the walk is awaited. */
  onRoots: ((plan: TransferPlan) => void) | undefined;

  constructor(req: PlanRequest) {
    this.req = req;
    this.mode = req.mode;
    this.walker = new Walker(req);
    this.compare = new Comparer(this.walker);
    this.recording =
      (req.mode === 'one_way' || req.mode === 'mirror' || req.mode === 'incremental') &&
      req.twoWayState !== undefined &&
      !req.target.features.setModTime;
    this.tally = new PlanTally(
      req.mode === 'two_way' || this.recording || (!req.countOnly && (req.keepSkipped ?? true)),
    );
    // Counted (`tally.add`) and dropped.
    if (req.countOnly) this.tally.stream = () => undefined;
    this.deletions = new Deletions(this.walker, this.tally);
    this.oneWay = new OneWayDecider(req, this.walker, this.tally, this.deletions, this.compare);
  }

  get pairs(): PlanPair[] {
    return this.walker.pairs;
  }

  private async useState(state: TwoWayStateStore | undefined): Promise<TwoWayDecider> {
    if (!state) throw new Error('two_way needs a twoWayState store');
    this.hasState = this.req.resync !== true && (await state.hasState());
    this.twoWay = new TwoWayDecider(
      this.req,
      this.walker,
      this.tally,
      this.deletions,
      this.compare,
      state,
      this.hasState,
    );
    return this.twoWay;
  }

  async run(): Promise<TransferPlan> {
    const req = this.req;
    const targetPath = normalizePath(req.targetPath);
    const sourcePaths = req.sourcePaths.map(normalizePath);
    if (sourcePaths.length === 0) throw new ProviderError('not_found', 'no source paths selected');
    if (this.mode !== 'migrate' && sourcePaths.length !== 1)
      throw new ProviderError('invalid_name', 'a sync pairs exactly one source folder with the target folder');
    // The target folder and the selected sources are looked at together, not one after another:
    // each look costs round trips to its cloud (on S3 a HEAD, then a listing for a folder), and a
    // run waits for all of them before the first file moves (S3 (b) of bench:transfer: planning
    // went from about 140 to 85 ms behind 20 ms links). With one source (every sync, most
    // migrations) the folders the walk starts with are listed beside those looks, and a migrated
    // folder's place in the target looked at too, so the first files are known a round trip after
    // the run starts instead of three (35 to 55 ms against 85 there).
    const one = sourcePaths.length === 1 ? (sourcePaths[0] as string) : undefined;
    const oneDst = one === undefined || this.mode !== 'migrate' ? targetPath : migratedTo(targetPath, one);
    if (one !== undefined) {
      this.walker.listEarly('source', one);
      this.walker.listEarly('target', oneDst);
    }
    const [targetRoot, sourceStats, oneDstEntry] = await Promise.all([
      this.walker.statOrNull('target', targetPath, true),
      mapLimit(sourcePaths, this.walker.listConcurrency, (sp) =>
        this.walker.statOrNull('source', sp, one !== undefined),
      ),
      oneDst !== targetPath ? this.walker.statOrNull('target', oneDst, true) : undefined,
    ]);
    if (targetRoot && targetRoot.kind !== 'dir')
      throw new ProviderError('not_dir', `target is not a folder: ${targetPath}`);
    // Names differing only in case are one file on a side that ignores case (a Windows share, a
    // case-insensitive WebDAV server): found out per run, since a backend cannot always tell.
    if (!this.walker.caseInsensitive) {
      // The folder the walk lists first on the target, where there is one (its listing is under way).
      const first = oneDstEntry?.kind === 'dir' ? oneDst : targetPath;
      const probes = [targetRoot ? this.walker.probeCase('target', first) : Promise.resolve(false)];
      if (this.mode === 'two_way' && one !== undefined && sourceStats[0]?.kind === 'dir')
        probes.push(this.walker.probeCase('source', one));
      if ((await Promise.all(probes)).some(Boolean)) this.walker.ignoreCase();
    }

    if (this.mode === 'migrate') {
      const filesByParent = new Map<string, Set<string>>();
      const tasks: Promise<unknown>[] = [];
      for (const [i, sp] of sourcePaths.entries()) {
        const st = sourceStats[i] ?? null;
        if (!st) {
          this.walker.errors.push({ side: 'source', path: sp, code: 'not_found', message: `not found: ${sp}` });
          continue;
        }
        if (st.kind === 'dir') {
          const dst = migratedTo(targetPath, sp);
          const dstEntry =
            sp === '/' || !targetRoot
              ? targetRoot
              : dst === oneDst && oneDstEntry !== undefined
                ? oneDstEntry
                : await this.walker.statOrNull('target', dst);
          this.pairs.push({ source: sp, target: dst });
          if (dstEntry && dstEntry.kind !== 'dir') {
            // A file of the folder's name in the target: a conflict the user resolves, as below the roots.
            this.tally.add(kindClash(this.pairs.length - 1, { rel: '/' }, st, dstEntry));
            continue;
          }
          tasks.push(this.oneWay.walk(this.pairs.length - 1, { rel: '/' }, dstEntry !== null));
        } else {
          const parent = parentPath(sp);
          let set = filesByParent.get(parent);
          if (!set) filesByParent.set(parent, (set = new Set()));
          set.add(baseName(sp));
        }
      }
      for (const [parent, names] of filesByParent) {
        this.pairs.push({ source: parent, target: targetPath });
        tasks.push(this.oneWay.walk(this.pairs.length - 1, { rel: '/' }, targetRoot !== null, names));
      }
      this.onRoots?.(this.result('full', sourcePaths, targetPath));
      await Promise.all(tasks);
    } else {
      const sp = sourcePaths[0] as string;
      const st = sourceStats[0] ?? null;
      const twoWay = this.mode === 'two_way' ? await this.useState(req.twoWayState) : undefined;
      if (!st) {
        if (this.hasState) throw missingSide('source', sp);
        throw new ProviderError('not_found', `not found: ${sp}`);
      }
      if (st.kind !== 'dir') throw new ProviderError('not_dir', `a sync needs a source folder: ${sp}`);
      this.pairs.push({ source: sp, target: targetPath });
      if (twoWay) {
        if (this.hasState && !targetRoot) throw missingSide('target', targetPath);
        const sink: PlanItem[] = [];
        await twoWay.walk({ rel: '/' }, true, targetRoot !== null, this.hasState, sink);
        // A side that lists nothing where the last run left files is more likely gone (a disk not
        // mounted, a folder emptied by mistake) than emptied on purpose: its "deletions" are not carried over.
        for (const side of ['source', 'target'] as Side[]) {
          if (twoWay.stateFiles > 0 && this.walker.filesSeen[side] === 0)
            throw emptiedSide(side, side === 'source' ? sp : targetPath, twoWay.stateFiles);
        }
        this.tally.flushInto(sink);
      } else {
        if (this.recording && req.twoWayState)
          this.oneWay.useRecords(req.twoWayState, await req.twoWayState.hasState());
        const walking = this.oneWay.walk(0, { rel: '/' }, targetRoot !== null);
        this.onRoots?.(this.result('full', sourcePaths, targetPath));
        await walking;
      }
    }
    this.walker.reportScan(true);
    return this.result('full', sourcePaths, targetPath);
  }

  /** Builds the plan object from what was walked. */
  result(kind: 'full' | 'retry', sourcePaths: string[], targetPath: string): TransferPlan {
    const deletes: TransferPlan['deletes'] = {
      count: this.tally.summary.delete.count,
      files: 0,
      bytes: this.tally.summary.delete.bytes,
      needsConfirmation: false,
      sides: {
        source: { files: this.tally.deletedFiles.source, of: this.walker.filesSeen.source },
        target: { files: this.tally.deletedFiles.target, of: this.walker.filesSeen.target },
      },
    };
    for (const side of ['source', 'target'] as Side[]) {
      const d = this.tally.deletedFiles[side];
      deletes.files += d;
      if (kind === 'full' && d > 0 && d * 2 > this.walker.filesSeen[side]) deletes.needsConfirmation = true;
    }
    const plan: TransferPlan = {
      version: 1,
      kind,
      createdAt: Date.now(),
      options: {
        mode: this.mode,
        sameNamePolicy: this.oneWay.policy,
        filter: this.walker.filter,
        conflictResolution: this.req.conflictResolution ?? 'keep_both',
        sourcePaths,
        targetPath,
        ...(this.walker.links.follow ? { followLinks: true } : {}),
      },
      source: { kind: this.req.source.kind, accountKey: this.req.source.accountKey },
      target: { kind: this.req.target.kind, accountKey: this.req.target.accountKey },
      pairs: this.pairs,
      items: this.tally.items,
      summary: this.tally.summary,
      bytesTo: this.tally.bytesTo,
      filesToTransfer: this.tally.filesToTransfer,
      filesSeen: this.walker.filesSeen,
      deletes,
      errors: this.walker.errors,
    };
    if (this.mode === 'two_way') plan.twoWay = { firstRun: !this.hasState };
    if (this.recording) plan.keepsRecord = true;
    return plan;
  }

  /** A retry: the failed items of an earlier run, looked at again. */
  async retry(failed: FailedItem[]): Promise<TransferPlan> {
    const pairIndex = new Map<string, number>();
    const pairOf = (p: PlanPair): number => {
      const k = `${p.source}\u0000${p.target}`;
      let i = pairIndex.get(k);
      if (i === undefined) {
        i = this.pairs.length;
        this.pairs.push({ source: p.source, target: p.target });
        pairIndex.set(k, i);
      }
      return i;
    };
    if (this.mode === 'two_way' && this.req.twoWayState) {
      await this.useState(this.req.twoWayState);
    }
    const seen = new Set<string>();
    const tasks: Promise<unknown>[] = [];
    for (const f of failed) {
      const pi = pairOf(f.pair);
      const it: PlanItem = { ...f.item, pair: pi };
      const k = `${pi}|${it.action}|${it.side}|${it.rel}`;
      if (seen.has(k)) continue;
      seen.add(k);
      const pair = this.pairs[pi] as PlanPair;
      if (it.kind === 'dir' && it.action === 'copy') {
        // A folder that could not be listed: plan it now.
        if (this.mode === 'two_way') {
          tasks.push(
            (async () => {
              const sink: PlanItem[] = [];
              const [a, b] = await Promise.all([
                this.walker.statOrNull('source', joinRel(pair.source, it.rel)),
                this.walker.statOrNull('target', joinRel(pair.target, relOn(it, 'target'))),
              ]);
              await (this.twoWay as TwoWayDecider).walk(placeOf(it), a !== null, b !== null, this.hasState, sink);
              for (const x of sink) x.pair = pi;
              // Skips are dropped but for links left alone: the run reports each one.
              this.tally.flushInto(sink.filter((x) => x.action !== 'skip' || x.reason === 'symbolic_link'));
            })(),
          );
        } else {
          tasks.push(
            (async () => {
              const t = await this.walker.statOrNull('target', joinRel(pair.target, relOn(it, 'target')));
              await this.oneWay.walk(pi, placeOf(it), t !== null && t.kind === 'dir');
            })(),
          );
        }
        continue;
      }
      if (it.action === 'copy' || it.action === 'update' || it.action === 'conflict') {
        tasks.push(
          (async () => {
            const refresh = async (side: Side): Promise<Fingerprint | null | undefined> => {
              const fp = side === 'source' ? it.source : it.target;
              if (!fp) return undefined;
              const e = await this.walker.statOrNull(
                side,
                joinRel(side === 'source' ? pair.source : pair.target, relOn(it, side)),
              );
              return e && e.kind === 'file' ? fingerprintOf(e) : null;
            };
            const [s, t] = await Promise.all([refresh('source'), refresh('target')]);
            const from = it.action === 'conflict' ? undefined : it.side === 'target' ? s : t;
            if (from === null) return; // the file to copy is gone: nothing to retry
            if (s) it.source = s;
            if (t) it.target = t;
            if (it.action !== 'conflict') it.size = (it.side === 'target' ? it.source : it.target)?.size ?? it.size;
            this.tally.add(it);
          })(),
        );
        continue;
      }
      this.tally.add(it);
    }
    await Promise.all(tasks);
    return this.result('retry', this.req.sourcePaths.map(normalizePath), normalizePath(this.req.targetPath));
  }
}

/**
 * Plans a migration or sync: lists both sides (folders in parallel, page by page), compares each
 * folder by a sorted merge and decides per file. Nothing is written. Throws a ProviderError when
 * the run cannot start (source missing, auth expired, canceled); folders that cannot be listed are
 * recorded in `plan.errors` and left alone.
 */
export async function planTransfer(req: PlanRequest): Promise<TransferPlan> {
  return new Planner(req).run();
}

/** How a run that executes while it plans takes the plan (`planStreamed`). */
export interface PlanStream {
  /** Each item once final, folder by folder; the plan keeps none of them (but links left alone). */
  item(item: PlanItem): void;
  /** Before each folder is listed: a promise to wait for room, or undefined to go on. */
  gate(): Promise<void> | undefined;
  /**
   * Once the pairs of roots are known: the plan as far as it goes (its pairs, errors and counts
   * are the live ones, its items only the links left alone). Called before any item.
   */
  roots(plan: TransferPlan): void;
  /** Each file the plan skips (same name, filtered out), once judged; the plan keeps none. */
  skipped?(item: PlanItem): void;
  /** The skips carry the fingerprints of both sides (a resumed run looks them up by them). */
  skipReads?: boolean;
}

/** Whether a plan of `req` can be executed while it is made (`planStreamed`): nothing in it waits for the whole tree. */
export function streamable(req: PlanRequest): boolean {
  if (req.mode !== 'migrate' && req.mode !== 'one_way' && req.mode !== 'incremental') return false;
  // A sync that keeps a record of what it copied stages and commits it as a whole.
  return req.mode === 'migrate' || req.twoWayState === undefined || req.target.features.setModTime;
}

/**
 * Plans as `planTransfer` does, handing each item to `stream` as soon as its folder is judged,
 * and waiting for room before listing each folder: memory follows the window the caller keeps,
 * not the number of files. Resolves, once the walk is done, to the plan's final figures (its
 * items only the links left alone). Only for plans `streamable` says yes to.
 */
export async function planStreamed(req: PlanRequest, stream: PlanStream): Promise<TransferPlan> {
  if (!streamable(req)) throw new Error(`a ${req.mode} plan is not made as a stream`);
  const planner = new Planner({ ...req, keepSkipped: false });
  planner.tally.stream = (it) => stream.item(it);
  if (stream.skipped) planner.tally.onSkip = (it) => stream.skipped?.(it);
  planner.tally.skipReads = stream.skipReads === true;
  planner.walker.gate = () => stream.gate();
  planner.onRoots = (plan) => stream.roots(plan);
  return planner.run();
}

export interface RetryRequest {
  source: Provider;
  target: Provider;
  /** The failed items of the earlier run (`result.failed`). */
  failed: FailedItem[];
  /** The earlier plan's options (`plan.options`): mode, policy, filter, conflict resolution, paths. */
  options: Pick<PlanRequest, 'mode' | 'sourcePaths' | 'targetPath'> &
    Partial<Pick<PlanRequest, 'sameNamePolicy' | 'filter' | 'conflictResolution' | 'followLinks'>>;
  /** two_way: the state store, to re-plan folders that could not be listed (the state is not replaced by a retry). */
  twoWayState?: TwoWayStateStore;
  signal?: AbortSignal;
  sideNames?: { source: string; target: string };
}

/**
 * Plans "retry the failed part": each failed file is looked at again (gone: dropped; changed: its
 * new size and time are used), folders that could not be listed are planned now, deletes and
 * folder creations are tried again. Execute it with `executePlan` like any plan.
 */
export async function planRetry(req: RetryRequest): Promise<TransferPlan> {
  const planner = new Planner({
    source: req.source,
    target: req.target,
    mode: req.options.mode,
    sourcePaths: req.options.sourcePaths,
    targetPath: req.options.targetPath,
    sameNamePolicy: req.options.sameNamePolicy,
    filter: req.options.filter ?? null,
    conflictResolution: req.options.conflictResolution,
    followLinks: req.options.followLinks,
    twoWayState: req.twoWayState,
    signal: req.signal,
    sideNames: req.sideNames,
  });
  return planner.retry(req.failed);
}
