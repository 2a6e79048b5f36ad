import type { ConflictResolution, FileFilter, SameNamePolicy, SyncMode } from '@skyferry/contract';
import type { EntryKind, Hashes, Provider, ProviderErrorCode } from '@skyferry/providers';

/** What a run does: a migration (copy, never delete) or one of the four sync modes. */
export type TransferMode = 'migrate' | SyncMode;
export const TRANSFER_MODES: readonly TransferMode[] = ['migrate', 'one_way', 'mirror', 'incremental', 'two_way'];

/** The two clouds of a run. In a two-way sync both are read and written. */
export type Side = 'source' | 'target';

/**
 * What a plan item does. `mkdir` creates a folder; `conflict` is a two-way file changed on both
 * sides (with `PlanItem.conflict`), or a name the run cannot act on (without: a file and a folder of
 * one name, names differing only in case where a side ignores case, a name that is not valid
 * UTF-8), which the run reports as failed with its reason.
 */
export type PlanAction = 'copy' | 'update' | 'delete' | 'skip' | 'conflict' | 'mkdir';
export const PLAN_ACTIONS: readonly PlanAction[] = ['copy', 'update', 'delete', 'skip', 'conflict', 'mkdir'];

/** Why the planner chose an action. */
export type PlanReason =
  // copy
  | 'new'
  | 'changed_vs_deleted'
  // update
  | 'overwrite'
  | 'size_differs'
  | 'newer'
  | 'differs'
  | 'changed'
  // delete
  | 'extra_on_target'
  | 'deleted_on_other_side'
  // skip
  | 'exists'
  | 'same_size'
  | 'not_newer'
  | 'unchanged'
  // conflict without a resolution (was a skip): a file and a folder of one name
  | 'kind_mismatch'
  | 'symbolic_link'
  // conflict
  | 'both_changed'
  | 'both_new'
  // conflict without a resolution: a name the run cannot act on (reported as failed)
  | 'case_clash'
  | 'invalid_name'
  // mkdir
  | 'missing_folder';

/**
 * Why a symbolic link was left alone (`reason: 'symbolic_link'`): not followed (the default), or
 * it cannot be (it leads nowhere, round in a loop, or out of the side's root), or a delete would
 * have gone through it.
 */
export type LinkIssue = 'not_followed' | 'dangling' | 'loop' | 'outside' | 'through_link';

/** What the planner knew about one side's entry (kept small: plans may hold millions of items). */
export interface Fingerprint {
  size: number;
  /** Modification time in ms since the epoch, when the service reports one. */
  mtime?: number;
  hashes?: Hashes;
  /** The service's id (ID-based services). */
  id?: string;
  mimeType?: string;
  /** The source's `Entry.md5Hint`: passed to the writer, never compared. */
  md5Hint?: string;
}

/** Chosen outcome of a two-way conflict. */
export interface ConflictPlan {
  resolution: ConflictResolution;
  /** Whose version keeps the original name (keep_both) or overwrites the other (newer, larger, source). */
  winner: Side;
  /** keep_both only: the loser's new name, in the same folder on both sides afterwards. */
  loserName?: string;
}

/** One step of a plan, relative to a pair of roots (`plan.pairs[pair]`). */
export interface PlanItem {
  action: PlanAction;
  kind: EntryKind;
  /** Index into `plan.pairs`. */
  pair: number;
  /** Path below the pair's roots, starting with '/' ('/' is the pair root itself), as the source spells it. */
  rel: string;
  /** The path on the target where it spells the name otherwise (NFD there, NFC here; another case). */
  targetRel?: string;
  /**
   * The side that is changed: for copy/update the side bytes go to (read from the other one),
   * for delete/mkdir the side acted on. Migrations and one-way syncs always change the target.
   */
  side: Side;
  reason: PlanReason;
  /** Bytes that move (copy, update, conflict), or the bytes removed (delete) or left alone (skip). */
  size: number;
  /** The entry on the source side, when there is one. */
  source?: Fingerprint;
  /** The entry on the target side, when there is one. */
  target?: Fingerprint;
  /** Folder deletes of earlier plans: how many files went with the folder (a folder is now removed only when empty). */
  files?: number;
  conflict?: ConflictPlan;
  /** Skips of symbolic links (the side is the link's): why it was left alone. */
  link?: LinkIssue;
}

