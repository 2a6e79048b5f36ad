import type { ConflictResolution } from '@skyferry/contract';
import { DEFAULT_NAME_LIMIT, type Entry, type NameLimit } from '@skyferry/providers';
import type { TwoWayRecord, TwoWayStateStore } from '../stores.ts';
import type { ConflictPlan, PlanAction, PlanItem, PlanReason, Side } from '../types.ts';
import { baseName, fingerprintOf } from '../util.ts';
import { caseClash, kindClash, unreadableName } from './clashes.ts';
import { conflictLabels, conflictName } from './conflict-name.ts';
import type { Comparer } from './compare.ts';
import type { Deletions } from './deletions.ts';
import type { PlanRequest } from './request.ts';
import type { PlanTally } from './tally.ts';
import type { FolderJudge, FolderRef, FolderShape, PairedFolder, Place, Visit, Walked, Walker } from './walk.ts';

const other = (s: Side): Side => (s === 'source' ? 'target' : 'source');

/**
 * The names a folder holds on either side (whole listings: names the filter hides and names that
 * could not be shown too), for conflict copies to avoid; gathered when a conflict first needs them.
 * Compared without case: a copy must not clash on a disk that ignores it either.
 */
class FolderNames {
  private set: Set<string> | undefined;
  private readonly f: PairedFolder;
  constructor(f: PairedFolder) {
    this.f = f;
  }
  private all(): Set<string> {
    if (!this.set) {
      const set = new Set<string>();
      for (const e of this.f.raw.source ?? []) set.add(foldName(e.name));
      for (const e of this.f.raw.target ?? []) set.add(foldName(e.name));
      for (const u of this.f.unreadable) set.add(foldName(u.name));
      this.set = set;
    }
    return this.set;
  }
  has(name: string): boolean {
    return this.all().has(foldName(name));
  }
  add(name: string): void {
    this.all().add(foldName(name));
  }
}

function foldName(name: string): string {
  return name.normalize('NFC').toLowerCase();
}

/** What a two-way folder's walk comes to: whether anything is written below it on each side. */
export interface TwoWayWalk {
  writesTo: Record<Side, boolean>;
}

/** A two-way folder to walk: where its items go, and whether the previous state has it. */
interface TwoWayRef extends FolderRef {
  inState: boolean;
  sink: PlanItem[];
}

type FileItem = (action: PlanAction, side: Side, reason: PlanReason, r: Place, a?: Entry, b?: Entry) => PlanItem;

/**
 * The two-way decisions, against the previous run's state (P) of both sides (A the source, B the
 * target): new on one side is copied, changed on one side copied over, deleted on one side deleted
 * on the other (by the deletions), changed on both a conflict.
 */
export class TwoWayDecider implements FolderJudge<TwoWayWalk, TwoWayWalk, TwoWayRecord[]> {
  readonly req: PlanRequest;
  readonly resolution: ConflictResolution;
  readonly walker: Walker;
  readonly tally: PlanTally;
  readonly deletions: Deletions;
  readonly compare: Comparer;
  readonly now: Date;
  readonly state: TwoWayStateStore;
  readonly hasState: boolean;
  /** Both sides' limits on name length (conflict copies go to both). */
  readonly nameLimits: NameLimit[];
  /** The sides' labels in conflict names (`conflictLabels`), once the pair's roots are known. */
  private labels: { source: string; target: string } | undefined;
  /** Files the previous state holds in the folders walked (the emptied-side rule). */
  stateFiles = 0;

  constructor(
    req: PlanRequest,
    walker: Walker,
    tally: PlanTally,
    deletions: Deletions,
    compare: Comparer,
    state: TwoWayStateStore,
    hasState: boolean,
  ) {
    this.req = req;
    this.resolution = req.conflictResolution ?? 'keep_both';
    this.walker = walker;
    this.tally = tally;
    this.deletions = deletions;
    this.compare = compare;
    this.now = req.now ?? new Date();
    this.state = state;
    this.hasState = hasState;
    this.nameLimits = [
      req.source.features.nameLimit ?? DEFAULT_NAME_LIMIT,
      req.target.features.nameLimit ?? DEFAULT_NAME_LIMIT,
    ];
  }

  /**
   * Walks one folder of a two-way sync: the source (A), the target (B) and the previous state (P).
   * Items go to `sink`. Answers whether anything is written below (for mkdir of missing folders).
   */
  async walk(
    place: Place,
    aExists: boolean,
    bExists: boolean,
    inState: boolean,
    sink: PlanItem[],
  ): Promise<TwoWayWalk> {
    return (await this.walkRef(place, aExists, bExists, inState, sink)).value;
  }

