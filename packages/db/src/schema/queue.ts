/** A job of the durable queue. `state` is waiting | active | completed | failed | canceled. */
export interface JobsTable {
  queue: string;
  id: string;
  /** The job's payload, JSON. */
  data: string;
  /** Concurrency group (the user id for tasks); null when the job has none. */
  grp: string | null;
  state: string;
  /** Earliest start, ms. */
  run_at: number;
  /** Starts so far, the current one included. */
  attempts: number;
  max_attempts: number;
  /** The lease token of the worker running the job. */
  lease_owner: string | null;
  lease_expires_at: number | null;
  cancel_requested: number;
  error: string | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
}

export interface QueueTables {
  jobs: JobsTable;
}
