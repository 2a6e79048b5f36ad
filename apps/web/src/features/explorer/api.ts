import {
  MAX_LIST_PAGE_SIZE,
  type CloudInfoData,
  type DeleteFilesData,
  type DownloadLinkData,
  type FileItem,
  type ListFilesData,
  type SearchFilesData,
  type TrashDeleteData,
  type TrashListData,
  type TrashRestoreData,
  type UploadSession,
} from '@skyferry/contract';
import { ApiRequestError, api, networkError, readEnvelope, requestHeaders } from '../../api/client.ts';
import { refreshAfterUnauthenticated } from '../session/actions.ts';

/** The file calls of a connected cloud (contract api/files.ts). */
export const filesApi = {
  list: (
    cloudId: string,
    path: string,
    opts: { pageToken?: string | null; pageSize?: number; refresh?: boolean; background?: boolean } = {},
  ) =>
    api<ListFilesData>('/api/cloud-manager/list', {
      body: {
        cloud_id: cloudId,
        path,
        page_token: opts.pageToken ?? null,
        page_size: opts.pageSize,
        refresh: opts.refresh,
        ...(opts.background ? { background: true } : {}),
      },
    }),
  mkdir: (cloudId: string, path: string, folderName: string, notAllowConflict = false) =>
    api<string>('/api/cloud-manager/mkdir', {
      body: { cloud_id: cloudId, path, folder_name: folderName, not_allow_conflict: notAllowConflict },
    }),
  rename: (cloudId: string, path: string, newName: string) =>
    api<FileItem>('/api/cloud-manager/rename', { body: { cloud_id: cloudId, path, new_name: newName } }),
  delete: (cloudId: string, files: string[]) =>
    api<DeleteFilesData>('/api/cloud-manager/delete', { body: { cloud_id: cloudId, files } }),
  /** `background`: the app's own refresh, not the user's use of the cloud. */
  info: (cloudId: string, background = false) =>
    api<CloudInfoData>('/api/cloud-manager/info', {
      body: { cloud_id: cloudId, ...(background ? { background: true } : {}) },
    }),
  downloadLink: (cloudId: string, paths: string[], name?: string) =>
    api<DownloadLinkData>('/api/cloud-manager/download-link', { body: { cloud_id: cloudId, paths, name } }),
  createUpload: (cloudId: string, path: string, size: number, modified?: number) =>
    api<UploadSession>('/api/cloud-manager/uploads', { body: { cloud_id: cloudId, path, size, modified } }),
  uploadStatus: (uploadId: string) => api<UploadSession>(`/api/cloud-manager/uploads/${uploadId}`, { method: 'GET' }),
  completeUpload: (uploadId: string) => api<FileItem>(`/api/cloud-manager/uploads/${uploadId}/complete`),
  abortUpload: (uploadId: string) => api<null>(`/api/cloud-manager/uploads/${uploadId}`, { method: 'DELETE' }),
  search: (cloudId: string, path: string, query: string, pageToken: string | null) =>
    api<SearchFilesData>('/api/cloud-manager/search', {
      body: { cloud_id: cloudId, path, query, page_token: pageToken },
    }),
  trashList: (cloudId: string, pageToken: string | null = null) =>
    api<TrashListData>('/api/cloud-manager/trash/list', { body: { cloud_id: cloudId, page_token: pageToken } }),
  trashRestore: (cloudId: string, ids: string[]) =>
    api<TrashRestoreData>('/api/cloud-manager/trash/restore', { body: { cloud_id: cloudId, ids } }),
  trashDelete: (cloudId: string, ids: string[]) =>
    api<TrashDeleteData>('/api/cloud-manager/trash/delete', { body: { cloud_id: cloudId, ids } }),
  trashEmpty: (cloudId: string) => api<null>('/api/cloud-manager/trash/empty', { body: { cloud_id: cloudId } }),
};

/** A name as the search compares it: lower case, without accents (as the server's search does). */
export function foldName(name: string): string {
  return name.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().normalize('NFC');
}

/**
 * Searches a cloud below `path` in steps (the server walks a bounded number of folders a call),
 * telling each step's finds and the folders read so far; stops when `signal` aborts. Answers
 * whether the walk was cut short by the server's bound.
 */
export async function searchCloud(
  cloudId: string,
  path: string,
  query: string,
  onStep: (found: FileItem[], scanned: number) => void,
  signal: AbortSignal,
): Promise<{ truncated: boolean; stopped: boolean }> {
  let token: string | null = null;
  let truncated = false;
  do {
    if (signal.aborted) return { truncated, stopped: true };
    const step: SearchFilesData = await filesApi.search(cloudId, path, query, token);
    if (signal.aborted) return { truncated, stopped: true };
    truncated ||= step.truncated;
    onStep(step.items, step.scanned);
    token = step.page_token;
  } while (token);
  return { truncated, stopped: false };
}

/** Every page of a folder, in the largest pages the server gives (100 000 entries: 20 calls). */
export async function listAll(
  cloudId: string,
  path: string,
  refresh = false,
  /** Told after each page with everything so far (a large folder shows its first rows at once). */
  onPage?: (items: FileItem[], done: boolean) => void,
  /** A listing the app makes on its own: not the user's use of the cloud. */
  background = false,
): Promise<FileItem[]> {
  const items: FileItem[] = [];
  let token: string | null = null;
  let first = true;
  do {
    const page: ListFilesData = await filesApi.list(cloudId, path, {
      pageToken: token,
      pageSize: MAX_LIST_PAGE_SIZE,
      refresh: refresh && first,
      background,
    });
    first = false;
    for (const item of page.items) items.push(item);
    token = page.page_token;
    onPage?.(items, !token);
  } while (token);
  return items;
}

/**
 * Sends raw bytes (a plain upload or one part of a resumable upload) and unwraps the envelope.
 * An expired access token is refreshed once, as the JSON calls do.
 */
export async function sendBytes<T>(url: string, body: Blob, signal?: AbortSignal): Promise<T> {
  const attempt = async (): Promise<T> => {
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'PUT',
        headers: { ...requestHeaders(), 'content-type': 'application/octet-stream' },
        body,
        signal,
        credentials: 'same-origin',
      });
    } catch (err) {
      if (signal?.aborted) throw err;
      throw networkError(false);
    }
    return (await readEnvelope<T>(res)).data;
  };
  try {
    return await attempt();
  } catch (err) {
    if (err instanceof ApiRequestError && err.isUnauthenticated && (await refreshAfterUnauthenticated()))
      return attempt();
    throw err;
  }
}

export function uploadUrl(cloudId: string, path: string, modified?: number): string {
  const q = new URLSearchParams({ cloud_id: cloudId, path });
  if (modified) q.set('modified', String(Math.floor(modified)));
  return `/api/cloud-manager/files?${q.toString()}`;
}
