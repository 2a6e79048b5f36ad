import {
  LocalTaskStatus,
  UPLOAD_PART_SIZE,
  formatBytes,
  joinPath,
  localStatusOfDownloadEvent,
  parentOf,
} from '@skyferry/contract';
import { ApiRequestError, NetworkError } from '../../api/client.ts';
import { i18n } from '../../i18n/index.ts';
import { filesApi, sendBytes, uploadUrl } from '../explorer/api.ts';
import type { Picked } from '../explorer/dropped.ts';
import { desktopBridge } from '../shell/desktop.ts';
import { browserDownload } from './browser-download.ts';
import { sessionStore } from '../session/store.ts';
import { addTasks, dropAllTasks, dropTask, patchTask, taskPanelStore, type LocalTask } from './store.ts';

/** How many files upload at once. */
export const UPLOAD_CONCURRENCY = 3;
/** Tries of one part after a dropped connection (waiting 1, 2, 4, 8 and 16 s between). */
export const PART_RETRIES = 5;

interface Job {
  task: LocalTask;
  file?: File;
  controller: AbortController;
}

const jobs = new Map<string, Job>();
const queue: string[] = [];
let active = 0;
let counter = 0;
const listeners = new Set<(cloudId: string, folder: string) => void>();

/** Told when an upload lands in a folder (the explorer refreshes it). */
export function onUploaded(listener: (cloudId: string, folder: string) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Told when an upload or download fails (the explorer shows the notice). */
const failureListeners = new Set<(task: LocalTask) => void>();
export function onTaskFailed(listener: (task: LocalTask) => void): () => void {
  failureListeners.add(listener);
  return () => failureListeners.delete(listener);
}

function newId(): string {
  counter += 1;
  return `t${Date.now().toString(36)}${counter}`;
}

/** "1.20 MB / 4.00 MB". */
export function progressText(moved: number, total: number): string {
  return `${formatBytes(moved)} / ${formatBytes(total)}`;
}

function messageOf(err: unknown): string {
  if (err instanceof ApiRequestError || err instanceof NetworkError) return err.message;
  return err instanceof Error ? err.message : String(err);
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });

/**
 * Uploads one file: a plain PUT up to one part, else the resumable calls in 4 MB parts; after a
 * dropped connection it asks the server where to resume and goes on from there.
 */
export async function uploadFile(
  cloudId: string,
  path: string,
  file: Blob & { lastModified?: number },
  onProgress: (sent: number) => void,
  signal: AbortSignal,
): Promise<void> {
  const modified = file.lastModified;
  if (file.size <= UPLOAD_PART_SIZE) {
    await sendBytes(uploadUrl(cloudId, path, modified), file, signal);
    onProgress(file.size);
    return;
  }
  const session = await filesApi.createUpload(cloudId, path, file.size, modified);
  let offset = session.offset;
  let failures = 0;
  try {
    while (offset < file.size) {
      const part = file.slice(offset, Math.min(file.size, offset + session.part_size));
      try {
        offset = (
          await sendBytes<{ offset: number }>(
            `/api/cloud-manager/uploads/${session.upload_id}?offset=${offset}`,
            part,
            signal,
          )
        ).offset;
        failures = 0;
        onProgress(offset);
      } catch (err) {
        if (signal.aborted) throw err;
        const resumable = err instanceof NetworkError || (err instanceof ApiRequestError && err.code === 409006);
        if (!resumable || failures >= PART_RETRIES) throw err;
        failures += 1;
        await sleep(1000 * 2 ** (failures - 1), signal);
        try {
          offset = (await filesApi.uploadStatus(session.upload_id)).offset;
        } catch (statusErr) {
          // Still offline: keep the offset and try the part again after the next wait (a part the
          // server already took is accepted again and answers where it stands).
          if (signal.aborted || !(statusErr instanceof NetworkError)) throw statusErr;
        }
      }
    }
    await filesApi.completeUpload(session.upload_id);
  } catch (err) {
    void filesApi.abortUpload(session.upload_id).catch(() => undefined);
    throw err;
  }
}

async function runUpload(job: Job): Promise<void> {
  const { task, file, controller } = job;
  if (!file) return;
  patchTask(task.id, { status: LocalTaskStatus.progressing, progress: 0, error: '' });
  try {
    await uploadFile(
      task.cloud_id,
      task.path,
      file,
      (sent) =>
        patchTask(task.id, {
          progress: file.size === 0 ? 100 : (sent / file.size) * 100,
          progress_text: progressText(sent, file.size),
        }),
      controller.signal,
    );
    patchTask(task.id, { status: LocalTaskStatus.completed, progress: 100 });
    for (const l of listeners) l(task.cloud_id, parentOf(task.path));
  } catch (err) {
    if (controller.signal.aborted) return;
    const failed = { status: LocalTaskStatus.failedRetry, error: messageOf(err) };
    patchTask(task.id, failed);
    for (const l of failureListeners) l({ ...task, ...failed });
  }
}

function pump(): void {
  while (active < UPLOAD_CONCURRENCY && queue.length > 0) {
    const id = queue.shift() as string;
    const job = jobs.get(id);
    if (!job || job.controller.signal.aborted) continue;
    active += 1;
    void runUpload(job).finally(() => {
      active -= 1;
      pump();
    });
  }
}

/**
 * Queues the upload of picked files into `folder` of a cloud: one task per file; empty folders
 * are created first. Answers the new tasks.
 */
