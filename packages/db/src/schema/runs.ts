/**
 * The run history of server tasks: one row per run (a transfer, or a verification comparing
 * source and target) with its figures, and the files it handled. JSON columns: counts, listed,
 * figures, error.
 */
export interface TaskRunsTable {
  id: string;
  task_id: string;
  user_id: string;
  /** The queue job of the run (a transfer's attempt, or the verification's job). */
  job_id: string | null;
  /** "transfer" or "verify". */
  kind: string;
  /** "manual", "schedule", "retry" or "resume". */
  trigger: string;
  /** null while running. */
  outcome: string | null;
  started_at: number;
  finished_at: number | null;
  /** Files by outcome, whole ({"added":3,...}). */
  counts: string;
  /** File rows kept by outcome (at most SKYFERRY_RUN_FILE_ROWS each). */
  listed: string;
  /** {"total_count","success_count","bytes","size","compared","same_by_hash","same_by_content","size_only"} */
  figures: string;
  /** {"code","message"} when the run stopped abnormally. */
  error: string | null;
}

/** One file a run handled, in the order the run reported it (`seq`): stored in blocks (below). */
export interface TaskRunFilesTable {
  run_id: string;
  seq: number;
  /** added, updated, deleted, conflict, skipped, failed, not_done; or a verification's finding. */
  outcome: string;
  /** "file" or "dir". */
  kind: string;
  /** "source" or "target". */
  side: string;
  path: string;
  other_path: string | null;
  size: number | null;
  reason: string | null;
  message: string | null;
}

/** Up to 500 files of one run and outcome in one row (packRunFiles in run-file-blocks.ts). */
export interface TaskRunFileBlocksTable {
  run_id: string;
  outcome: string;
  first_seq: number;
  last_seq: number;
  n: number;
  data: string;
}

export interface RunsTables {
  task_runs: TaskRunsTable;
  task_run_file_blocks: TaskRunFileBlocksTable;
}
