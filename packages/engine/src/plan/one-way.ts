import type { SameNamePolicy } from '@skyferry/contract';
import type { Entry } from '@skyferry/providers';
import type { PlanAction, PlanItem, PlanReason, TransferMode } from '../types.ts';
import { childRel, fingerprintOf, isNewer, mtimeDiffers, sameHashes } from '../util.ts';
import type { Deletions } from './deletions.ts';
import type { PlanRequest } from './request.ts';
import type { PlanTally } from './tally.ts';
import type { FolderJudge, FolderRef, FolderShape, PairedFolder, Visit, Walked, Walker } from './walk.ts';

type Decision = { action: PlanAction; reason: PlanReason };

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
export class OneWayDecider implements FolderJudge<OneWayState, boolean> {
  readonly req: PlanRequest;
  readonly mode: TransferMode;
  readonly policy: SameNamePolicy;
  readonly walker: Walker;
  readonly tally: PlanTally;
  readonly deletions: Deletions;

  constructor(req: PlanRequest, walker: Walker, tally: PlanTally, deletions: Deletions) {
    this.req = req;
    this.mode = req.mode;
    this.policy = req.sameNamePolicy ?? 'size_differs_or_newer';
    this.walker = walker;
    this.tally = tally;
    this.deletions = deletions;
  }

  /** Walks one folder of a pair. Answers whether anything will be written below it. */
  async walk(pair: number, rel: string, targetExists: boolean, only?: Set<string>): Promise<boolean> {
    const ref: FolderRef = { pair, rel, on: { source: true, target: targetExists } };
    if (only) ref.only = only;
    return (await this.walker.walk(ref, this)).value;
  }

  unlisted(): boolean {
    return false;
  }

