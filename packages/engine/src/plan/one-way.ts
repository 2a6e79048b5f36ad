import type { SameNamePolicy } from '@skyferry/contract';
import type { Entry } from '@skyferry/providers';
import type { TwoWayRecord, TwoWayStateStore } from '../stores.ts';
import type { PlanAction, PlanItem, PlanReason, TransferMode } from '../types.ts';
import { baseName, childRel, fingerprintOf, sameHashes } from '../util.ts';
import { caseClash, kindClash, unreadableName } from './clashes.ts';
import type { Comparer } from './compare.ts';
import type { Deletions } from './deletions.ts';
import type { PlanRequest } from './request.ts';
import type { PlanTally } from './tally.ts';
import type { FolderJudge, FolderRef, FolderShape, PairedFolder, Place, Visit, Walked, Walker } from './walk.ts';

type Decision = { action: PlanAction; reason: PlanReason };
/** Whether a source file is newer than the target's: by time, or (no time to trust) by being another file. */
type Newer = false | 'newer' | 'differs';

/** `f` of a value that may still be coming. */
function then<T, U>(v: T | Promise<T>, f: (t: T) => U | Promise<U>): U | Promise<U> {
  return v instanceof Promise ? v.then(f) : f(v);
}

/** The decisions (shared: a plan of millions of files makes no new ones). */
const D = {
  differs: { action: 'update', reason: 'differs' },
  overwrite: { action: 'update', reason: 'overwrite' },
  sizeDiffers: { action: 'update', reason: 'size_differs' },
  newer: { action: 'update', reason: 'newer' },
  unchanged: { action: 'skip', reason: 'unchanged' },
  exists: { action: 'skip', reason: 'exists' },
  sameSize: { action: 'skip', reason: 'same_size' },
  notNewer: { action: 'skip', reason: 'not_newer' },
} as const satisfies Record<string, Decision>;

/** What a visit leaves to its folder's walk: whether a file is written into it. */
interface OneWayState {
  writes: boolean;
  /** The source folder vanished after its parent was listed. */
  gone: boolean;
}

/**
 * The one-way decisions (migrate, one_way, incremental, mirror): per pair of same-name files the
 * same-name policy (mirror: whether they differ), new source files copied, folders created where
 * something is written or an empty source folder has none, and mirror's extras handed to the
 * deletions. A folder's walk comes to whether anything is written below it.
 */
export class OneWayDecider implements FolderJudge<OneWayState, boolean, TwoWayRecord[] | undefined> {
  readonly req: PlanRequest;
  readonly mode: TransferMode;
  readonly policy: SameNamePolicy;
  readonly walker: Walker;
  readonly tally: PlanTally;
  readonly deletions: Deletions;
  readonly compare: Comparer;
  /**
   * Where the previous run's record of what was copied is read (a sync to a target that keeps no
   * modification times), once it is known to exist.
   */
  records: TwoWayStateStore | undefined;
  prepare: ((ref: FolderRef) => Promise<TwoWayRecord[] | undefined>) | undefined;

  constructor(req: PlanRequest, walker: Walker, tally: PlanTally, deletions: Deletions, compare: Comparer) {
    this.req = req;
    this.mode = req.mode;
    this.policy = req.sameNamePolicy ?? 'size_differs_or_newer';
    this.walker = walker;
    this.tally = tally;
    this.deletions = deletions;
    this.compare = compare;
  }

  /** Reads the previous run's record beside each folder's listings. */
  useRecords(store: TwoWayStateStore, hasRecord: boolean): void {
    this.records = store;
    this.prepare = hasRecord ? (ref) => store.loadFolder(ref.rel) : undefined;
  }

  /** Walks one folder of a pair. Answers whether anything will be written below it. */
  async walk(pair: number, place: Place, targetExists: boolean, only?: Set<string>): Promise<boolean> {
    const ref: FolderRef = { ...place, pair, on: { source: true, target: targetExists } };
    if (only) ref.only = only;
    return (await this.walker.walk(ref, this)).value;
  }

  unlisted(): boolean {
    return false;
  }