/** Source and target roots the items of a plan are relative to. */
export interface PlanPair {
  source: string;
  target: string;
}

export interface ActionTotals {
  count: number;
  bytes: number;
}

export type PlanSummary = Record<PlanAction, ActionTotals>;

/** A folder that could not be listed while planning; its contents are left alone. */
export interface PlanError {
  side: Side;
  path: string;
  code: ProviderErrorCode;
  message: string;
}

export interface PlanOptionsRecord {
  mode: TransferMode;
  sameNamePolicy: SameNamePolicy;
  filter: FileFilter | null;
  conflictResolution: ConflictResolution;
  sourcePaths: string[];
  targetPath: string;
  /** Symbolic links were followed (`PlanRequest.followLinks`). */
  followLinks?: boolean;
}

/**
 * What a run will do, computed before any byte moves. Plain JSON: a caller can store it, show it
 * (dry run) with `planPage`, and execute it later with `executePlan`.
 */
export interface TransferPlan {
  version: 1;
  /** 'full' from planTransfer; 'retry' from planRetry (sources are looked at again before copying). */
  kind: 'full' | 'retry';
  createdAt: number;
  options: PlanOptionsRecord;
  source: { kind: string; accountKey: string };
  target: { kind: string; accountKey: string };
  pairs: PlanPair[];
  items: PlanItem[];
  summary: PlanSummary;
  /** Bytes that will be written to each side (copy, update, conflict). */
  bytesTo: Record<Side, number>;
  /** Files that will be copied or updated (conflicts count once). */
  filesToTransfer: number;
  /** Files seen on each side under the roots (after the filter), for the deletion safety rule. */
  filesSeen: Record<Side, number>;
  /**
   * Deletion safety: a sync that would delete more than half of the files of a side needs
   * `confirmDeletes` to run.
   */
  deletes: {
    /** Delete items (files, and folders removed once emptied). */
    count: number;
    /** Files deleted, on both sides. */
    files: number;
    bytes: number;
    needsConfirmation: boolean;
    /** Per side: the files deleted there, of the files seen there. */
    sides: Record<Side, { files: number; of: number }>;
  };
  /** two_way: whether a previous successful run left state (false: this run is a merge that deletes nothing). */
  twoWay?: { firstRun: boolean };
  /**
   * one_way, incremental, mirror to a target that keeps no modification times: the run records
   * what both sides look like (in the state store) for the next run to tell what changed.
   */
  keepsRecord?: boolean;
  errors: PlanError[];
}

/** Progress of a run (the fields of the spec's server task progress, plus counts). */
export interface TransferProgress {
  phase: 'preparing' | 'transferring' | 'deleting' | 'finishing';
  /** 0-100, by bytes when there are bytes to move, else by items. */
  percentage: number;
  /** Bytes per second over the last few seconds. */
  speed: number;
  /** Bytes moved so far (including files finished by an earlier, interrupted attempt). */
  transferred: number;
  /** Bytes to move in total. */
  length: number;
  /** Seconds left at the current speed; null when unknown. */
  eta: number | null;
  finishedCounts: number;
  totalCounts: number;
  failedCounts: number;
  /**
   * True while the run is still finding what to do (it copies while it plans, folder by folder):
   * `totalCounts` and `length` are what it found so far and grow, and `percentage` and `eta` are of
   * that part only.
   */
  counting?: true;
}

/** Spec: "Loading N items" while planning. */
export interface ScanProgress {
  folders: number;
  files: number;
  bytes: number;
}

/** One file or folder a run could not handle; a retry sends only these. */
export interface FailedItem {
  /** The file as the spec's task result shows it: name and parent folder (where it was read from). */
  sourceFile: { name: string; parent: string };
  /** The cloud the file was read from (or, for deletes, acted on). */
  sourceSide: Side;
  /** The caller's id of that cloud (`ExecuteOptions.tokenIds`), the spec's source.token_id. */
  sourceTokenId?: string;
  /**
   * A ProviderErrorCode, or an engine reason: 'source_changed' (the source file changed while it
   * was copied: not retried, the next run copies the new version), 'verify_failed', 'skipped_after_failure'.
   */
  reason: string;
  message: string;
  /** A stopped run did not get to it (canceled, out of space or traffic): not a failure of its own. */
  notDone?: true;
  /**
   * A name the run cannot act on (`reason` kind_mismatch, case_clash or invalid_name): left alone,
   * listed here with its reason for the user to resolve (a retry looks at it again), counted as a
   * conflict, not a failure.
   */
  conflict?: true;
  item: PlanItem;
  pair: PlanPair;
}

