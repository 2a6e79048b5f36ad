import { ProviderError } from './api/errors.ts';

/** A clean path: "/", or "/"-led segments none empty, "." or "..", without NUL. */
const CLEAN = /^(?:\/|(?:\/(?!\.\.?(?:\/|$))[^/\0]+)+)$/;

/**
 * Cloud paths are POSIX-style and absolute: "/", "/a", "/a/b.txt". These helpers normalise what
 * callers pass ("a/b/", "//a") and refuse "." and ".." segments and NUL, so no backend ever lets a
 * path climb above its root.
 */
export function cleanPath(path: string): string {
  // Most paths are clean already: given back as they are, without splitting.
  if (CLEAN.test(path)) return path;
  if (path.includes('\0')) throw new ProviderError('invalid_name', `invalid name (NUL): ${JSON.stringify(path)}`);
  const parts = path.split('/').filter((p) => p !== '');
  for (const p of parts) {
    if (p === '.' || p === '..') throw new ProviderError('invalid_name', `invalid path segment "${p}" in ${path}`);
  }
  return '/' + parts.join('/');
}

/** The segments of a clean path ("/" has none). */
export function pathSegments(path: string): string[] {
  return cleanPath(path)
    .split('/')
    .filter((p) => p !== '');
}

export function joinPath(dir: string, ...names: string[]): string {
  return cleanPath([dir, ...names].join('/'));
}

/** "/a/b" -> "/a"; "/a" -> "/"; "/" -> "/". */
export function parentPath(path: string): string {
  const p = cleanPath(path);
  const i = p.lastIndexOf('/');
  return i <= 0 ? '/' : p.slice(0, i);
}

/** "/a/b.txt" -> "b.txt"; "/" -> "". */
export function baseName(path: string): string {
  const p = cleanPath(path);
  return p.slice(p.lastIndexOf('/') + 1);
}

/** Checks a single name given to rename or mkdir: no separators, not "." or "..", not empty. */
export function checkName(name: string): string {
  if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) {
    throw new ProviderError('invalid_name', `invalid name: ${JSON.stringify(name)}`);
  }
  return name;
}

/**
 * The name a restored item takes beside one that holds its name again: "report (restored).txt",
 * then "report (restored 2).txt" for `n` 2, ... (a folder's name keeps any dot it has).
 */
export function restoredName(name: string, kind: 'file' | 'dir', n = 1): string {
  const dot = kind === 'file' ? name.lastIndexOf('.') : -1;
  const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
  return `${stem} (restored${n > 1 ? ` ${n}` : ''})${ext}`;
}

/** True when `path` is `dir` or lies below it. */
export function isWithin(dir: string, path: string): boolean {
  const d = cleanPath(dir);
  const p = cleanPath(path);
  return d === '/' || p === d || p.startsWith(d + '/');
}