  private walkRef(
    place: Place,
    aExists: boolean,
    bExists: boolean,
    inState: boolean,
    sink: PlanItem[],
  ): Promise<Walked<TwoWayWalk>> {
    const ref: TwoWayRef = { ...place, pair: 0, on: { source: aExists, target: bExists }, inState, sink };
    return this.walker.walk(ref, this);
  }

  prepare(ref: FolderRef): Promise<TwoWayRecord[]> {
    const r = ref as TwoWayRef;
    return r.inState ? this.state.loadFolder(r.rel) : Promise.resolve([]);
  }

  unlisted(): TwoWayWalk {
    return { writesTo: { source: false, target: false } };
  }

  after(state: TwoWayWalk, below: Walked<TwoWayWalk>[], shape: FolderShape, ref: FolderRef): TwoWayWalk {
    const r = ref as TwoWayRef;
    const writesTo = state.writesTo;
    for (const w of below) {
      if (w.value.writesTo.source) writesTo.source = true;
      if (w.value.writesTo.target) writesTo.target = true;
    }
    // A folder missing on a side is created there when something is written into it, or when it is
    // new and empty on the other side (and no filter hides what it holds). A folder the other side
    // deleted is not re-created for being empty: the caller deletes it.
    for (const s of ['source', 'target'] as Side[]) {
      if (!shape.missing[s]) continue;
      const newEmpty = shape.empty[other(s)] && !this.walker.filter && !(r.inState && this.hasState);
      if (writesTo[s] || newEmpty) {
        const item: PlanItem = {
          action: 'mkdir',
          kind: 'dir',
          pair: 0,
          rel: r.rel,
          side: s,
          reason: 'missing_folder',
          size: 0,
        };
        if (r.targetRel !== undefined) item.targetRel = r.targetRel;
        this.tally.emit(r.sink, item);
        writesTo[s] = true;
      }
    }
    return { writesTo };
  }

  async visit(f: PairedFolder, pRaw: TwoWayRecord[]): Promise<Visit<TwoWayWalk, TwoWayWalk>> {
    const ref = f.ref as TwoWayRef;
    const { sink } = ref;
    const key = this.walker.key;
    const P = new Map<string, TwoWayRecord>();
    for (const r of pRaw) {
      P.set(key(baseName(r.rel)), r);
      if (r.kind === 'file') this.stateFiles++;
    }
    const names = new FolderNames(f);
    for (const u of f.unreadable) this.tally.emit(sink, unreadableName(0, ref, u));
    for (const it of f.setAside) this.tally.emit(sink, it);
    const writesTo: Record<Side, boolean> = { source: false, target: false };
    const subs: Promise<Walked<TwoWayWalk>>[] = [];
    const fileTasks: Promise<void>[] = [];
    const fileItem: FileItem = (action, side, reason, r, a, b) => {
      const item: PlanItem = { ...r, action, kind: 'file', pair: 0, side, reason, size: 0 };
      if (a) item.source = fingerprintOf(a);
      if (b) item.target = fingerprintOf(b);
      item.size =
        action === 'delete'
          ? ((side === 'source' ? a : b)?.size ?? 0)
          : action === 'skip'
            ? ((a ?? b)?.size ?? 0)
            : ((side === 'target' ? a : b)?.size ?? 0);
      return item;
    };

    this.walker.merge(
      f,
      (a, b, k) => {
        const prev = P.get(k);
        const r = this.walker.child(ref, a, b);
        if (a && b) {
          if (a.kind !== b.kind) {
            this.tally.emit(sink, kindClash(0, r, a, b));
            return;
          }
          if (a.kind === 'dir') {
            this.tally.emit(sink, {
              ...r,
              action: 'skip',
              kind: 'dir',
              pair: 0,
              side: 'target',
              reason: 'unchanged',
              size: 0,
            });
            subs.push(this.walkRef(r, true, true, prev?.kind === 'dir', sink));
            return;
          }
          const pf = prev?.kind === 'file' ? prev : undefined;
          fileTasks.push(
            (async () => {
              const [ca, cb] = pf
                ? await Promise.all([
                    this.compare.changedSinceExact('source', a, pf.source),
                    this.compare.changedSinceExact('target', b, pf.target),
                  ])
                : [true, true];
              const same = await (pf && (!ca || !cb) ? Promise.resolve(false) : this.compare.sameFile(a, b));
              this.bothSides(sink, writesTo, names, fileItem, r, a, b, pf, ca, cb, same);
            })(),
          );
          return;
        }
        // Present on one side only.
        const side: Side = a ? 'source' : 'target';
        const e = (a ?? b) as Entry;
        const prevMatch = prev && prev.kind === e.kind ? prev : undefined;
        if (e.kind === 'file') {
          fileTasks.push(
            (async () => {
              if (!prevMatch || !this.hasState) {
                this.tally.emit(sink, fileItem('copy', other(side), 'new', r, a, b));
                writesTo[other(side)] = true;
              } else if (
                await this.compare.changedSinceExact(side, e, side === 'source' ? prevMatch.source : prevMatch.target)
              ) {
                this.tally.emit(sink, fileItem('copy', other(side), 'changed_vs_deleted', r, a, b));
                writesTo[other(side)] = true;
              } else {
                this.tally.emit(sink, this.deletions.file(0, r, side, e, 'deleted_on_other_side'));
              }
            })(),
          );
          return;
        }
        // A folder on one side only.
        if (!prevMatch || !this.hasState) {
          subs.push(this.walkRef(r, side === 'source', side === 'target', false, sink));
          return;
        }
        // It was there last time: the other side deleted it. Walk it against the state: unchanged
        // files go, changed ones survive and are copied back; the deletions decide about the folder.
        const buffer: PlanItem[] = [];
        subs.push(
          this.walkRef(r, side === 'source', side === 'target', true, buffer).then((w) => {
            if (this.deletions.deletedFolder(sink, r, side, buffer, w, w.value.writesTo[other(side)]))
              return { ...w, value: { writesTo: { source: false, target: false } } };
            return w;
          }),
        );
      },
      (aGroup, bGroup) => {
        // Names one side takes for one (it ignores case): none of them is copied, updated or deleted.
        for (const it of caseClash(0, ref, aGroup, bGroup)) this.tally.emit(sink, it);
      },
    );
    await Promise.all(fileTasks);
    return { state: { writesTo }, subs };
  }