/** An item a run left alone on purpose, and why (it is no failure: nothing could be lost by doing it). */
export interface SkippedItem {
  item: PlanItem;
  /**
   * not_empty: a folder to remove holds something the plan did not judge (saved there meanwhile);
   * changed_since_planned: a file to delete changed after the plan was made.
   */
  reason: 'not_empty' | 'changed_since_planned';
  message: string;
}

/**
 * How a run ended. `success`, `partial`, `failed`, `canceled` as in the spec; the others stop a
 * run and name why, so a task can show state 6 (insufficient_space) or 10 (traffic_exceeded).
 */
export type TransferOutcome =
  | 'success'
  | 'partial'
  | 'failed'
  | 'canceled'
  | 'insufficient_space'
  | 'traffic_exceeded'
  | 'needs_delete_confirmation';

/**
 * What became of each file of the run (of its first attempt's plan, for a run resumed after a
 * crash): every file is exactly one of added, updated, deleted, skipped, conflicts, failed, or (a
 * stopped run) notDone.
 */
export interface ResultSummary {
  added: number;
  updated: number;
  deleted: number;
  skipped: number;
  /** Conflicts resolved, and names the run could not act on (`FailedItem.conflict`). */
  conflicts: number;
  /** Files that failed (`result.failed` without the not-done and conflict entries). */
  failed: number;
  /** Files a stopped run (canceled, out of space or traffic) did not get to. */
  notDone: number;
  /** Finished by an earlier interrupted attempt of the same run (from checkpoints). */
  resumed: number;
  /**
   * Finished by an earlier attempt, but no longer so on the target (removed, cut short, or back
   * since): done again by this run and counted as its own.
   */
  redone: number;
}

/** A summary of nothing done yet. */
export function emptyResultSummary(): ResultSummary {
  return { added: 0, updated: 0, deleted: 0, skipped: 0, conflicts: 0, failed: 0, notDone: 0, resumed: 0, redone: 0 };
}

export interface TransferResult {
  outcome: TransferOutcome;
  /** Items that succeeded (copies, updates, deletes, conflicts; those of earlier attempts included). */
  successCount: number;
  /** Items the run had to do (skips not included). */
  totalCount: number;
  /** Bytes of the files the run had to move. */
  totalSize: number;
  /** Bytes actually moved by this process (server-side copies included). */
  transferredBytes: number;
  /** Bytes moved by earlier, interrupted attempts of this run (the files it resumed from checkpoints). */
  resumedBytes?: number;
  timeTakenMs: number;
  startedAt: number;
  finishedAt: number;
  source: { kind: string; paths: string[] };
  target: { kind: string; path: string };
  failed: FailedItem[];
  /** Items left alone on purpose, with the reason. */
  skipped?: SkippedItem[];
  summary: ResultSummary;
  /** insufficient_space and traffic_exceeded: bytes the rest of the run needs. */
  neededBytes?: number;
  /** insufficient_space: the side that is full. */
  fullSide?: Side;
  /** A fatal error that stopped the run (auth expired, quota, ...). */
  error?: { code: string; message: string };
  /** two_way: whether this run's state became the base of the next run. */
  twoWayStateCommitted?: boolean;
  /**
   * What the run left alone for a reason the user should see (symbolic links), each with that
   * reason; also counted in `summary.skipped`. The outcome does not change for them.
   */
  setAside?: SetAsideItem[];
}

/** An item a run left alone (see `TransferResult.setAside`). */
export interface SetAsideItem {
  side: Side;
  path: string;
  kind: EntryKind;
  reason: 'symbolic_link';
  detail: LinkIssue;
}

/** The two providers of a run. */
export interface Endpoints {
  source: Provider;
  target: Provider;
}
