import type {
  CleanupKind,
  CleanupListQuery,
  CleanupTask,
  DeleteCleanupBody,
  DeleteCleanupData,
  DuplicateFilesPage,
  EmptyFoldersPage,
  LargeFilesPage,
  RunCleanupBody,
  RunCleanupData,
} from '@skyferry/contract';
import { api } from '../../api/client.ts';

/** The list path of each result kind (spec section 7). */
export const LIST_PATHS: Record<CleanupKind, string> = {
  empty_folders: '/api/cleanup/empty-folders',
  duplicate_files: '/api/cleanup/duplicate-files',
  large_files: '/api/cleanup/large-files',
};

export interface ListPages {
  empty_folders: EmptyFoldersPage;
  duplicate_files: DuplicateFilesPage;
  large_files: LargeFilesPage;
}

/** The clean-up calls; an error answer rejects (ApiRequestError), as spec section 7 asks. */
export const slimApi = {
  run: (body: RunCleanupBody) => api<RunCleanupData>('/api/cleanup/run', { body }),
  poll: (taskId: string) =>
    api<CleanupTask>(`/api/cleanup/poll-progress/${encodeURIComponent(taskId)}`, { method: 'GET' }),
  cancel: (taskId: string) => api<CleanupTask>(`/api/cleanup/task/${encodeURIComponent(taskId)}`, { method: 'DELETE' }),
  latest: (cloudId?: string) =>
    api<CleanupTask | null>('/api/cleanup/task', { method: 'GET', query: { cloud_id: cloudId } }),
  list: <K extends CleanupKind>(kind: K, query: CleanupListQuery) =>
    api<ListPages[K]>(LIST_PATHS[kind], {
      method: 'GET',
      query: query as Record<string, string | number | undefined>,
    }),
  remove: (kind: CleanupKind, body: DeleteCleanupBody) =>
    api<DeleteCleanupData>(LIST_PATHS[kind], { method: 'DELETE', body }),
};
