import {
  CLOUD_KIND_INFO,
  FILTER_CATEGORIES,
  TaskState,
  type CloudKindInfo,
  type FailedFile,
  type FileFilter,
  type FilterCategory,
  type SameNamePolicy,
  type Schedule,
  type ServerTask,
  type SyncMode,
  type TaskCloud,
  type TaskProgress,
  type TaskResult,
} from '@skyferry/contract';
import type { FailedFileRow, TaskRow } from '../../repositories/tasks.ts';
import type { ProgressSnapshot } from '../../repositories/task-progress.ts';
import type { CloudRecord } from '../clouds.ts';

/** The JSON columns of a task row, parsed. */
export interface TaskSource {
  cloud_id: string;
  paths: string[];
  /** A move: the sources are deleted once checked on the target (migrations only). */
  move?: boolean;
}
export interface TaskTarget {
  cloud_id: string;
  path: string;
}

export function parseSource(row: TaskRow): TaskSource {
  return JSON.parse(row.from_cloud) as TaskSource;
}
export function parseTarget(row: TaskRow): TaskTarget {
  return JSON.parse(row.to_cloud) as TaskTarget;
}

const MEDIA: readonly FilterCategory[] = ['picture', 'video'];

/** The filter of a task whose target is a photos cloud: only pictures and videos, within the user's filter; null when none is left. */
export function narrowToMedia(filter: FileFilter | null): FileFilter | null {
  let categories: FilterCategory[];
  if (!filter) categories = [...MEDIA];
  else if (filter.mode === 'include') categories = filter.categories.filter((c) => MEDIA.includes(c));
  else categories = MEDIA.filter((c) => !filter.categories.includes(c));
  if (categories.length === 0) return null;
  return { mode: 'include', categories: FILTER_CATEGORIES.filter((c) => categories.includes(c)) };
}

export function kindInfo(kind: string): CloudKindInfo | undefined {
  return (CLOUD_KIND_INFO as Record<string, CloudKindInfo | undefined>)[kind];
}

/** How a cloud is named to the user: its alias, else the kind's name, with the account. */
export function cloudLabel(cloud: CloudRecord | undefined): string {
  if (!cloud) return '?';
  const name = cloud.alias || kindInfo(cloud.kind)?.displayName || cloud.kind;
  return cloud.cloudAccount ? `${name} (${cloud.cloudAccount})` : name;
}

export function taskCloud(cloudId: string, cloud: CloudRecord | undefined): TaskCloud {
  return {
    cloud_id: cloudId,
    cloud_name: cloud?.kind ?? '',
    cloud_alias_name: cloud?.alias ?? '',
    cloud_account: cloud?.cloudAccount ?? '',
  };
}

const IDLE: TaskProgress = { percentage: 0, speed: 0, transferred: 0, length: 0, eta: null };

/**
 * States whose progress is the worker's live one: scanning and running, and stopping after a
 * cancel (9), which keeps the progress it had until its worker has stopped.
 */
export function showsLiveProgress(state: number): boolean {
  return state === TaskState.scanning || state === TaskState.running || state === TaskState.waitingNoCancel;
}

/** A task's progress: live while it runs (1, 2) or stops (9), else what the row says about its last run. */
export function progressOf(row: TaskRow, live: ProgressSnapshot | undefined): TaskProgress {
  if (showsLiveProgress(row.state) && live) return live.progress;
  if (row.state === TaskState.completed) {
    return { percentage: 100, speed: 0, transferred: row.usage, length: row.size, eta: 0 };
  }
  if (row.finished_at !== null && row.size > 0) {
    const percentage = Math.round((Math.min(row.usage, row.size) / row.size) * 10_000) / 100;
    return { percentage, speed: 0, transferred: row.usage, length: row.size, eta: null };
  }
  return IDLE;
}

export function countsOf(row: TaskRow, live: ProgressSnapshot | undefined): { total: number; finished: number } {
  if (showsLiveProgress(row.state) && live) {
    return { total: live.totalCounts, finished: live.finishedCounts };
  }
  return { total: row.total_counts, finished: row.finished_counts };
}

export function toServerTask(
  row: TaskRow,
  clouds: ReadonlyMap<string, CloudRecord>,
  live: ProgressSnapshot | undefined,
  now: number,
): ServerTask {
  const source = parseSource(row);
  const target = parseTarget(row);
  const counts = countsOf(row, live);
  const running = showsLiveProgress(row.state);
  const destination = taskCloud(target.cloud_id, clouds.get(target.cloud_id));
  return {
    id: row.id,
    task_id: row.id,
    task_name: row.task_name,
    task_type: row.task_type,
    from_cloud: { ...taskCloud(source.cloud_id, clouds.get(source.cloud_id)), paths: source.paths },
    to_cloud: { ...destination, path: target.path },
    sync_mode: (row.sync_mode as SyncMode | null) ?? null,
    same_name_policy: row.same_name_policy as SameNamePolicy,
    filter: row.filter ? (JSON.parse(row.filter) as FileFilter) : null,
    conflict_resolution: row.conflict_resolution as ServerTask['conflict_resolution'],
    google_docs: row.google_docs === 'skip' ? 'skip' : 'export',
    follow_links: row.follow_links === 1,
    move: source.move === true,
    schedule: row.schedule ? (JSON.parse(row.schedule) as Schedule) : null,
    time_zone: row.time_zone,
    state: row.state,
    is_schedule: row.is_schedule,
    next_run_time: row.next_run_time,
    duration: running && row.started_at !== null ? Math.max(0, now - row.started_at) : row.duration,
    size: running && live ? live.progress.length : row.size,
    usage: running && live ? live.progress.transferred : row.usage,
    needed_size: row.needed_size,
    total_counts: counts.total,
    finished_counts: counts.finished,
    progress: progressOf(row, live),
    destination_clouds: [destination],
    result: row.result ? resultOf(row.result) : null,
    created_at: row.created_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
  };
}

/** A stored result; results written before conflicts and not-done files were counted read 0 for them. */
export function resultOf(json: string): TaskResult {
  return { conflicts: 0, not_done: 0, ...(JSON.parse(json) as Partial<TaskResult>) } as TaskResult;
}

export function toFailedFile(row: FailedFileRow): FailedFile {
  return {
    sourceFile: { name: row.name, parent: row.parent },
    source: { token_id: row.token_id ?? '' },
    reason: row.reason,
    message: row.message,
  };
}
