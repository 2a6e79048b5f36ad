import type { MessageKey } from './i18n/en.ts';

/** Characters a file or folder name may not contain (spec section 5). */
export const FORBIDDEN_NAME_CHARS = ['/', ':', '*', '?', '\\', '"', '<', '>', '|'] as const;
const FORBIDDEN_RE = /[/:*?\\"<>|]/;
/** Names are limited to 255 bytes of UTF-8, the common limit of file systems and clouds. */
export const MAX_NAME_BYTES = 255;

export type NameProblem = 'empty' | 'forbidden_chars' | 'dot_name' | 'trailing_space' | 'too_long' | 'control_chars';

/** The server message (a key of i18n/en.ts) that explains each name problem. */
export const NAME_PROBLEM_MESSAGE: Record<NameProblem, MessageKey> = {
  empty: 'name_empty',
  forbidden_chars: 'name_forbidden_chars',
  dot_name: 'name_dot',
  trailing_space: 'name_trailing_space',
  too_long: 'name_too_long',
  control_chars: 'name_control_chars',
};

/** Why a name is not acceptable, or null when it is. */
export function validateName(name: string): NameProblem | null {
  if (name.length === 0 || name.trim().length === 0) return 'empty';
  if (name === '.' || name === '..') return 'dot_name';
  if (FORBIDDEN_RE.test(name)) return 'forbidden_chars';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'control_chars';
  if (/\s$/.test(name)) return 'trailing_space';
  if (new TextEncoder().encode(name).length > MAX_NAME_BYTES) return 'too_long';
  return null;
}

/** Whether typing this character into a name field should be blocked. */
export function isForbiddenNameChar(char: string): boolean {
  return (FORBIDDEN_NAME_CHARS as readonly string[]).includes(char);
}

/** Normalises a cloud path: POSIX separators, a leading slash, no trailing slash, no . or .. segments. */
export function normalizePath(path: string): string {
  const parts: string[] = [];
  for (const seg of path.replace(/\\/g, '/').split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      parts.pop();
      continue;
    }
    parts.push(seg);
  }
  return '/' + parts.join('/');
}

/** Whether a path contains `..` segments or other traversal; such input is refused, not normalised. */
export function isSafePath(path: string): boolean {
  if (!path.startsWith('/')) return false;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000]/.test(path)) return false;
  return !path.split('/').some((seg) => seg === '..' || seg === '.');
}

export function joinPath(dir: string, name: string): string {
  return dir === '/' || dir === '' ? `/${name}` : `${dir.replace(/\/+$/, '')}/${name}`;
}
export function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}
export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}
/** Whether `path` is `dir` itself or inside it. */
export function isWithin(path: string, dir: string): boolean {
  if (dir === '/') return true;
  return path === dir || path.startsWith(dir + '/');
}
