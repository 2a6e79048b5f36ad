import { RemoteFileType, isForbiddenNameChar, type FileItem } from '@skyferry/contract';

/** Sortable columns of the file list. */
export type SortKey = 'name' | 'size' | 'modified';
export type SortDir = 'asc' | 'desc';
export interface Sort {
  key: SortKey;
  dir: SortDir;
}

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });
/** Above this many entries names compare by code point of their lower case (a collator is too slow for 100 000). */
export const COLLATOR_LIMIT = 20_000;

/**
 * The list in display order: folders before files (in either direction), then by the column, with
 * the name breaking ties so the order is stable.
 */
export function sortItems(items: readonly FileItem[], sort: Sort): FileItem[] {
  const sign = sort.dir === 'asc' ? 1 : -1;
  const keyed = items.map((item) => ({ item, name: item.name.toLowerCase() }));
  const byName =
    items.length <= COLLATOR_LIMIT
      ? (a: { item: FileItem }, b: { item: FileItem }) => collator.compare(a.item.name, b.item.name)
      : (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  keyed.sort((a, b) => {
    if (a.item.type !== b.item.type) return a.item.type === RemoteFileType.folder ? -1 : 1;
    let c = 0;
    if (sort.key === 'size') c = a.item.size - b.item.size;
    else if (sort.key === 'modified') c = a.item.modified - b.item.modified;
    if (c === 0) c = byName(a, b);
    return c * sign;
  });
  return keyed.map((k) => k.item);
}

/** A click on a column header: the same column flips direction; a new one starts ascending (dates newest first). */
export function nextSort(current: Sort, key: SortKey): Sort {
  if (current.key === key) return { key, dir: current.dir === 'asc' ? 'desc' : 'asc' };
  return { key, dir: key === 'modified' ? 'desc' : 'asc' };
}

/** The path bar: the root and every ancestor of `path`, each with the path it opens. */
export function crumbs(path: string): Array<{ name: string; path: string }> {
  const parts = path.split('/').filter(Boolean);
  const out = [{ name: '', path: '/' }];
  let acc = '';
  for (const p of parts) {
    acc += `/${p}`;
    out.push({ name: p, path: acc });
  }
  return out;
}

/** Selection over the displayed list: a set of paths, an anchor for shift ranges and a focus row. */
export interface Selection {
  selected: ReadonlySet<string>;
  anchor: number | null;
  focus: number | null;
}

export const EMPTY_SELECTION: Selection = { selected: new Set(), anchor: null, focus: null };

export interface Modifiers {
  /** Ctrl on Windows/Linux, Cmd on Mac: toggle one row. */
  toggle?: boolean;
  /** Shift: extend from the anchor. */
  range?: boolean;
}

function rangeOf(paths: readonly string[], a: number, b: number): Set<string> {
  const [from, to] = a <= b ? [a, b] : [b, a];
  return new Set(paths.slice(from, to + 1));
}

/** A mouse click on row `index` (plain, ctrl/cmd, shift, or ctrl+shift to add a range). */
export function clickRow(sel: Selection, paths: readonly string[], index: number, mods: Modifiers = {}): Selection {
  const path = paths[index];
  if (path === undefined) return sel;
  if (mods.range && sel.anchor !== null) {
    const range = rangeOf(paths, sel.anchor, index);
    const selected = mods.toggle ? new Set([...sel.selected, ...range]) : range;
    return { selected, anchor: sel.anchor, focus: index };
  }
  if (mods.toggle) {
    const selected = new Set(sel.selected);
    if (selected.has(path)) selected.delete(path);
    else selected.add(path);
    return { selected, anchor: index, focus: index };
  }
  return { selected: new Set([path]), anchor: index, focus: index };
}

/**
 * Keyboard on the list: arrows, Home/End and PageUp/PageDown move the focus (selecting it; with
 * Shift extending from the anchor; with Ctrl/Cmd only moving the focus), Space toggles the focused
 * row, Ctrl/Cmd+A selects all, Escape clears. Returns null for keys it does not handle.
 */
export function keyDown(
  sel: Selection,
  paths: readonly string[],
  key: string,
  mods: Modifiers & { pageSize?: number } = {},
): Selection | null {
  const n = paths.length;
  if (key === 'Escape') return { selected: new Set(), anchor: null, focus: sel.focus };
  if (n === 0) return null;
  if (key === 'a' && mods.toggle) return { selected: new Set(paths), anchor: 0, focus: sel.focus ?? 0 };
  if (key === ' ' && sel.focus !== null) return clickRow(sel, paths, sel.focus, { toggle: true });
  const current = sel.focus ?? -1;
  const page = Math.max(1, mods.pageSize ?? 10);
  let next: number;
  switch (key) {
    case 'ArrowDown':
      next = Math.min(n - 1, current + 1);
      break;
    case 'ArrowUp':
      next = current < 0 ? 0 : Math.max(0, current - 1);
      break;
    case 'Home':
      next = 0;
      break;
    case 'End':
      next = n - 1;
      break;
    case 'PageDown':
      next = Math.min(n - 1, Math.max(0, current) + page);
      break;
    case 'PageUp':
      next = Math.max(0, current - page);
      break;
    default:
      return null;
  }
  if (mods.range) {
    const anchor = sel.anchor ?? Math.max(0, current);
    return { selected: rangeOf(paths, anchor, next), anchor, focus: next };
  }
  if (mods.toggle) return { ...sel, focus: next };
  return { selected: new Set([paths[next] as string]), anchor: next, focus: next };
}

/** Keeps only the selected paths still listed (after a refresh, delete or rename). */
export function pruneSelection(sel: Selection, paths: readonly string[]): Selection {
  const present = new Set(paths);
  const selected = new Set([...sel.selected].filter((p) => present.has(p)));
  const focus = sel.focus !== null && sel.focus < paths.length ? sel.focus : null;
  return { selected, anchor: focus, focus };
}

/** Text with the forbidden name characters taken out (for pasted names). */
export function stripForbidden(text: string): string {
  return [...text].filter((c) => !isForbiddenNameChar(c)).join('');
}

/**
 * What a key press in a name field does: block it when it would type a forbidden character
 * (spec section 5: "Folder-name key presses with these characters are blocked").
 */
export function blocksKey(key: string, mods: { ctrl?: boolean; meta?: boolean; alt?: boolean } = {}): boolean {
  if (mods.ctrl || mods.meta) return false;
  return key.length === 1 && isForbiddenNameChar(key);
}

/** A name for a new item that does not clash with the listed ones: "New folder", "New folder (2)", ... */
export function uniqueName(base: string, taken: Iterable<string>): string {
  const names = new Set([...taken].map((n) => n.toLowerCase()));
  if (!names.has(base.toLowerCase())) return base;
  for (let i = 2; ; i += 1) {
    const candidate = `${base} (${i})`;
    if (!names.has(candidate.toLowerCase())) return candidate;
  }
}

/** A file's extension, lower case, without the dot ('' for none). */
export function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
}

export const IMAGE_EXTENSIONS = new Set([
  'jpg',
  'jpeg',
  'png',
  'gif',
  'webp',
  'avif',
  'bmp',
  'tif',
  'tiff',
  'heic',
  'heif',
]);
export function isImage(item: Pick<FileItem, 'name' | 'type'>): boolean {
  return item.type === RemoteFileType.file && IMAGE_EXTENSIONS.has(extensionOf(item.name));
}
