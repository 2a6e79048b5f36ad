import type { Generated } from 'kysely';

/** A server task (migrate or sync). JSON columns: from_cloud, to_cloud, filter, schedule, result. */
export interface TasksTable {
  id: string;
  user_id: string;
  task_name: string;
  /** 0 migrate, 1 sync. */
  task_type: number;
  /** {"cloud_id","paths":[...]} */
  from_cloud: string;
  /** {"cloud_id","path"} */
  to_cloud: string;
  sync_mode: string | null;
  same_name_policy: string;
  filter: string | null;
  conflict_resolution: string;
  /** Google Docs from a Google Drive source: "export" (to Office or PDF files) or "skip". */
  google_docs: Generated<string>;
  /** 1: runs follow symbolic links; 0: each is left alone and reported. */
  follow_links: Generated<number>;
  schedule: string | null;
  /** IANA zone the schedule is read in. */
  time_zone: string;
  /** 1 off, 2 on. */
  is_schedule: number;
  next_run_time: number | null;
  /** 0-10, spec section 4. */
  state: number;
  /** ms of the last run. */
  duration: Generated<number>;
  /** Bytes the last run had to move. */
  size: Generated<number>;
  /** Bytes moved (and charged) by the last run. */
  usage: Generated<number>;
  total_counts: Generated<number>;
  finished_counts: Generated<number>;
  /** Bytes needed to go on (states 6 and 10). */
  needed_size: number | null;
  /** The last run's outcome and figures, JSON. */
  result: string | null;
  /** What the next run does: "full", "retry" (only the failed part) or "resync" (a two-way merge, past the missing or emptied side rail). */
  run_mode: Generated<string>;
  confirm_deletes: Generated<number>;
  job_id: string | null;
  run_count: Generated<number>;
  started_at: number | null;
  finished_at: number | null;
  created_at: number;
  updated_at: number;
}

/** Live progress of a running task, written about once a second by the worker. */
export interface TaskProgressTable {
  task_id: string;
  state: number;
  /** {"percentage","speed","transferred","length","eta"} */
  progress: string;
  total_counts: number;
  finished_counts: number;
  updated_at: number;
}

/** Files the last run could not handle; a retry sends only these. `item` is the engine's FailedItem. */
export interface TaskFailedFilesTable {
  task_id: string;
  seq: number;
  name: string;
  parent: string;
  token_id: string | null;
  reason: string;
  message: string;
  item: string;
}

/** Files a run finished, so a run resumed on another worker does not copy them again. */
export interface TaskCheckpointsTable {
  task_id: string;
  key: string;
  info: string;
}

/** Two-way sync state: "current" (after the last successful run) and "staged" (the run going on). */
export interface TaskSyncStateTable {
  task_id: string;
  generation: string;
  dir: string;
  rel: string;
  record: string;
}

/** One run of a pair of folders at a time, across every worker process: a lease per pair. */
export interface SyncPairLocksTable {
  pair_key: string;
  /** The holding run's token. */
  owner: string;
  task_id: string;
  acquired_at: number;
  /** ms; past it the holder is taken for dead. */
  expires_at: number;
}

export interface TasksTables {
  tasks: TasksTable;
  task_progress: TaskProgressTable;
  task_failed_files: TaskFailedFilesTable;
  task_checkpoints: TaskCheckpointsTable;
  task_sync_state: TaskSyncStateTable;
  sync_pair_locks: SyncPairLocksTable;
}
