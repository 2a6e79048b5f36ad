import type { Album } from '@skyferry/contract';
import type { Provider } from '@skyferry/providers';

/**
 * What a photos backend offers beyond the Provider interface to manage albums (Google Photos:
 * albums.list, albums.create, mediaItems:batchCreate / albums.batchAddMediaItems, mediaItems.search
 * by album). A backend has albums when it implements these; the file calls find them by shape.
 */
export interface AlbumCapable {
  listAlbums(opts?: {
    signal?: AbortSignal;
  }): Promise<Array<{ id: string; title: string; count?: number; coverPath?: string }>>;
  createAlbum(title: string): Promise<{ id: string; title: string }>;
  /** Adds items, named by their paths in the cloud, to an album; answers how many were added. */
  addToAlbum(albumId: string, paths: string[]): Promise<number>;
  /** One page of an album's items, as paths with their entries. */
  listAlbumItems?(albumId: string, opts?: { pageToken?: string }): Promise<{ paths: string[]; nextPageToken?: string }>;
}

export function albumsOf(provider: Provider): AlbumCapable | undefined {
  const p = provider as Provider & Partial<AlbumCapable>;
  return typeof p.listAlbums === 'function' && typeof p.createAlbum === 'function' && typeof p.addToAlbum === 'function'
    ? (p as Provider & AlbumCapable)
    : undefined;
}

export function toAlbum(a: { id: string; title: string; count?: number; coverPath?: string }): Album {
  return { id: a.id, title: a.title, count: a.count ?? null, cover_path: a.coverPath ?? null };
}
