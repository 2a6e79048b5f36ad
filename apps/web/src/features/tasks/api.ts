import type {
  CreateTaskBody,
  CreateTaskData,
  ListTasksData,
  PollProgressData,
  ServerTask,
  TaskDetail,
} from '@skyferry/contract';
import { PAGE_SIZES } from '@skyferry/contract';
import { api } from '../../api/client.ts';

const id = (taskId: string) => encodeURIComponent(taskId);

/** The server task calls (contract api/tasks.ts; spec section 7). */
export const tasksApi = {
  create: (body: CreateTaskBody) => api<CreateTaskData>('/api/tasks', { body }),
  /** completed 0: the running list (states 1, 2, 7, 8, 9); 1: the finished list. Pages of 100. */
  list: (completed: 0 | 1, page = 1, pageSize: number = PAGE_SIZES.tasks) =>
    api<ListTasksData>('/api/tasks/list', { body: { page, page_size: pageSize, completed } }),
  detail: (taskId: string) => api<TaskDetail>(`/api/tasks/${id(taskId)}`, { method: 'GET' }),
  remove: (taskId: string) => api<null>(`/api/tasks/${id(taskId)}`, { method: 'DELETE' }),
  setSchedule: (taskId: string, isSchedule: 1 | 2) =>
    api<ServerTask>(`/api/tasks/${id(taskId)}`, { method: 'PUT', body: { is_schedule: isSchedule } }),
  /** Start now, and Restart after a cancel; `resync` (two-way syncs) merges both sides, deleting nothing. */
  run: (taskId: string, opts: { resync?: boolean } = {}) =>
    api<ServerTask>(`/api/tasks/run/${id(taskId)}`, {
      method: 'GET',
      ...(opts.resync ? { query: { resync: '1' } } : {}),
    }),
  /** Retransmit the failed part. */
  retry: (taskId: string) => api<ServerTask>(`/api/tasks/retry/${id(taskId)}`, { method: 'GET' }),
  poll: (taskId: string) => api<PollProgressData>(`/api/cloud-manager/poll-progress/${id(taskId)}`, { method: 'GET' }),
  cancel: (taskId: string) =>
    api<ServerTask>('/api/cloud-manager/cancel-transfer', { method: 'DELETE', query: { task_id: taskId } }),
};
