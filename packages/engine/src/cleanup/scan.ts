import { LARGE_FILE_THRESHOLD_DEFAULT } from '@skyferry/contract';
import { canceled, cleanPath } from '@skyferry/providers';
import { Semaphore } from '../util.ts';
import { EDGE_BYTES_DEFAULT, findDuplicates, toScanned, type DuplicateCounters } from './duplicates.ts';
import { findEmptyFolders } from './empty-folders.ts';
import {
  CLEANUP_MODE_ALL,
  CleanupMode,
  type CleanupPhase,
  type CleanupScanRequest,
  type CleanupScanResult,
  type EmptyFolder,
  type ScannedFile,
} from './types.ts';
import { walkTree } from './walk.ts';

function bySizeThenPath(a: ScannedFile, b: ScannedFile): number {
  return b.size - a.size || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
}

/**
 * Scans a cloud folder for clutter: empty folders, duplicate files and large files (the modes
 * bit set). Lists the tree once, then reads only what it must to tell duplicates apart. Reports
 * progress through `onProgress` and stops with a `canceled` ProviderError when the signal aborts.
 */
export async function scanForCleanup(req: CleanupScanRequest): Promise<CleanupScanResult> {
  const started = Date.now();
  const root = cleanPath(req.root ?? '/');
  const modes = (req.modes ?? CLEANUP_MODE_ALL) & CLEANUP_MODE_ALL;
  const largeThreshold = req.largeThreshold ?? LARGE_FILE_THRESHOLD_DEFAULT;
  const { provider, signal } = req;
  let phase: CleanupPhase = 'listing';
  let listed = { folders: 0, files: 0, bytes: 0 };
  let current = root;
  const counters: DuplicateCounters = {
    planned: 0,
    read: 0,
    reads: 0,
    current: '',
    settledByServiceHash: 0,
    partiallyRead: 0,
    fullyRead: 0,
  };
  const report = () =>
    req.onProgress?.({
      phase,
      ...listed,
      current: phase === 'hashing' && counters.current ? counters.current : current,
      hashBytesPlanned: counters.planned,
      hashBytesRead: counters.read,
    });
  const check = () => {
    if (signal?.aborted) throw canceled();
  };

  report();
  const walk = await walkTree(provider, root, {
    signal,
    concurrency: req.listConcurrency ?? 8,
    onFolder: (path, folders, files, bytes) => {
      current = path;
      listed = { folders, files, bytes };
      report();
    },
  });
  listed = {
    folders: walk.folders.size,
    files: walk.files.length,
    bytes: walk.files.reduce((n, f) => n + f.size, 0),
  };
  check();

  let emptyFolders: EmptyFolder[] = [];
  let emptyFolderTotal = 0;
  if (modes & CleanupMode.emptyFolders) {
    const found = findEmptyFolders(root, walk);
    emptyFolders = found.folders;
    emptyFolderTotal = found.total;
  }

  const largeFiles =
    modes & CleanupMode.largeFiles
      ? walk.files
          .filter((f) => f.size >= largeThreshold)
          .map(toScanned)
          .sort(bySizeThenPath)
      : [];

  const errors = [...walk.errors];
  let duplicateGroups: CleanupScanResult['duplicateGroups'] = [];
  if (modes & CleanupMode.duplicates) {
    phase = 'hashing';
    report();
    duplicateGroups = await findDuplicates({
      provider,
      files: walk.files,
      signal,
      readConcurrency: req.readConcurrency ?? 8,
      edgeBytes: req.edgeBytes ?? EDGE_BYTES_DEFAULT,
      counters,
      errors,
      onProgress: report,
    });
  }
  check();

  phase = 'finishing';
  report();
  // Object stores list their own upload time; the time a file was given lives in its metadata.
  if (provider.features.bucketBased && provider.features.setModTime) {
    const stats = new Semaphore(req.listConcurrency ?? 8);
    const results = [...largeFiles, ...duplicateGroups.flatMap((g) => g.files)];
    await Promise.all(
      results.map((f) =>
        stats.with(async () => {
          check();
          try {
            const st = await provider.stat(f.path, { signal });
            if (st.modTime) f.modTime = st.modTime.getTime();
          } catch {
            // keep the listed time
          }
        }),
      ),
    );
    check();
  }

  return {
    root,
    modes,
    largeThreshold,
    emptyFolders,
    emptyFolderTotal,
    duplicateGroups,
    largeFiles,
    stats: {
      ...listed,
      bytesRead: counters.read,
      reads: counters.reads,
      durationMs: Date.now() - started,
      settledByServiceHash: counters.settledByServiceHash,
      partiallyRead: counters.partiallyRead,
      fullyRead: counters.fullyRead,
    },
    errors,
  };
}
