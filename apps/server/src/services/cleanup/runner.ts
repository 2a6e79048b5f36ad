import { CleanupStatus } from '@skyferry/contract';
import { scanForCleanup, type CleanupScanProgress, type CleanupScanResult, type EmptyFolder } from '@skyferry/engine';
import { baseName, toProviderError, type Provider } from '@skyferry/providers';
import { abortReasonOf, JobAbortedError, type RunningJob } from '@skyferry/queue';
import type { Logger } from 'pino';
import { ApiError } from '../../http/errors.ts';
import type { CleanupRepository, CleanupTaskPatch, NewCleanupItemRow } from '../../repositories/cleanup.ts';
import { refusesCredentials, type CloudsService } from '../clouds.ts';
import { newId } from '../crypto.ts';
import type { CleanupJob } from './cleanup-service.ts';

export interface CleanupRunnerOptions {
  repo: CleanupRepository;
  clouds: CloudsService;
  log: Logger;
  /** How often live progress is written (default 1 s). */
  progressEveryMs?: number;
}

/** The rows a finished scan stores: empty folders, duplicate group members, large files, each ranked. */
export function resultRows(taskId: string, r: CleanupScanResult): NewCleanupItemRow[] {
  const rows: NewCleanupItemRow[] = [];
  const base = { task_id: taskId, deleted: 0, group_id: null, group_hash: null, nested_count: 0 };
  // Default order (what a free user sees first): the empty folders holding most, largest files and groups.
  const empties = [...r.emptyFolders].sort(
    (a: EmptyFolder, b: EmptyFolder) => b.nestedCount - a.nestedCount || (a.path < b.path ? -1 : 1),
  );
  empties.forEach((f, i) =>
    rows.push({
      ...base,
      id: newId(),
      kind: 'empty',
      path: f.path,
      name: baseName(f.path),
      size: 0,
      modified: f.modTime,
      category: 'other',
      nested_count: f.nestedCount,
      ordinal: i + 1,
    }),
  );
  r.duplicateGroups.forEach((g, i) => {
    const groupId = newId();
    for (const f of g.files) {
      rows.push({
        ...base,
        id: newId(),
        kind: 'duplicate',
        path: f.path,
        name: baseName(f.path),
        size: f.size,
        modified: f.modTime,
        category: f.category,
        group_id: groupId,
        group_hash: g.key,
        ordinal: i + 1,
      });
    }
  });
  r.largeFiles.forEach((f, i) =>
    rows.push({
      ...base,
      id: newId(),
      kind: 'large',
      path: f.path,
      name: baseName(f.path),
      size: f.size,
      modified: f.modTime,
      category: f.category,
      ordinal: i + 1,
    }),
  );
  return rows;
}

/** Why a scan could not run, as the task shows it. */
function failure(err: unknown): { code: string; message: string } {
  if (err instanceof ApiError) {
    return { code: err.key === 'cloud_auth_expired' ? 'auth_expired' : 'cloud_not_found', message: err.key };
  }
  const e = toProviderError(err);
  return { code: e.code, message: e.message };
}

/**
 * The job handler of a scan: opens the cloud for the scan's owner, scans with live progress
 * written about once a second, and stores the results. A cancel (status 4 set by the API) aborts
 * the scan; a shutdown or lost lease hands the job back so another worker scans again.
 */
export class CleanupRunner {
  private readonly o: CleanupRunnerOptions;

  constructor(options: CleanupRunnerOptions) {
    this.o = options;
  }

  readonly handle = async (job: RunningJob<CleanupJob>): Promise<void> => {
    const { repo, clouds, log } = this.o;
    const { taskId, owner } = job.data;
    const row = await repo.getById(taskId);
    if (!row || row.job_id !== job.id || row.status !== CleanupStatus.scanning) return;
    const startedAt = Date.now();
    if (
      !(await repo.transition(
        taskId,
        [CleanupStatus.scanning],
        { started_at: startedAt, phase: 'listing', updated_at: startedAt },
        job.id,
      ))
    ) {
      return;
    }
    const identity = 'userId' in owner ? { kind: 'user' as const, ...owner } : { kind: 'visitor' as const, ...owner };
    let provider: Provider | undefined;
    let latest: CleanupScanProgress | undefined;
    let written = 0;
    let writing: Promise<void> = Promise.resolve();
    const every = this.o.progressEveryMs ?? 1000;
    const write = (p: CleanupScanProgress) => {
      const patch: CleanupTaskPatch = {
        phase: p.phase,
        filename: p.current,
        total_count: p.files,
        folder_count: p.folders,
        total_size: p.bytes,
        bytes_read: p.hashBytesRead,
        bytes_planned: p.hashBytesPlanned,
        updated_at: Date.now(),
      };
      writing = writing
        .then(() => repo.transition(taskId, [CleanupStatus.scanning], patch, job.id))
        .then(
          () => undefined,
          (err: unknown) => log.warn({ err, cleanup: taskId }, 'clean-up progress not written'),
        );
    };
    let phase = '';
    const onProgress = (p: CleanupScanProgress) => {
      latest = p;
      const t = Date.now();
      // A new phase shows at once; counts at most once per `every`.
      if (t - written < every && p.phase === phase) return;
      phase = p.phase;
      written = t;
      write(p);
    };

    let result: CleanupScanResult | undefined;
    let error: { code: string; message: string } | undefined;
    try {
      const opened = await clouds.open(identity, row.cloud_id);
      provider = opened.provider;
      await repo.transition(
        taskId,
        [CleanupStatus.scanning],
        { has_trash: provider.trash ? 1 : 0, updated_at: Date.now() },
        job.id,
      );
      result = await scanForCleanup({
        provider,
        root: row.path,
        modes: row.imode,
        largeThreshold: row.large_threshold,
        signal: job.signal,
        onProgress,
      });
    } catch (err) {
      error = failure(err);
      if (refusesCredentials(err)) await clouds.markExpired(row.cloud_id);
    } finally {
      await provider?.close?.().catch(() => undefined);
    }
    await writing;

    const reason = abortReasonOf(job.signal);
    if (reason === 'canceled') return; // the API has set status 4 already
    if (reason) {
      log.info({ cleanup: taskId, reason }, 'clean-up scan interrupted');
      throw new JobAbortedError(reason);
    }
    const now = Date.now();
    if (!result) {
      log.info({ cleanup: taskId, error }, 'clean-up scan failed');
      const last = latest;
      await repo.transition(
        taskId,
        [CleanupStatus.scanning],
        {
          status: CleanupStatus.failed,
          phase: null,
          finished_at: now,
          updated_at: now,
          error: JSON.stringify(error ?? { code: 'internal', message: 'scan failed' }),
          ...(last ? { total_count: last.files, folder_count: last.folders, total_size: last.bytes } : {}),
        },
        job.id,
      );
      return;
    }
    const stored = await repo.complete(
      taskId,
      resultRows(taskId, result),
      {
        status: CleanupStatus.completed,
        phase: null,
        filename: '',
        total_count: result.stats.files,
        folder_count: result.stats.folders,
        total_size: result.stats.bytes,
        bytes_read: result.stats.bytesRead,
        bytes_planned: result.stats.bytesRead,
        error_count: result.errors.length,
        finished_at: now,
        updated_at: now,
      },
      job.id,
    );
    log.info(
      {
        cleanup: taskId,
        stored,
        files: result.stats.files,
        bytesRead: result.stats.bytesRead,
        groups: result.duplicateGroups.length,
        empty: result.emptyFolderTotal,
        large: result.largeFiles.length,
        ms: result.stats.durationMs,
      },
      'clean-up scan finished',
    );
  };
}