export async function startUploads(cloudId: string, folder: string, picked: Picked): Promise<LocalTask[]> {
  for (const dir of picked.emptyFolders) {
    const parts = dir.split('/');
    let parent = folder;
    for (const name of parts) {
      await filesApi.mkdir(cloudId, parent, name, true);
      parent = joinPath(parent, name);
    }
  }
  if (picked.emptyFolders.length > 0) for (const l of listeners) l(cloudId, folder);
  const tasks: LocalTask[] = picked.files.map(({ file, relativePath }, index) => {
    const path = joinPath(folder, relativePath);
    const task: LocalTask = {
      id: newId(),
      name: file.name,
      size: file.size,
      original_size: file.size,
      type: 0,
      status: LocalTaskStatus.progressing,
      progress: 0,
      parent: parentOf(path),
      cloud_id: cloudId,
      path,
      start_time: Date.now(),
      error: '',
      progress_text: '',
      downloadId: '',
      directory: '',
      is_multi: false,
      real_index: index,
      task_object: { kind: 'upload', cloud_id: cloudId, folder, relative_path: relativePath },
      object: { name: file.name, size: file.size, type: file.type, modified: file.lastModified || 0 },
    };
    jobs.set(task.id, { task, file, controller: new AbortController() });
    queue.push(task.id);
    return task;
  });
  addTasks(tasks);
  pump();
  return tasks;
}

/**
 * Downloads paths of a cloud: one file as itself, a folder or several as one zip. The browser
 * saves it; the task completes once the server has begun sending it to the browser, and fails with
 * the server's reason when it answers an error instead (a file that is gone: 404).
 */
export async function startDownload(
  cloudId: string,
  folder: string,
  items: Array<{ path: string; name: string; size: number; type: number; modified?: number }>,
  zipName?: string,
): Promise<LocalTask> {
  const single = items.length === 1 && items[0]?.type === 1 ? items[0] : undefined;
  const name = single ? single.name : `${zipName ?? (items.length === 1 ? items[0]?.name : 'download')}.zip`;
  const size = items.reduce((n, i) => n + i.size, 0);
  const first = items[0];
  const task: LocalTask = {
    id: newId(),
    name,
    size,
    original_size: size,
    type: 1,
    status: localStatusOfDownloadEvent('progressing'),
    progress: 0,
    parent: folder,
    cloud_id: cloudId,
    path: first?.path ?? folder,
    start_time: Date.now(),
    error: '',
    progress_text: '',
    downloadId: '',
    directory: sessionStore.getState().settings.file_save_path,
    is_multi: !single,
    real_index: 0,
    task_object: {
      kind: 'download',
      cloud_id: cloudId,
      folder,
      paths: items.map((i) => i.path),
      zip_name: single ? null : name.replace(/\.zip$/, ''),
    },
    object: {
      name: first?.name ?? name,
      size: first?.size ?? 0,
      type: first?.type === 0 ? 'folder' : 'file',
      modified: first?.modified ?? 0,
    },
  };
  jobs.set(task.id, { task, controller: new AbortController() });
  addTasks([task]);
  try {
    const link = await filesApi.downloadLink(
      cloudId,
      items.map((i) => i.path),
      single ? undefined : name.replace(/\.zip$/, ''),
    );
    const job = jobs.get(task.id);
    const bridge = desktopBridge();
    if (bridge?.saveUrl) {
      // The desktop client saves it into the download folder, no dialog, and knows where it went.
      const saved = await bridge.saveUrl({ url: new URL(link.url, window.location.href).toString(), name });
      if (job?.controller.signal.aborted) return task;
      patchTask(task.id, {
        status: localStatusOfDownloadEvent('completed'),
        progress: 100,
        progress_text: progressText(size, size),
        local_path: saved.path,
      });
      return task;
    }
    const outcome = await browserDownload(link.url, {
      fallbackReason: i18n.t('tasks:downloadNotStarted'),
      signal: job?.controller.signal,
    });
    if (job?.controller.signal.aborted) return task;
    if (!outcome.started) throw new Error(outcome.reason);
    // A zip's size is known only to the server, which tells it as the download begins.
    const real = outcome.size ?? size;
    patchTask(task.id, { downloadId: `dl-${task.id}` });
    patchTask(task.id, {
      status: localStatusOfDownloadEvent('completed'),
      progress: 100,
      size: real,
      original_size: real,
      progress_text: progressText(real, real),
    });
  } catch (err) {
    const failed = { status: localStatusOfDownloadEvent('failed'), error: messageOf(err) };
    patchTask(task.id, failed);
    for (const l of failureListeners) l({ ...task, ...failed });
  }
  return task;
}

/** Starts a failed upload again (status -1). */
export function retryTask(id: string): void {
  const job = jobs.get(id);
  if (!job || !job.file) return;
  job.controller = new AbortController();
  patchTask(id, { status: LocalTaskStatus.progressing, progress: 0, error: '' });
  queue.push(id);
  pump();
}

/** Removes a task, stopping it when it still runs. */
export function deleteTask(id: string): void {
  const job = jobs.get(id);
  job?.controller.abort(new DOMException('canceled', 'AbortError'));
  jobs.delete(id);
  dropTask(id);
}

/** Removes every task, stopping the running ones. */
export function clearTasks(): void {
  for (const job of jobs.values()) job.controller.abort(new DOMException('canceled', 'AbortError'));
  jobs.clear();
  queue.length = 0;
  dropAllTasks();
}

/** For tests: forget every job. */
export function resetRunner(): void {
  clearTasks();
  listeners.clear();
  failureListeners.clear();
  taskPanelStore.setState({ collapsed: false });
}
