import { parentPath } from '../util.ts';
import type { EmptyFolder } from './types.ts';
import type { WalkResult } from './walk.ts';

/**
 * Empty folders below `root`: a folder is empty when nothing below it is a file or a link (so a
 * folder holding only empty folders is empty too). Folders that could not be listed, and every
 * folder above them, count as not empty: what they hold is unknown. The root itself is never reported.
 * Returns the top-most empty folders, each with how many empty folders it holds, and the total.
 */
export function findEmptyFolders(
  root: string,
  walk: Pick<WalkResult, 'folders' | 'files' | 'unlisted'> & Partial<Pick<WalkResult, 'links'>>,
): {
  folders: EmptyFolder[];
  total: number;
} {
  const occupied = new Set<string>();
  const occupy = (dir: string) => {
    let d = dir;
    for (;;) {
      if (occupied.has(d)) return;
      occupied.add(d);
      if (d === root || d === '/') return;
      d = parentPath(d);
    }
  };
  for (const f of walk.files) occupy(parentPath(f.path));
  for (const d of walk.unlisted) occupy(d);
  for (const l of walk.links ?? []) occupy(parentPath(l));

  const empty = [...walk.folders.keys()].filter((d) => d !== root && !occupied.has(d));
  const emptySet = new Set(empty);
  const tops = new Map<string, EmptyFolder>();
  // A folder's path sorts before every path inside it, so each top-most folder is seen first.
  for (const d of empty.sort()) {
    let top = d;
    for (let p = parentPath(d); p !== root && emptySet.has(p); p = parentPath(p)) top = p;
    const t = tops.get(top);
    if (t) t.nestedCount++;
    else tops.set(d, { path: d, modTime: walk.folders.get(d) ?? null, nestedCount: 0 });
  }
  return {
    folders: [...tops.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
    total: empty.length,
  };
}