  async visit(f: PairedFolder, prepared: TwoWayRecord[] | undefined): Promise<Visit<OneWayState, boolean>> {
    let records: Map<string, TwoWayRecord> | undefined;
    if (prepared && prepared.length > 0) {
      records = new Map();
      for (const r of prepared) if (r.kind === 'file') records.set(this.walker.key(baseName(r.rel)), r);
    }
    const ref = f.ref;
    const pair = ref.pair;
    if (f.raw.source === null) {
      const path = this.walker.pathOf('source', pair, ref);
      this.walker.errors.push({ side: 'source', path, code: 'not_found', message: `not found: ${path}` });
      return { state: { writes: false, gone: true }, subs: [] };
    }
    const local: PlanItem[] = [];
    const subs: Promise<Walked<boolean>>[] = [];
    const decisions: Promise<void>[] = [];
    const state: OneWayState = { writes: false, gone: false };
    for (const u of f.unreadable) this.tally.emit(local, unreadableName(pair, ref, u));
    for (const it of f.setAside) this.tally.emit(local, it);
    this.walker.merge(
      f,
      (se, te, key) => {
        if (se && !te) {
          const place = this.walker.child(ref, se, undefined);
          if (se.kind === 'file') {
            this.tally.emit(local, {
              ...place,
              action: 'copy',
              kind: 'file',
              pair,
              side: 'target',
              reason: 'new',
              size: se.size,
              source: fingerprintOf(se),
            });
            state.writes = true;
          } else {
            subs.push(this.walker.walk({ ...place, pair, on: { source: true, target: false } }, this));
          }
        } else if (se && te) {
          if (se.kind !== te.kind) {
            this.tally.emit(local, kindClash(pair, this.walker.child(ref, se, te), se, te));
          } else if (se.kind === 'dir') {
            subs.push(
              this.walker.walk({ ...this.walker.child(ref, se, te), pair, on: { source: true, target: true } }, this),
            );
          } else {
            const d = this.decide(se, te, records?.get(key));
            if (d instanceof Promise) {
              const s0 = se;
              const t0 = te;
              decisions.push(d.then((dd) => this.sameNameItem(local, state, ref, s0, t0, dd)));
            } else this.sameNameItem(local, state, ref, se, te, d);
          }
        } else if (te && !se && this.mode === 'mirror') {
          const place = this.walker.child(ref, undefined, te);
          if (te.kind === 'file')
            this.tally.emit(local, this.deletions.file(pair, place, 'target', te, 'extra_on_target'));
          else subs.push(this.deletions.extraFolder(pair, place));
        }
      },
      (sGroup, tGroup) => {
        // Names one side takes for one (it ignores case): none of them is copied, updated or deleted.
        for (const it of caseClash(pair, ref, sGroup, tGroup)) this.tally.emit(local, it);
      },
    );
    await Promise.all(decisions);
    this.tally.flushInto(local);
    return { state, subs };
  }

  after(state: OneWayState, below: Walked<boolean>[], shape: FolderShape, ref: FolderRef): boolean {
    if (state.gone) return false;
    let writes = state.writes || below.some((w) => w.value);
    if (shape.missing.target && (writes || (shape.empty.source && !ref.only && !this.walker.filter))) {
      const item: PlanItem = {
        action: 'mkdir',
        kind: 'dir',
        pair: ref.pair,
        rel: ref.rel,
        side: 'target',
        reason: 'missing_folder',
        size: 0,
      };
      if (ref.targetRel !== undefined) item.targetRel = ref.targetRel;
      this.tally.add(item);
      writes = true;
    }
    return writes;
  }

  /**
   * Decides what to do with a file present on both sides (`rec`: the previous run's record of it,
   * kept where the target keeps no modification times). Answers a promise only when the decision
   * needs more than the listings: exact times, a hash or the bytes.
   */
  decide(s: Entry, t: Entry, rec: TwoWayRecord | undefined): Decision | Promise<Decision> {
    if (this.req.checksum && this.mode !== 'incremental') {
      if (s.size !== t.size) return D.sizeDiffers;
      return this.compare.sameHash(s, t).then((same) => (same === false ? D.differs : D.unchanged));
    }
    if (this.mode === 'mirror') {
      if (s.size !== t.size) return D.differs;
      return this.sameSized<Decision>(s, t, rec, D.differs, D.unchanged);
    }
    // incremental: only a newer source file, then as the policy says.
    if (this.mode === 'incremental') {
      return then(this.newer(s, t, rec), (newer) => (newer ? this.byPolicy(s, t, () => newer) : D.notNewer));
    }
    return this.byPolicy(s, t, () => this.newer(s, t, rec));
  }

  /** The same-name policy's decision (`newer` asked only where the policy turns on it). */
  private byPolicy(s: Entry, t: Entry, newer: () => Newer | Promise<Newer>): Decision | Promise<Decision> {
    switch (this.policy) {
      case 'overwrite':
        return this.mode === 'incremental' ? D.newer : D.overwrite;
      case 'skip':
        return D.exists;
      case 'size_differs':
        return s.size !== t.size ? D.sizeDiffers : D.sameSize;
      case 'size_differs_or_newer':
        if (s.size !== t.size) return D.sizeDiffers;
        return then(newer(), (n) => (!n ? D.notNewer : n === 'differs' ? D.differs : D.newer));
    }
  }

