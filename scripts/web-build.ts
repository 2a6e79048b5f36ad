import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** What the web app's build is made from: its sources, its settings, and the shared contract. */
const INPUTS = ['apps/web', 'packages/contract/src', 'package-lock.json'];
/** Not inputs: the build itself, installed packages, tests. */
const SKIP = new Set(['dist', 'node_modules', 'coverage']);
/** Kept in the build folder: the stamp of the sources it was built from. */
export const STAMP_FILE = '.source-stamp';

function walk(root: string, path: string, out: string[]): void {
  if (!existsSync(path)) return;
  const st = statSync(path);
  if (st.isFile()) {
    out.push(`${relative(root, path)}\0${st.size}\0${st.mtimeMs}`);
    return;
  }
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    walk(root, join(path, entry.name), out);
  }
}

/** A digest of every input's path, size and modification time (cheap: no file is read). */
export function webSourceStamp(root: string): string {
  const lines: string[] = [];
  for (const input of INPUTS) walk(root, join(root, input), lines);
  return createHash('sha256').update(lines.sort().join('\n')).digest('hex');
}

/** Whether apps/web/dist was built from the sources as they are now. */
export function webBuildIsCurrent(root: string, dist = join(root, 'apps/web/dist')): boolean {
  const stamp = join(dist, STAMP_FILE);
  if (!existsSync(join(dist, 'index.html')) || !existsSync(stamp)) return false;
  return readFileSync(stamp, 'utf8').trim() === webSourceStamp(root);
}
