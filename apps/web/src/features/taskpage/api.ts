import {
  Code,
  isEnvelope,
  type ListRunsData,
  type ListTasksData,
  type RunFileOutcome,
  type RunFilesData,
  type RunLogFormat,
  type ServerTask,
  type TaskPlanBody,
  type TaskPlanData,
  type TaskRun,
  type UpdateTaskBody,
} from '@skyferry/contract';
import { ApiRequestError, api, requestHeaders } from '../../api/client.ts';

const id = (value: string) => encodeURIComponent(value);

/** The Tasks page's calls (contract api/runs.ts and the task calls it adds to). */
export const taskPageApi = {
  /** Every task of the user, or those in `states`, newest first (pages of at most 100). */
  list: (states: readonly number[] | undefined, page = 1, pageSize = 100) =>
    api<ListTasksData>('/api/tasks/list', {
      body: { page, page_size: pageSize, ...(states ? { states: [...states] } : {}) },
    }),
  task: (taskId: string) => api<ServerTask>(`/api/tasks/${id(taskId)}`, { method: 'GET' }),
  runs: (taskId: string, page = 1, pageSize = 20, kind?: 'transfer' | 'verify') =>
    api<ListRunsData>(`/api/tasks/${id(taskId)}/runs`, { method: 'GET', query: { page, page_size: pageSize, kind } }),
  run: (taskId: string, runId: string) => api<TaskRun>(`/api/tasks/${id(taskId)}/runs/${id(runId)}`, { method: 'GET' }),
  files: (
    taskId: string,
    runId: string,
    query: { outcome?: RunFileOutcome; q?: string; cursor?: number; limit?: number },
  ) =>
    api<RunFilesData>(`/api/tasks/${id(taskId)}/runs/${id(runId)}/files`, {
      method: 'GET',
      query: { outcome: query.outcome, q: query.q || undefined, cursor: query.cursor, limit: query.limit },
    }),
  edit: (taskId: string, body: UpdateTaskBody) => api<ServerTask>(`/api/tasks/${id(taskId)}`, { method: 'PUT', body }),
  plan: (taskId: string, body: TaskPlanBody) => api<TaskPlanData>(`/api/tasks/${id(taskId)}/plan`, { body }),
  duplicate: (taskId: string) => api<ServerTask>(`/api/tasks/${id(taskId)}/duplicate`, { body: {} }),
  verify: (taskId: string) => api<TaskRun>(`/api/tasks/${id(taskId)}/verify`, { body: {} }),
  stopVerify: (taskId: string) => api<TaskRun | null>(`/api/tasks/${id(taskId)}/verify`, { method: 'DELETE' }),
};

/**
 * A run's log as a file to save: fetched with the caller's credentials (a plain link would carry
 * none), then handed to the browser as a download.
 */
export async function downloadRunLog(taskId: string, runId: string, format: RunLogFormat): Promise<void> {
  const response = await fetch(`/api/tasks/${id(taskId)}/runs/${id(runId)}/log?format=${format}`, {
    headers: requestHeaders(),
    credentials: 'same-origin',
  });
  if (!response.ok) {
    const body: unknown = await response.json().catch(() => null);
    if (isEnvelope(body)) throw new ApiRequestError(body.code, body.msg, response.status, body.data);
    throw new ApiRequestError(Code.INTERNAL, 'An unknown error occurred', response.status, null);
  }
  const disposition = response.headers.get('content-disposition') ?? '';
  const name = /filename="?([^";]+)"?/.exec(disposition)?.[1] ?? `run.${format === 'jsonl' ? 'jsonl' : 'log'}`;
  const url = URL.createObjectURL(await response.blob());
  try {
    const a = document.createElement('a');
    a.href = url;
    a.download = name;
    document.body.append(a);
    a.click();
    a.remove();
  } finally {
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }
}
