import type { CleanupCategory } from '@skyferry/contract';
import type { HashType, Provider, ProviderErrorCode } from '@skyferry/providers';

/** The scan modes, a bit set (DECISIONS): 1 empty folders, 2 duplicate files, 4 large files. */
export const CleanupMode = { emptyFolders: 1, duplicates: 2, largeFiles: 4 } as const;
export const CLEANUP_MODE_ALL = 7;

export type FileCategory = Exclude<CleanupCategory, 'all'>;

/** A file a scan reports (a duplicate or a large file). */
export interface ScannedFile {
  path: string;
  size: number;
  /** Modification time in ms since the epoch; null when the service reports none. */
  modTime: number | null;
  category: FileCategory;
}

/** The top-most folder of an empty subtree: nothing below it but empty folders. */
export interface EmptyFolder {
  path: string;
  modTime: number | null;
  /** Empty folders inside it (not counting itself). */
  nestedCount: number;
}

/** Files with the same content. */
export interface DuplicateGroup {
  /** The content key: the service's hash (`<type>:<hex>`) or Skyferry's own (`sha256:<hex>` over segment hashes). */
  key: string;
  /** How sameness was established: a hash the service reported for every member, or the bytes read. */
  method: 'service_hash' | 'content';
  hashType: HashType | 'sha256';
  size: number;
  /** In path order. */
  files: ScannedFile[];
}

export type CleanupPhase = 'listing' | 'hashing' | 'finishing';

export interface CleanupScanProgress {
  phase: CleanupPhase;
  folders: number;
  files: number;
  /** Bytes of the files listed. */
  bytes: number;
  /** The folder being listed or the file being read. */
  current: string;
  /** Bytes the duplicate check has planned to read so far, and has read. */
  hashBytesPlanned: number;
  hashBytesRead: number;
}

export interface CleanupScanError {
  path: string;
  code: ProviderErrorCode;
  message: string;
}

export interface CleanupScanStats {
  folders: number;
  files: number;
  bytes: number;
  /** File content bytes read to tell duplicates apart. */
  bytesRead: number;
  /** Ranged or whole reads issued. */
  reads: number;
  durationMs: number;
  /** Same-size candidates settled by a service hash, by reading the first and last bytes, and by reading everything. */
  settledByServiceHash: number;
  partiallyRead: number;
  fullyRead: number;
}

export interface CleanupScanResult {
  root: string;
  modes: number;
  largeThreshold: number;
  /** Top-most empty folders, in path order. */
  emptyFolders: EmptyFolder[];
  /** Every empty folder, nested ones included (what removing them all removes). */
  emptyFolderTotal: number;
  /** Largest files first. */
  duplicateGroups: DuplicateGroup[];
  /** Largest first. */
  largeFiles: ScannedFile[];
  stats: CleanupScanStats;
  /** Folders that could not be listed and files that could not be read (skipped, never reported as clutter). */
  errors: CleanupScanError[];
}

export interface CleanupScanRequest {
  provider: Provider;
  /** Folder to scan (default "/"). */
  root?: string;
  /** Bit set of CleanupMode (default 7). */
  modes?: number;
  /** Files of at least this many bytes are large (default 100 MB). */
  largeThreshold?: number;
  signal?: AbortSignal;
  /** Called often; throttle on the caller's side. */
  onProgress?: (progress: CleanupScanProgress) => void;
  /** Folder listings at once (default 8). */
  listConcurrency?: number;
  /** File reads at once (default 8). */
  readConcurrency?: number;
  /** Bytes read at each end of a file before reading it all (default 64 KiB). */
  edgeBytes?: number;
}
