import {
  CleanupStatus,
  type CleanupKind,
  type CleanupStage,
  type CleanupTask,
  type DeleteCleanupBody,
  type DeleteCleanupData,
  type RunCleanupBody,
} from '@skyferry/contract';
import { ApiRequestError } from '../../api/client.ts';
import { createStore, useStore } from '../../lib/store.ts';
import { slimApi } from './api.ts';
import { stageFor } from './model.ts';

export interface DeletionReport {
  kind: CleanupKind;
  deleted: number;
  /** Bytes that left the cloud for good. */
  freed: number;
  trashed: boolean;
  /** Bytes moved to the cloud's trash (still in the cloud until it is emptied). */
  inTrash: number;
  failed: DeleteCleanupData['failed'];
}

export interface SlimState {
  /** The task status: -1 while starting, then what polling reports (spec section 4). */
  status: number | null;
  stage: CleanupStage;
  task: CleanupTask | null;
  /** What the current scan was started with (a rescan repeats it). */
  lastRun: Required<Pick<RunCleanupBody, 'cloud_id' | 'path' | 'imode' | 'large_threshold'>> | null;
  /** While deleting: how many are done of how many. */
  deleting: { done: number; total: number } | null;
  /** What the last deletion did (the "done" stage). */
  report: DeletionReport | null;
  error: string | null;
}

export function initialSlimState(): SlimState {
  return { status: null, stage: 'idle', task: null, lastRun: null, deleting: null, report: null, error: null };
}

export const slimStore = createStore<SlimState>(initialSlimState());

export function useSlim<S>(selector: (s: SlimState) => S): S {
  return useStore(slimStore, selector);
}

/** The state resets on init (entering the clean-up screens). */
export function resetSlim(): void {
  slimStore.setState(initialSlimState());
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Takes a task as the server reports it: the status, and the stage that follows from it. */
export function applyTask(task: CleanupTask): void {
  slimStore.setState((s) => ({
    task,
    status: task.status,
    stage: stageFor(task.status, s.stage),
    lastRun: { cloud_id: task.cloud_id, path: task.path, imode: task.imode, large_threshold: task.large_threshold },
  }));
}

/** Starts a scan (or a rescan): status -1 at once, then the task's own status. Answers the task id. */
export async function startScan(body: NonNullable<SlimState['lastRun']>): Promise<string> {
  slimStore.setState({
    status: CleanupStatus.starting,
    stage: 'scanning',
    task: null,
    lastRun: body,
    report: null,
    deleting: null,
    error: null,
  });
  try {
    const { task_id } = await slimApi.run(body);
    applyTask(await slimApi.poll(task_id));
    return task_id;
  } catch (err) {
    slimStore.setState({ status: null, stage: 'idle', error: messageOf(err) });
    throw err;
  }
}

/** Loads a scan by id (or the latest of a cloud); false when there is none. */
export async function loadTask(ref: { taskId?: string; cloudId?: string }): Promise<boolean> {
  try {
    const task = ref.taskId ? await slimApi.poll(ref.taskId) : await slimApi.latest(ref.cloudId);
    if (!task) return false;
    applyTask(task);
    return true;
  } catch (err) {
    if (err instanceof ApiRequestError && err.status === 404) return false;
    slimStore.setState({ error: messageOf(err) });
    throw err;
  }
}

/** One progress poll of the running scan; a 404 (the scan is gone) ends it. */
export async function pollOnce(): Promise<void> {
  const { task } = slimStore.getState();
  if (!task) return;
  try {
    applyTask(await slimApi.poll(task.task_id));
  } catch (err) {
    if (err instanceof ApiRequestError && err.status === 404) resetSlim();
    else slimStore.setState({ error: messageOf(err) });
  }
}

/** Cancels the running scan: status 4 at once, then what the server answers. */
export async function cancelScan(): Promise<void> {
  const { task } = slimStore.getState();
  slimStore.setState({ status: CleanupStatus.canceled, stage: 'idle' });
  if (!task) return;
  applyTask(await slimApi.cancel(task.task_id));
}

/**
 * Deletes results: the stage is "deleting" while it runs, then "done" with the report. With
 * `all`, calls again while results remain and each call removes some.
 */
export async function deleteResults(
  kind: CleanupKind,
  body: DeleteCleanupBody,
  total: number,
): Promise<DeletionReport> {
  const report: DeletionReport = { kind, deleted: 0, freed: 0, trashed: true, inTrash: 0, failed: [] };
  slimStore.setState({ stage: 'deleting', deleting: { done: 0, total }, report: null, error: null });
  try {
    for (;;) {
      const res = await slimApi.remove(kind, body);
      report.deleted += res.deleted;
      report.freed += res.freed;
      report.inTrash += res.in_trash;
      report.trashed = res.trashed;
      report.failed.push(...res.failed);
      slimStore.setState({ task: res.task, deleting: { done: report.deleted, total } });
      if (!body.all || res.remaining === 0 || res.deleted === 0) break;
    }
    slimStore.setState({ stage: 'done', deleting: null, report });
    return report;
  } catch (err) {
    slimStore.setState({ stage: 'results', deleting: null, error: messageOf(err) });
    throw err;
  }
}

/** Leaves the "done" stage for the results again. */
export function backToResults(): void {
  slimStore.setState({ stage: 'results', report: null });
}
