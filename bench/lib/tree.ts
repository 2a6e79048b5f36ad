import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { prng, pseudoRandomBytes } from './random.ts';

/** A generated tree of small files (`makeTree`). */
export interface TreeSpec {
  files: number;
  minSize: number;
  maxSize: number;
  /**
   * `flat`: folders of 500 files side by side below the root. `realistic`: most folders hold
   * 10-200 files, a few 10,000, nested up to 12 deep.
   */
  layout: 'flat' | 'realistic';
}

export interface Tree extends TreeSpec {
  root: string;
  bytes: number;
  folders: number;
  maxDepth: number;
}

/** Folder sizes of the realistic layout: mostly 10-200 files, one folder in 60 holds 10,000. */
function folderSizes(files: number, next: () => number): number[] {
  const sizes: number[] = [];
  let left = files;
  while (left > 0) {
    const n = next() < 1 / 60 ? 10_000 : 10 + Math.floor(next() * 191);
    sizes.push(Math.min(n, left));
    left -= n;
  }
  return sizes;
}

/**
 * Folder paths (below the root) for the realistic layout: each new folder goes below a random
 * earlier one (or the root), at most 12 deep, so the tree has both broad and deep parts.
 */
function folderPaths(count: number, next: () => number): string[] {
  const paths: string[] = [];
  const depth: number[] = [];
  for (let i = 0; i < count; i++) {
    let parent = -1;
    if (i > 0 && next() < 0.85) {
      parent = Math.floor(next() * i);
      if ((depth[parent] ?? 0) >= 12) parent = -1;
    }
    const name = `dir-${i.toString(36)}`;
    paths.push(parent < 0 ? name : `${paths[parent]}/${name}`);
    depth.push(parent < 0 ? 1 : (depth[parent] ?? 0) + 1);
  }
  return paths;
}

/**
 * Writes the tree under `root`, or reuses the one there when an earlier call wrote the same spec
 * (a `.tree.json` beside it says so): a million files take minutes to write.
 */
export async function makeTree(root: string, spec: TreeSpec): Promise<Tree> {
  const marker = join(root, '..', `${root.split('/').pop()}.tree.json`);
  if (existsSync(marker)) {
    const had = JSON.parse(readFileSync(marker, 'utf8')) as Tree;
    if (
      had.files === spec.files &&
      had.minSize === spec.minSize &&
      had.maxSize === spec.maxSize &&
      had.layout === spec.layout
    )
      return had;
  }
  const next = prng(spec.files ^ 0x5eed);
  const sizes =
    spec.layout === 'flat'
      ? Array.from({ length: Math.ceil(spec.files / 500) }, (_, i) => Math.min(500, spec.files - i * 500))
      : folderSizes(spec.files, next);
  const paths =
    spec.layout === 'flat'
      ? sizes.map((_, i) => `folder-${String(i).padStart(4, '0')}`)
      : folderPaths(sizes.length, next);
  // One block of random bytes; each file is a slice of it at its own offset, with its number in
  // its first bytes, so no two files are equal and nothing is compressible.
  const block = pseudoRandomBytes(4 * 1024 * 1024, 7);
  let bytes = 0;
  let n = 0;
  const pending = new Set<Promise<void>>();
  for (let f = 0; f < paths.length; f++) {
    const dir = join(root, paths[f] as string);
    mkdirSync(dir, { recursive: true });
    for (let i = 0; i < (sizes[f] as number); i++, n++) {
      const size = spec.minSize + Math.floor(next() * (spec.maxSize - spec.minSize + 1));
      const off = Math.floor(next() * (block.length - size - 8));
      const data = Buffer.from(block.subarray(off, off + size));
      if (size >= 4) data.writeUInt32LE(n, 0);
      bytes += size;
      const p = (async () => {
        const fh = await open(join(dir, `file-${i}.bin`), 'w');
        try {
          await fh.write(data);
        } finally {
          await fh.close();
        }
      })();
      pending.add(p);
      void p.finally(() => pending.delete(p));
      if (pending.size >= 64) await Promise.race(pending);
    }
  }
  await Promise.all(pending);
  const tree: Tree = {
    ...spec,
    root,
    bytes,
    folders: paths.length,
    maxDepth: Math.max(...paths.map((p) => p.split('/').length)),
  };
  writeFileSync(marker, JSON.stringify(tree));
  return tree;
}
