import type { Album, ListFilesData } from '@skyferry/contract';
import { api, requestHeaders } from '../../api/client.ts';

/** Albums of a photos cloud and image previews (contract api/files.ts). */
export const photosApi = {
  albums: (cloudId: string) =>
    api<{ albums: Album[] }>('/api/cloud-manager/albums/list', { body: { cloud_id: cloudId } }),
  createAlbum: (cloudId: string, title: string) =>
    api<Album>('/api/cloud-manager/albums/create', { body: { cloud_id: cloudId, title } }),
  addToAlbum: (cloudId: string, albumId: string, files: string[]) =>
    api<{ added: number }>('/api/cloud-manager/albums/add', { body: { cloud_id: cloudId, album_id: albumId, files } }),
  albumItems: (cloudId: string, albumId: string, pageToken?: string | null) =>
    api<ListFilesData>('/api/cloud-manager/albums/items', {
      body: { cloud_id: cloudId, album_id: albumId, page_token: pageToken ?? null },
    }),
};

/** An image preview as an object URL (the call needs the session's headers, which an <img> cannot send). */
export async function previewUrl(cloudId: string, path: string, signal?: AbortSignal): Promise<string> {
  const q = new URLSearchParams({ cloud_id: cloudId, path, size: '256' });
  const res = await fetch(`/api/cloud-manager/thumbnail?${q.toString()}`, { headers: requestHeaders(), signal });
  if (!res.ok) throw new Error(`preview ${res.status}`);
  return URL.createObjectURL(await res.blob());
}
