/** A clean-up scan of one cloud folder, owned by a user or a visitor. */
export interface CleanupTasksTable {
  id: string;
  user_id: string | null;
  visitor_id: string | null;
  /** Skyferry's id of the connected cloud. */
  cloud_id: string;
  path: string;
  /** Bit set: 1 empty folders, 2 duplicate files, 4 large files. */
  imode: number;
  large_threshold: number;
  /** 0 completed, 1 scanning, 3 failed, 4 canceled. */
  status: number;
  /** waiting, listing, hashing, finishing; null once finished. */
  phase: string | null;
  /** The folder being listed or the file being read. */
  filename: string;
  total_count: number;
  folder_count: number;
  total_size: number;
  bytes_read: number;
  bytes_planned: number;
  /** 1 when deleting moves results to the cloud's trash. */
  has_trash: number;
  error_count: number;
  /** {"code","message"} of a failed scan. */
  error: string | null;
  job_id: string | null;
  started_at: number | null;
  finished_at: number | null;
  created_at: number;
  updated_at: number;
  /** A deletion of this scan's results holds the row until then (ms); null when none runs. */
  deleting_until: number | null;
  /** The token of the deletion holding the row. */
  deleting_by: string | null;
}

/** A result of a scan: an empty folder, a member of a duplicate group, or a large file. */
export interface CleanupItemsTable {
  id: string;
  task_id: string;
  /** empty, duplicate or large. */
  kind: string;
  path: string;
  name: string;
  size: number;
  modified: number | null;
  /** video, audio, document, picture, other. */
  category: string;
  /** Empty folders: empty folders inside. */
  nested_count: number;
  /** Duplicates: the group and its content hash. */
  group_id: string | null;
  group_hash: string | null;
  /** Rank in the default order (largest first) within its kind; duplicates rank by group. */
  ordinal: number;
  deleted: number;
}

export interface CleanupTables {
  cleanup_tasks: CleanupTasksTable;
  cleanup_items: CleanupItemsTable;
}
