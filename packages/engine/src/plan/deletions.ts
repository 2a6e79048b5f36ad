import type { Entry } from '@skyferry/providers';
import type { PlanItem, Side } from '../types.ts';
import { childRel, fingerprintOf } from '../util.ts';
import type { PlanTally } from './tally.ts';
import type { FolderJudge, PairedFolder, Visit, Walked, Walker } from './walk.ts';

/** What the walk of a mirror's extra folder found: the deletes of its files, and whether any part was unlisted. */
interface Extra {
  items: PlanItem[];
  failed: boolean;
  files: number;
  bytes: number;
}

/**
 * Deletions: the only place delete items are made. Files are deleted as the walk listed them;
 * folders as a whole only where every part of them was listed and judged.
 */
export class Deletions {
  readonly walker: Walker;
  readonly tally: PlanTally;

  constructor(walker: Walker, tally: PlanTally) {
    this.walker = walker;
    this.tally = tally;
  }

  /** Mirror: a file only on the target. */
  extraFile(pair: number, rel: string, te: Entry): PlanItem {
    return {
      action: 'delete',
      kind: 'file',
      pair,
      rel,
      side: 'target',
      reason: 'extra_on_target',
      size: te.size,
      target: fingerprintOf(te),
    };
  }

  /** Mirror: a folder only on the target. Deleted whole, unless the filter protects some of its files. */
  async extraFolder(pair: number, rel: string): Promise<Walked<boolean>> {
    const judge: FolderJudge<Extra, Extra> = {
      visit: async (f: PairedFolder): Promise<Visit<Extra, Extra>> => {
        const state: Extra = { items: [], failed: false, files: 0, bytes: 0 };
        const subs: Promise<Walked<Extra>>[] = [];
        for (const e of f.sorted.target.values) {
          const er = childRel(f.ref.rel, e.name);
          if (e.kind === 'dir')
            subs.push(this.walker.walk({ pair, rel: er, on: { source: false, target: true } }, judge));
          else {
            state.files++;
            state.bytes += e.size;
            state.items.push(this.extraFile(pair, er, e));
          }
        }
        return { state, subs };
      },
      after: (state, below) => {
        for (const w of below) {
          if (!w.listed || w.value.failed) state.failed = true;
          state.files += w.value.files;
          state.bytes += w.value.bytes;
          for (const it of w.value.items) state.items.push(it);
        }
        return state;
      },
      unlisted: () => ({ items: [], failed: true, files: 0, bytes: 0 }),
    };
    const w = await this.walker.walk({ pair, rel, on: { source: false, target: true } }, judge);
    if (!w.listed || w.value.failed) return { ...w, value: false }; // part of it could not be listed: leave it all alone
    if (w.complete) {
      this.tally.add({
        action: 'delete',
        kind: 'dir',
        pair,
        rel,
        side: 'target',
        reason: 'extra_on_target',
        size: w.value.bytes,
        files: w.value.files,
      });
    } else this.tally.flushInto(w.value.items);
    return { ...w, value: false };
  }

  /** Two-way: a file the other side deleted. */
  deletedFile(item: PlanItem): PlanItem {
    return item;
  }

  /**
   * Two-way: a folder the other side deleted, walked against the state. If everything in it is to
   * be deleted and nothing written into it, the whole folder goes; otherwise its items stay as they are.
   */
  deletedFolder(sink: PlanItem[], rel: string, side: Side, buffer: PlanItem[], writesToOther: boolean): boolean {
    const allDeletes = buffer.every((it) => it.action === 'delete' && it.side === side);
    if (!allDeletes || writesToOther) {
      for (const it of buffer) sink.push(it);
      return false;
    }
    let files = 0;
    let bytes = 0;
    for (const it of buffer) {
      files += it.kind === 'dir' ? (it.files ?? 0) : 1;
      bytes += it.size;
    }
    this.tally.emit(sink, {
      action: 'delete',
      kind: 'dir',
      pair: 0,
      rel,
      side,
      reason: 'deleted_on_other_side',
      size: bytes,
      files,
    });
    return true;
  }
}
