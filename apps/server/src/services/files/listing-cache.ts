import type { ListFilesData } from '@skyferry/contract';

export interface ListingCacheOptions {
  /** How long a page stays fresh, ms. */
  ttlMs?: number;
  /** Most pages kept (least recently used go first). */
  maxEntries?: number;
  now?: () => number;
}

/**
 * The file listing cache of spec section 3: per cloud and parent folder, each page's value list and
 * page_token. In memory, least recently used first out, with a short time to live, so paging and
 * going back and forth do not re-read the service; any change the server makes in a folder drops
 * that folder's pages, and `refresh` bypasses it.
 */
export class ListingCache {
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;
  private readonly entries = new Map<string, { at: number; page: ListFilesData }>();

  constructor(options: ListingCacheOptions = {}) {
    this.ttlMs = options.ttlMs ?? 10_000;
    this.maxEntries = options.maxEntries ?? 500;
    this.now = options.now ?? Date.now;
  }

  private static folderKey(cloudId: string, path: string): string {
    return `${cloudId}\u0000${path}\u0000`;
  }

  private static key(cloudId: string, path: string, pageToken: string | null, pageSize: number): string {
    return `${ListingCache.folderKey(cloudId, path)}${pageToken ?? ''}\u0000${pageSize}`;
  }

  get(cloudId: string, path: string, pageToken: string | null, pageSize: number): ListFilesData | undefined {
    const key = ListingCache.key(cloudId, path, pageToken, pageSize);
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    this.entries.delete(key);
    if (this.now() - hit.at > this.ttlMs) return undefined;
    this.entries.set(key, hit);
    return hit.page;
  }

  set(cloudId: string, path: string, pageToken: string | null, pageSize: number, page: ListFilesData): void {
    const key = ListingCache.key(cloudId, path, pageToken, pageSize);
    this.entries.delete(key);
    this.entries.set(key, { at: this.now(), page });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }

  /** Drops every cached page of one folder. */
  invalidate(cloudId: string, path: string): void {
    const prefix = ListingCache.folderKey(cloudId, path);
    for (const key of [...this.entries.keys()]) if (key.startsWith(prefix)) this.entries.delete(key);
  }

  /** Drops every cached page of a folder and of everything below it (after a folder is renamed or deleted). */
  invalidateTree(cloudId: string, path: string): void {
    const prefix = `${cloudId}\u0000`;
    for (const key of [...this.entries.keys()]) {
      if (!key.startsWith(prefix)) continue;
      const folder = key.slice(prefix.length, key.indexOf('\u0000', prefix.length));
      if (path === '/' || folder === path || folder.startsWith(`${path}/`)) this.entries.delete(key);
    }
  }

  /** Drops every page of a cloud. */
  invalidateCloud(cloudId: string): void {
    const prefix = `${cloudId}\u0000`;
    for (const key of [...this.entries.keys()]) if (key.startsWith(prefix)) this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}
