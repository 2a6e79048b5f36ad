import { lstatSync, realpathSync, statSync } from 'node:fs';

interface Known {
  real: string;
  dev: number;
  ino: number;
  born: number;
}

/**
 * The real paths of folders recently resolved, for the small-file calls that resolve one per file:
 * `realpath` walks every component of a deep path (about 15 µs at 7 levels here), a `stat` of the
 * folder about 3. An entry is used only while the path still leads to the same folder (device,
 * inode and birth time): a folder renamed, removed or replaced by a link is resolved again. (A
 * folder moved elsewhere whole and reached through a link at its old place keeps its entry: what
 * is reached so is the folder that was inside.)
 */
export class RealFolders {
  private readonly known = new Map<string, Known>();
  private readonly max: number;

  constructor(max = 1024) {
    this.max = max;
  }

  /** The real path of the folder at `lexical` (following links); throws as `realpathSync` does. */
  resolve(lexical: string): string {
    const hit = this.known.get(lexical);
    if (hit) {
      const st = statSync(lexical, { throwIfNoEntry: false });
      if (st && st.isDirectory() && st.ino === hit.ino && st.dev === hit.dev && st.birthtimeMs === hit.born)
        return hit.real;
      this.known.delete(lexical);
    }
    const real = realpathSync.native(lexical);
    // The folder itself (a real path holds no link): one swapped for a link since is not kept.
    const st = lstatSync(real, { throwIfNoEntry: false });
    if (st?.isDirectory()) {
      if (this.known.size >= this.max) this.known.delete(this.known.keys().next().value as string);
      this.known.set(lexical, { real, dev: st.dev, ino: st.ino, born: st.birthtimeMs });
    }
    return real;
  }
}
