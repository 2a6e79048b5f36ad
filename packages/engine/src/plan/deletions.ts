import type { Entry } from '@skyferry/providers';
import type { LinkScreen } from '../links.ts';
import type { PlanItem, PlanReason, Side } from '../types.ts';
import { fingerprintOf } from '../util.ts';
import type { PlanTally } from './tally.ts';
import type { FolderJudge, PairedFolder, Place, Visit, Walked, Walker } from './walk.ts';

/** What the walk of a folder to delete came to: its items, and whether every one of them deletes. */
interface Doomed {
  items: PlanItem[];
  allDeleted: boolean;
}

/**
 * Deletions: the only place delete items are made, and only of what the walk listed and a decider
 * judged. A file is deleted as it was listed (the run deletes it only if it is still so). A folder
 * is removed only where the walk listed every part of it, the filter hid nothing in it and every
 * entry in it was judged to go; the run removes it only if it is empty then. Nothing is deleted
 * through a symbolic link: a delete of a followed link, below one or of a folder holding one
 * becomes a skip of the link (links.ts), and a link set aside keeps its folder (walk.ts).
 */
export class Deletions {
  readonly walker: Walker;
  readonly tally: PlanTally;
  readonly links: LinkScreen;

  constructor(walker: Walker, tally: PlanTally) {
    this.walker = walker;
    this.tally = tally;
    this.links = walker.links;
  }

  /** A listed file judged to go (a skip of the link where it would go through one). */
  file(pair: number, place: Place, side: Side, e: Entry, reason: PlanReason): PlanItem {
    const item: PlanItem = { ...place, action: 'delete', kind: 'file', pair, side, reason, size: e.size };
    if (side === 'source') item.source = fingerprintOf(e);
    else item.target = fingerprintOf(e);
    this.links.guardDelete(item);
    return item;
  }

  /**
   * The removal of a folder whose every entry the deciders judged to go (`allDeleted`), or none
   * when any part of it was not listed, the filter hid something in it or a link was set aside in
   * it; a skip of the link where the folder is a followed link or holds one.
   */
  folder(
    pair: number,
    place: Place,
    side: Side,
    walked: { complete: boolean },
    allDeleted: boolean,
    reason: PlanReason,
  ): PlanItem | undefined {
    if (!walked.complete || !allDeleted) return undefined;
    const item: PlanItem = { action: 'delete', kind: 'dir', pair, rel: place.rel, side, reason, size: 0 };
    if (place.targetRel !== undefined) item.targetRel = place.targetRel;
    this.links.guardDelete(item);
    return item;
  }

  /** Mirror: a folder only on the target. Its files the filter lets through go, then the folder if nothing else is left. */
  async extraFolder(pair: number, place: Place): Promise<Walked<boolean>> {
    const judge: FolderJudge<Doomed, Doomed> = {
      visit: async (f: PairedFolder): Promise<Visit<Doomed, Doomed>> => {
        const state: Doomed = { items: [], allDeleted: f.setAside.length === 0 };
        const subs: Promise<Walked<Doomed>>[] = [];
        for (const it of f.setAside) this.tally.emit(state.items, it);
        for (const e of f.sorted.target.values) {
          const er = this.walker.child(f.ref, undefined, e);
          if (e.kind === 'dir')
            subs.push(this.walker.walk({ ...er, pair, on: { source: false, target: true } }, judge));
          else {
            const item = this.file(pair, er, 'target', e, 'extra_on_target');
            if (item.action !== 'delete') state.allDeleted = false;
            this.tally.emit(state.items, item);
          }
        }
        return { state, subs };
      },
      after: (state, below, shape, ref) => {
        for (const w of below) {
          for (const it of w.value.items) state.items.push(it);
          if (!w.value.allDeleted) state.allDeleted = false;
        }
        const removal = this.folder(pair, ref, 'target', shape, state.allDeleted, 'extra_on_target');
        if (removal) this.tally.emit(state.items, removal);
        if (removal?.action !== 'delete') state.allDeleted = false;
        return state;
      },
      unlisted: () => ({ items: [], allDeleted: false }),
    };
    const w = await this.walker.walk({ ...place, pair, on: { source: false, target: true } }, judge);
    this.tally.flushInto(w.value.items);
    return { ...w, value: false };
  }

  /**
   * Two-way: a folder the other side deleted, walked against the state into `buffer`. Its items
   * stand as judged (changed files survive and are copied back); the folder itself goes too when
   * every item deletes on this side and nothing is written to the other.
   */
  deletedFolder(
    sink: PlanItem[],
    place: Place,
    side: Side,
    buffer: PlanItem[],
    walked: Walked<unknown>,
    writesToOther: boolean,
  ): boolean {
    for (const it of buffer) sink.push(it);
    const allDeleted = !writesToOther && buffer.every((it) => it.action === 'delete' && it.side === side);
    const removal = this.folder(0, place, side, walked, allDeleted, 'deleted_on_other_side');
    if (removal) this.tally.emit(sink, removal);
    return removal?.action === 'delete';
  }
}