  conflict(a: Entry, b: Entry, names: FolderNames): ConflictPlan {
    const am = a.modTime?.getTime() ?? 0;
    const bm = b.modTime?.getTime() ?? 0;
    const newer: Side = this.compare.isNewer(bm, am) ? 'target' : 'source';
    let winner: Side;
    switch (this.resolution) {
      case 'source':
        winner = 'source';
        break;
      case 'larger':
        winner = a.size > b.size ? 'source' : b.size > a.size ? 'target' : newer;
        break;
      default:
        winner = newer;
    }
    const plan: ConflictPlan = { resolution: this.resolution, winner };
    if (this.resolution === 'keep_both') {
      const loser = other(winner);
      this.labels ??= conflictLabels(this.req.sideNames, this.walker.pairs[0] ?? { source: '/', target: '/' });
      const name = conflictName(a.name, this.now, this.labels[loser], (c) => names.has(c), this.nameLimits);
      names.add(name);
      plan.loserName = name;
    }
    return plan;
  }

  /** Emits the item for a file on both sides, once its changes are known. */
  bothSides(
    sink: PlanItem[],
    writesTo: Record<Side, boolean>,
    names: FolderNames,
    fileItem: FileItem,
    r: Place,
    a: Entry,
    b: Entry,
    pf: TwoWayRecord | undefined,
    ca: boolean,
    cb: boolean,
    same: boolean,
  ): void {
    if (pf && !ca && !cb) this.tally.emit(sink, fileItem('skip', 'target', 'unchanged', r, a, b));
    else if (pf && ca && !cb) {
      this.tally.emit(sink, fileItem('update', 'target', 'changed', r, a, b));
      writesTo.target = true;
    } else if (pf && !ca && cb) {
      this.tally.emit(sink, fileItem('update', 'source', 'changed', r, a, b));
      writesTo.source = true;
    } else if (same) {
      this.tally.emit(sink, fileItem('skip', 'target', 'unchanged', r, a, b));
    } else {
      const c = this.conflict(a, b, names);
      const item = fileItem('conflict', other(c.winner), pf ? 'both_changed' : 'both_new', r, a, b);
      item.conflict = c;
      item.size = c.resolution === 'keep_both' ? a.size + b.size : c.winner === 'source' ? a.size : b.size;
      this.tally.emit(sink, item);
      writesTo.source = true;
      writesTo.target = true;
    }
  }
}