  /**
   * Whether the source file is newer than the target's. Where the target keeps times: by times
   * ('newer'), unless the target's is in the future, then by being another file ('differs'). Where
   * it keeps none: changed since the record of the last copy, or without one, changed after the
   * target's copy was written (its time is the upload's).
   */
  private newer(s: Entry, t: Entry, rec: TwoWayRecord | undefined): Newer | Promise<Newer> {
    const compare = this.compare;
    const tt = t.modTime?.getTime();
    if (compare.keepsTimes.target && compare.inFuture(tt)) return this.sameSized<Newer>(s, t, rec, 'differs', false);
    if (!compare.keepsTimes.target && rec?.source) {
      if (!compare.changedSince('source', s, rec.source)) return false;
      return then(compare.changedSinceExact('source', s, rec.source), (changed) => changed && 'newer');
    }
    const h = sameHashes(s.hashes, t.hashes);
    if (h !== undefined && h) return false;
    const newer = (a: Entry, b: Entry): Newer => compare.isNewer(a.modTime?.getTime(), b.modTime?.getTime()) && 'newer';
    if (!newer(s, t)) return false;
    // Newer by the listed times alone: some services list another time than the kept one (S3).
    return Promise.all([this.walker.precise('source', s), this.walker.precise('target', t)]).then(([ps, pt]) =>
      newer(ps, pt),
    );
  }

  /**
   * Two files of one size: the same (`same`) or not (`differs`)? A hash both list decides; where
   * the target keeps times, equal times at the sides' precision (exact ones asked for when the
   * listed ones differ); where it keeps none, the record of the last copy, or else the bytes.
   */
  private sameSized<D>(s: Entry, t: Entry, rec: TwoWayRecord | undefined, differs: D, same: D): D | Promise<D> {
    if (s.size !== t.size) return differs;
    const h = sameHashes(s.hashes, t.hashes);
    if (h !== undefined) return h ? same : differs;
    const compare = this.compare;
    const tt = t.modTime?.getTime();
    if (compare.keepsTimes.target && !compare.inFuture(tt)) {
      if (compare.sameTime(s.modTime?.getTime(), tt) !== false) return same;
      return Promise.all([this.walker.precise('source', s), this.walker.precise('target', t)]).then(([ps, pt]) => {
        const ph = sameHashes(ps.hashes, pt.hashes);
        if (ph !== undefined) return ph ? same : differs;
        return compare.sameTime(ps.modTime?.getTime(), pt.modTime?.getTime()) !== false ? same : differs;
      });
    }
    if (rec?.source && rec.target) {
      const r = rec;
      if (compare.changedSince('target', t, r.target)) return differs;
      if (!compare.changedSince('source', s, r.source)) return same;
      return compare.changedSinceExact('source', s, r.source).then((changed) => (changed ? differs : same));
    }
    // Nothing recorded and no time to trust: the bytes decide, and a doubt sends the file.
    return compare.sameContent(s, t).then((sameBytes) => (sameBytes === true ? same : differs));
  }

  /** The item for a file on both sides, once decided. */
  sameNameItem(
    local: PlanItem[],
    state: { writes: boolean },
    folder: FolderRef,
    s0: Entry,
    t0: Entry,
    d: Decision,
  ): void {
    if (d.action === 'skip' && !this.tally.keepSkipped && !this.records && !this.tally.onSkip) {
      this.tally.summary.skip.count++;
      this.tally.summary.skip.bytes += s0.size;
      return;
    }
    // Made as a literal (millions of these): the target's spelling only where it differs.
    const item: PlanItem = {
      action: d.action,
      kind: 'file',
      pair: folder.pair,
      rel: childRel(folder.rel, s0.name),
      side: 'target',
      reason: d.reason,
      size: s0.size,
    };
    const targetRel = this.walker.targetRelOf(folder, s0, t0);
    if (targetRel !== undefined) item.targetRel = targetRel;
    // A skipped file needs no fingerprints (nothing is done with it): plans of millions stay small.
    // Unless the run keeps a record of both sides for the next one, or a resumed run looks its
    // skips up by what was read.
    if (d.action !== 'skip' || this.records || this.tally.skipReads) {
      item.source = fingerprintOf(s0);
      item.target = fingerprintOf(t0);
    }
    this.tally.emit(local, item);
    if (d.action === 'update') state.writes = true;
  }
}
