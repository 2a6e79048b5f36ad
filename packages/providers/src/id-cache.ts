import { ProviderError } from './api/errors.ts';
import { cleanPath, isWithin, pathSegments } from './path.ts';

/**
 * Path -> service id cache for ID-based services (Drive, OneDrive, Box...), least recently used
 * entries dropped first. Renaming or removing a folder must call `invalidateTree`, since every id
 * cached below it is keyed by a path that no longer exists.
 */
export class PathIdCache {
  readonly maxEntries: number;
  private readonly map = new Map<string, string>();

  constructor(rootId: string, maxEntries = 10_000) {
    this.maxEntries = Math.max(2, maxEntries);
    this.map.set('/', rootId);
  }

  get size(): number {
    return this.map.size;
  }

  get(path: string): string | undefined {
    const p = cleanPath(path);
    const id = this.map.get(p);
    if (id !== undefined && p !== '/') {
      this.map.delete(p); // refresh recency
      this.map.set(p, id);
    }
    return id;
  }

  set(path: string, id: string): void {
    const p = cleanPath(path);
    if (p === '/') {
      this.map.set(p, id);
      return;
    }
    this.map.delete(p);
    this.map.set(p, id);
    while (this.map.size > this.maxEntries) {
      const oldest = this.map.keys().next().value as string;
      // The root never leaves the cache: it is the start of every walk.
      if (oldest === '/') {
        const rootId = this.map.get('/') as string;
        this.map.delete('/');
        this.map.set('/', rootId);
        continue;
      }
      this.map.delete(oldest);
    }
  }

  /** Forgets one path (a removed or renamed file). */
  delete(path: string): void {
    const p = cleanPath(path);
    if (p !== '/') this.map.delete(p);
  }

  /** Forgets a folder and everything cached below it (after a rename, move or removal of the folder). */
  invalidateTree(path: string): void {
    const p = cleanPath(path);
    if (p === '/') {
      const rootId = this.map.get('/') as string;
      this.map.clear();
      this.map.set('/', rootId);
      return;
    }
    for (const key of [...this.map.keys()]) if (isWithin(p, key)) this.map.delete(key);
  }

  /**
   * The id of `path`, walking down from the deepest cached folder with `lookupChild`
   * (returns undefined when a child of that name does not exist). Throws `not_found`.
   */
  async resolve(
    path: string,
    lookupChild: (parentId: string, name: string) => Promise<string | undefined>,
  ): Promise<string> {
    const segs = pathSegments(path);
    let depth = segs.length;
    let id: string | undefined;
    for (; depth >= 0; depth--) {
      id = this.get('/' + segs.slice(0, depth).join('/'));
      if (id !== undefined) break;
    }
    if (id === undefined) throw new Error('PathIdCache lost its root id');
    for (let i = depth; i < segs.length; i++) {
      const child = await lookupChild(id, segs[i] as string);
      const childPath = '/' + segs.slice(0, i + 1).join('/');
      if (child === undefined) throw new ProviderError('not_found', `not found: ${childPath}`);
      this.set(childPath, child);
      id = child;
    }
    return id;
  }
}
