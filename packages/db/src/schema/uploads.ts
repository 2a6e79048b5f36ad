/** An open resumable upload and the API process holding it (migration 0019). */
export interface UploadSessionsTable {
  id: string;
  /** `u:<userId>` or `v:<visitorId>`. */
  owner: string;
  /** How the other API processes reach the one holding the session's write. */
  process_url: string;
  /** ms; past it the session is gone. */
  expires_at: number;
}

export interface UploadsTables {
  upload_sessions: UploadSessionsTable;
}
