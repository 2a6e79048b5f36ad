import type { ConflictResolution, FileFilter, SameNamePolicy } from '@skyferry/contract';
import type { Provider } from '@skyferry/providers';
import type { TwoWayStateStore } from '../stores.ts';
import type { ScanProgress, TransferMode } from '../types.ts';

export interface PlanRequest {
  source: Provider;
  target: Provider;
  mode: TransferMode;
  /**
   * migrate: the selected files and folders; each is copied into `targetPath` under its own name
   * (`/` copies the contents of the root). Sync modes: exactly one folder, whose contents are paired
   * with `targetPath`.
   */
  sourcePaths: string[];
  targetPath: string;
  /** Same-name policy for migrate, one_way and incremental (mirror and two_way ignore it). Default size_differs_or_newer. */
  sameNamePolicy?: SameNamePolicy;
  filter?: FileFilter | null;
  /** two_way: how a file changed on both sides is resolved. Default keep_both. */
  conflictResolution?: ConflictResolution;
  /** two_way: the previous run's state (required for two_way). */
  twoWayState?: TwoWayStateStore;
  /**
   * two_way: start over as if there were no previous state (a merge that deletes nothing). The only
   * way past a side that is missing or lists no file where the last run left files.
   */
  resync?: boolean;
  signal?: AbortSignal;
  /** Called while listing ("Loading N items"), at most every 250 ms and once at the end. */
  onScan?: (progress: ScanProgress) => void;
  /** Folder listings in flight at once. Default 8. */
  listConcurrency?: number;
  /** Keep skip items in the plan (counts are always kept). Default true; two_way always keeps them. */
  keepSkipped?: boolean;
  /**
   * The plan keeps no items (but links left alone), only its figures: counts, the bytes each side
   * needs and the deletions. What the checks before a run read (space, deletions to confirm), in
   * memory that follows the folders being listed, not the tree. A two_way plan still holds its
   * items until its walk ends.
   */
  countOnly?: boolean;
  /**
   * Labels of the sides in conflict copies' names ("report (conflict 2026-11-28 from laptop).txt"):
   * short, like a cloud's alias or kind; made portable and cut to 24 characters. Default
   * 'source'/'target'; sides labelled alike are told apart by their folders' names.
   */
  sideNames?: { source: string; target: string };
  /** Date (UTC) written into conflict names. Default now. */
  now?: Date;
  /** Retries of listings and stats that fail with a `retry`-class error. Defaults: 6 retries, 200 ms, 8 s. */
  retries?: { retries?: number; minSleepMs?: number; maxSleepMs?: number };
  /** Follow symbolic links (inside each side's root, never round a loop); default: set aside and report them (links.ts). */
  followLinks?: boolean;
  /**
   * migrate, one_way, mirror (rclone's --checksum): files of one size are the same when a hash both
   * sides give (listed or computed) is equal, whatever their times; without a common hash, by size.
   */
  checksum?: boolean;
}
