import type { ExportProgress, StartUploadBody, StartUploadData } from '@skyferry/contract';
import { api } from '../../api/client.ts';

/** The export calls of the embedded-app host (contract api/exports.ts). */
export const exportApi = {
  /** Makes (or reuses) the product's export folder in a cloud; answers its id. */
  mkdir: (cloudId: string, cloudType: string, folderName: string) =>
    api<string>('/api/cloud-manager/mkdir', {
      body: { cloud_type: cloudType, token_id: cloudId, folder_name: folderName, not_allow_conflict: true },
    }),
  startUpload: (body: StartUploadBody) => api<StartUploadData>('/api/third-api/start-upload', { body }),
  pollProgress: (taskId: string) =>
    api<ExportProgress>(`/api/third-api/poll-progress/${encodeURIComponent(taskId)}`, { method: 'GET' }),
};
