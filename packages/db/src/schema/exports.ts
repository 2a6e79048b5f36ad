/** A file written into a cloud for its owner (migration 0017); see the migration for the columns. */
export interface ExportTasksTable {
  id: string;
  user_id: string | null;
  visitor_id: string | null;
  cloud_id: string;
  path: string;
  file_name: string;
  size: number;
  transferred: number;
  /** 0 waiting or running, 1 success, -2 failure. */
  status: number;
  error_code: number | null;
  error_key: string | null;
  /** JSON of the message's parameters. */
  error_params: string | null;
  created_at: number;
  updated_at: number;
}

/** The WOPI lock of one document (migration 0017). */
export interface WopiLocksTable {
  file_id: string;
  lock_id: string;
  expires_at: number;
}

export interface ExportsTables {
  export_tasks: ExportTasksTable;
  wopi_locks: WopiLocksTable;
}
