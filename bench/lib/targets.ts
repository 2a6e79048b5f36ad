/**
 * One row of the providers benchmark: a server on 127.0.0.1 (or a folder) reached both by a
 * Skyferry backend and by `rclone` configured on the command line, so both copy to the same place.
 */
export interface BenchTarget {
  name: string;
  start(): Promise<RunningTarget>;
}

export interface RunningTarget {
  /** Skyferry cloud kind and its form credentials, as `openProvider` takes them. */
  kind: string;
  credentials: Record<string, unknown>;
  /** Local roots for the local kind. */
  localRoots?: string[];
  /** Folder (cloud path) the benchmark writes into; created by the benchmark. */
  dir: string;
  /** The same folder for rclone: an on-the-fly remote (":s3:bucket/dir") or a local path, plus flags. */
  rclone: { remote: string; flags: string[]; env?: Record<string, string> };
  stop(): Promise<void>;
}
