import { LocalTaskStatus, truncateTaskName } from '@skyferry/contract';
import { createStore, useStore } from '../../lib/store.ts';

/** Local upload (type 0) and download (type 1) tasks of the task panel (spec section 3). */
export interface LocalTask {
  id: string;
  /** The file or zip name. */
  name: string;
  /** Bytes to move, and the file's size as picked. */
  size: number;
  original_size: number;
  type: 0 | 1;
  /** 0 progressing, 1 completed, -1 failed with retry, -2 failed. */
  status: number;
  /** Percent done, 0 to 100. */
  progress: number;
  /** The cloud folder the task goes into (upload) or comes from (download). */
  parent: string;
  cloud_id: string;
  /** The path in the cloud (upload target, or the first downloaded path). */
  path: string;
  start_time: number;
  /** The failure's message, '' when none. */
  error: string;
  /** Desktop client: where the downloaded file was saved on this computer. */
  local_path?: string;
  /** What the row says of the bytes moved: "1.20 MB / 4.00 MB" while under way, '' before. */
  progress_text: string;
  /** Downloads: the id of the download handed to the browser ('' for uploads, and until it is handed over). */
  downloadId: string;
  /** Downloads: where the file is saved (settings' file_save_path; '' is the browser's own folder). */
  directory: string;
  /** A download of a folder or several items, which arrives as one zip. */
  is_multi: boolean;
  /** The item's position in what was picked (uploads) or selected (downloads) together. */
  real_index: number;
  /** What started the task, enough to start it again. */
  task_object: LocalTaskRequest;
  /** The item itself: the picked file (uploads) or the first selected cloud item (downloads). */
  object: LocalTaskItem;
}

/** The request behind a local task (spec: task_object). */
export type LocalTaskRequest =
  | { kind: 'upload'; cloud_id: string; folder: string; relative_path: string }
  | { kind: 'download'; cloud_id: string; folder: string; paths: string[]; zip_name: string | null };

/** The item a local task moves (spec: object). */
export interface LocalTaskItem {
  name: string;
  size: number;
  /** Uploads: the file's MIME type ('' when unknown); downloads: 'folder' or 'file'. */
  type: string;
  /** ms; 0 when unknown. */
  modified: number;
}

export interface TaskPanelState {
  tasks: LocalTask[];
  collapsed: boolean;
  /** Hidden until the first task arrives, and again after clear all. */
  open: boolean;
}

export const taskPanelStore = createStore<TaskPanelState>({ tasks: [], collapsed: false, open: false });

export function useTaskPanel<S>(selector: (s: TaskPanelState) => S): S {
  return useStore(taskPanelStore, selector);
}

export function addTasks(tasks: LocalTask[]): void {
  taskPanelStore.setState((s) => ({ tasks: [...tasks, ...s.tasks], open: true }));
}

export function patchTask(id: string, patch: Partial<LocalTask>): void {
  taskPanelStore.setState((s) => ({ tasks: s.tasks.map((t) => (t.id === id ? { ...t, ...patch } : t)) }));
}

export function dropTask(id: string): void {
  taskPanelStore.setState((s) => {
    const tasks = s.tasks.filter((t) => t.id !== id);
    return { tasks, open: tasks.length > 0 ? s.open : false };
  });
}

export function dropAllTasks(): void {
  taskPanelStore.setState({ tasks: [], open: false });
}

export function setCollapsed(collapsed: boolean): void {
  taskPanelStore.setState({ collapsed });
}

/** Whether any task is still moving bytes (clear all then asks first). */
export function anyRunning(tasks: readonly LocalTask[]): boolean {
  return tasks.some((t) => t.status === LocalTaskStatus.progressing);
}

/** The row's name: over 23 columns wide, the first 7 characters, "..." and the last 6 (spec section 5). */
export function taskDisplayName(task: Pick<LocalTask, 'name'>): string {
  return truncateTaskName(task.name);
}

export type StatusView = { kind: 'progress'; percent: number } | { kind: 'done' } | { kind: 'failed'; retry: boolean };

/** What a row shows for each status: 0 progress with its percentage, 1 done, -1 failed with retry, -2 failed. */
export function statusView(task: Pick<LocalTask, 'status' | 'progress'>): StatusView {
  switch (task.status) {
    case LocalTaskStatus.progressing:
      return { kind: 'progress', percent: Math.max(0, Math.min(100, Math.floor(task.progress))) };
    case LocalTaskStatus.completed:
      return { kind: 'done' };
    case LocalTaskStatus.failedRetry:
      return { kind: 'failed', retry: true };
    default:
      return { kind: 'failed', retry: false };
  }
}