  async visit(f: PairedFolder): Promise<Visit<OneWayState, boolean>> {
    const { pair, rel } = f.ref;
    if (f.raw.source === null) {
      const path = this.walker.pathOf('source', pair, rel);
      this.walker.errors.push({ side: 'source', path, code: 'not_found', message: `not found: ${path}` });
      return { state: { writes: false, gone: true }, subs: [] };
    }
    const local: PlanItem[] = [];
    const subs: Promise<Walked<boolean>>[] = [];
    const decisions: Promise<void>[] = [];
    const state: OneWayState = { writes: false, gone: false };
    this.walker.merge(
      f,
      (se, te) => {
        const name = (se ?? te)?.name as string;
        if (se && !te) {
          if (se.kind === 'file') {
            this.tally.emit(local, {
              action: 'copy',
              kind: 'file',
              pair,
              rel: childRel(rel, name),
              side: 'target',
              reason: 'new',
              size: se.size,
              source: fingerprintOf(se),
            });
            state.writes = true;
          } else {
            subs.push(this.walker.walk({ pair, rel: childRel(rel, name), on: { source: true, target: false } }, this));
          }
        } else if (se && te) {
          if (se.kind !== te.kind) {
            this.tally.emit(local, {
              action: 'skip',
              kind: se.kind,
              pair,
              rel: childRel(rel, name),
              side: 'target',
              reason: 'kind_mismatch',
              size: se.size,
              source: fingerprintOf(se),
              target: fingerprintOf(te),
            });
          } else if (se.kind === 'dir') {
            subs.push(
              this.walker.walk({ pair, rel: childRel(rel, te.name), on: { source: true, target: true } }, this),
            );
          } else {
            const d = this.sameName(se, te);
            if (this.turnsOnTime(se, te, d)) {
              const s0 = se;
              const t0 = te;
              decisions.push(
                this.sameNameExact(s0, t0).then((dd) => this.sameNameItem(local, state, pair, rel, s0, t0, dd)),
              );
            } else this.sameNameItem(local, state, pair, rel, se, te, d);
          }
        } else if (te && !se && this.mode === 'mirror') {
          if (te.kind === 'file')
            this.tally.emit(local, this.deletions.file(pair, childRel(rel, name), 'target', te, 'extra_on_target'));
          else subs.push(this.deletions.extraFolder(pair, childRel(rel, name)));
        }
      },
      (side, dup) => {
        if (side !== 'source') return;
        // Two source names with one key (case-insensitive target): the later one is reported, not copied.
        this.walker.errors.push({
          side: 'source',
          path: dup.path,
          code: 'exists',
          message: `name clash on the target: ${dup.name}`,
        });
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
      this.tally.add({
        action: 'mkdir',
        kind: 'dir',
        pair: ref.pair,
        rel: ref.rel,
        side: 'target',
        reason: 'missing_folder',
        size: 0,
      });
      writes = true;
    }
    return writes;
  }

  /** Decides what to do with a file present on both sides. */
  sameName(s: Entry, t: Entry): Decision {
    const update = (reason: PlanReason) => ({ action: 'update' as const, reason });
    const skip = (reason: PlanReason) => ({ action: 'skip' as const, reason });
    if (this.mode === 'mirror') return this.differs(s, t) ? update('differs') : skip('unchanged');
    const newer = isNewer(s.modTime?.getTime(), t.modTime?.getTime());
    if (this.mode === 'incremental' && !newer) return skip('not_newer');
    switch (this.policy) {
      case 'overwrite':
        return update(this.mode === 'incremental' ? 'newer' : 'overwrite');
      case 'skip':
        return skip('exists');
      case 'size_differs':
        return s.size !== t.size ? update('size_differs') : skip('same_size');
      case 'size_differs_or_newer':
        if (s.size !== t.size) return update('size_differs');
        return newer ? update('newer') : skip('not_newer');
    }
  }

  /** sameName, asking for exact times when the decision depends on a time alone. */
  async sameNameExact(s: Entry, t: Entry): Promise<Decision> {
    const d = this.sameName(s, t);
    if (!this.turnsOnTime(s, t, d)) return d;
    const [ps, pt] = await Promise.all([this.walker.precise('source', s), this.walker.precise('target', t)]);
    return this.sameName(ps, pt);
  }

  /** Whether a same-name decision rests on modification times alone (then exact times are asked for). */
  turnsOnTime(s: Entry, t: Entry, d: { reason: PlanReason }): boolean {
    if (d.reason === 'newer') return true;
    return d.reason === 'differs' && s.size === t.size && sameHashes(s.hashes, t.hashes) === undefined;
  }

  /** Mirror: whether the target file differs from the source (size, shared hash, or mod time where kept). */
  differs(s: Entry, t: Entry): boolean {
    if (s.size !== t.size) return true;
    const h = sameHashes(s.hashes, t.hashes);
    if (h !== undefined) return !h;
    if (!this.req.target.features.setModTime) return false;
    return mtimeDiffers(s.modTime?.getTime(), t.modTime?.getTime()) ?? false;
  }

  /** The item for a file on both sides, once decided. */
  sameNameItem(
    local: PlanItem[],
    state: { writes: boolean },
    pair: number,
    rel: string,
    s0: Entry,
    t0: Entry,
    d: Decision,
  ): void {
    if (d.action === 'skip' && !this.tally.keepSkipped) {
      this.tally.summary.skip.count++;
      this.tally.summary.skip.bytes += s0.size;
      return;
    }
    // Keep the target's spelling of the name (case-insensitive targets).
    const item: PlanItem = {
      action: d.action,
      kind: 'file',
      pair,
      rel: childRel(rel, t0.name),
      side: 'target',
      reason: d.reason,
      size: s0.size,
    };
    // A skipped file needs no fingerprints (nothing is done with it): plans of millions stay small.
    if (d.action !== 'skip') {
      item.source = fingerprintOf(s0);
      item.target = fingerprintOf(t0);
    }
    this.tally.emit(local, item);
    if (d.action === 'update') state.writes = true;
  }
}
