import type { PlanItem, PlanSummary, Side } from '../types.ts';

function emptySummary(): PlanSummary {
  return {
    copy: { count: 0, bytes: 0 },
    update: { count: 0, bytes: 0 },
    delete: { count: 0, bytes: 0 },
    skip: { count: 0, bytes: 0 },
    conflict: { count: 0, bytes: 0 },
    mkdir: { count: 0, bytes: 0 },
  };
}

/** The items of a plan being made, and their counts. */
export class PlanTally {
  readonly keepSkipped: boolean;
  /**
   * The plan's items; with `stream` set, only the links left alone (few, reported by the run at
   * its end): every other item goes to `stream` and is not kept.
   */
  readonly items: PlanItem[] = [];
  /** Where a run that executes while it plans takes each item as soon as it is final. */
  stream: ((item: PlanItem) => void) | undefined;
  /** Where the skipped files a plan does not keep go (a run's history lists them). */
  onSkip: ((item: PlanItem) => void) | undefined;
  /** Skips handed to `onSkip` carry what was read, as a write of the file would (`writeKey`). */
  skipReads = false;
  readonly summary = emptySummary();
  readonly deletedFiles: Record<Side, number> = { source: 0, target: 0 };
  readonly bytesTo: Record<Side, number> = { source: 0, target: 0 };
  filesToTransfer = 0;

  constructor(keepSkipped: boolean) {
    this.keepSkipped = keepSkipped;
  }

  /** Puts an item into `sink`, or only counts it (a skip when skips are not kept). */
  emit(sink: PlanItem[], item: PlanItem): void {
    // Links left alone are always kept: the run reports each one.
    if (item.action === 'skip' && !this.keepSkipped && item.reason !== 'symbolic_link') {
      if (item.kind === 'file') {
        this.summary.skip.count++;
        this.summary.skip.bytes += item.size;
        this.onSkip?.(item);
      }
      return;
    }
    sink.push(item);
  }

  /** Adds an item's counts (done when it is final: collapsed subtrees are counted once). */
  count(item: PlanItem): void {
    const a = item.action;
    if (a === 'skip' && item.kind === 'dir') return;
    const t = this.summary[a];
    t.count++;
    t.bytes += item.size;
    if (a === 'copy' || a === 'update') {
      this.bytesTo[item.side] += item.size;
      this.filesToTransfer++;
    } else if (a === 'conflict') {
      const c = item.conflict;
      if (!c) return; // a name the run cannot act on: nothing moves
      this.filesToTransfer++;
      if (c.resolution === 'keep_both') {
        this.bytesTo.source += item.target?.size ?? 0;
        this.bytesTo.target += item.source?.size ?? 0;
      } else {
        this.bytesTo[c.winner === 'source' ? 'target' : 'source'] += item.size;
      }
    } else if (a === 'delete') {
      this.deletedFiles[item.side] += item.kind === 'dir' ? (item.files ?? 0) : 1;
    }
  }

  /** Counts an item and adds it to the plan. */
  add(item: PlanItem): void {
    this.count(item);
    if (this.stream && item.reason !== 'symbolic_link') this.stream(item);
    else this.items.push(item);
  }

  flushInto(items: PlanItem[]): void {
    for (const it of items) this.add(it);
  }
}
