import { describe, expect, it } from 'vitest';
import type { FileItem } from '@skyferry/contract';
import {
  COLLATOR_LIMIT,
  EMPTY_SELECTION,
  blocksKey,
  clickRow,
  crumbs,
  keyDown,
  nextSort,
  pruneSelection,
  sortItems,
  stripForbidden,
  uniqueName,
} from './model.ts';

const file = (name: string, size = 0, modified = 0, type: 0 | 1 = 1): FileItem => ({
  id: `/${name}`,
  name,
  path: `/${name}`,
  type,
  size,
  modified,
  mime_type: null,
});
const names = (items: FileItem[]) => items.map((i) => i.name);

describe('sorting', () => {
  const items = [
    file('b.txt', 30, 3),
    file('Zeta', 0, 9, 0),
    file('a10.txt', 10, 2),
    file('a2.txt', 20, 1),
    file('alpha', 0, 1, 0),
  ];

  it('keeps folders first in both directions and sorts names naturally', () => {
    expect(names(sortItems(items, { key: 'name', dir: 'asc' }))).toEqual([
      'alpha',
      'Zeta',
      'a2.txt',
      'a10.txt',
      'b.txt',
    ]);
    expect(names(sortItems(items, { key: 'name', dir: 'desc' }))).toEqual([
      'Zeta',
      'alpha',
      'b.txt',
      'a10.txt',
      'a2.txt',
    ]);
  });

  it('sorts by size and by modified date, the name breaking ties', () => {
    expect(names(sortItems(items, { key: 'size', dir: 'asc' }))).toEqual([
      'alpha',
      'Zeta',
      'a10.txt',
      'a2.txt',
      'b.txt',
    ]);
    expect(names(sortItems(items, { key: 'modified', dir: 'desc' }))).toEqual([
      'Zeta',
      'alpha',
      'b.txt',
      'a10.txt',
      'a2.txt',
    ]);
  });

  it('sorts 100 000 entries by code point of the lower-cased name (the fast comparison, not the collator)', () => {
    const many = Array.from({ length: COLLATOR_LIMIT * 5 }, (_, i) => file(`F${(i * 7919) % 100_000}`));
    const sorted = sortItems(many, { key: 'name', dir: 'asc' });
    for (let i = 1; i < sorted.length; i += 1) {
      expect((sorted[i - 1] as FileItem).name.toLowerCase() <= (sorted[i] as FileItem).name.toLowerCase()).toBe(true);
    }
    // A numeric collator would put F2 before F10; code-point order puts F10 first.
    const order = sorted.map((f) => f.name);
    expect(order.indexOf('F10')).toBeLessThan(order.indexOf('F2'));
  });

  it('a header click flips the direction of its column; a new column starts ascending (dates newest first)', () => {
    expect(nextSort({ key: 'name', dir: 'asc' }, 'name')).toEqual({ key: 'name', dir: 'desc' });
    expect(nextSort({ key: 'name', dir: 'desc' }, 'size')).toEqual({ key: 'size', dir: 'asc' });
    expect(nextSort({ key: 'name', dir: 'asc' }, 'modified')).toEqual({ key: 'modified', dir: 'desc' });
  });
});

describe('path bar', () => {
  it('lists the root and every ancestor with its path', () => {
    expect(crumbs('/')).toEqual([{ name: '', path: '/' }]);
    expect(crumbs('/a/b c/d')).toEqual([
      { name: '', path: '/' },
      { name: 'a', path: '/a' },
      { name: 'b c', path: '/a/b c' },
      { name: 'd', path: '/a/b c/d' },
    ]);
  });
});

describe('selection with the mouse', () => {
  const paths = ['/a', '/b', '/c', '/d', '/e'];
  const sel = (s: { selected: ReadonlySet<string> }) => [...s.selected].sort();

  it('a click selects one row, Ctrl/Cmd toggles, Shift extends from the anchor', () => {
    let s = clickRow(EMPTY_SELECTION, paths, 1);
    expect(sel(s)).toEqual(['/b']);
    s = clickRow(s, paths, 3, { toggle: true });
    expect(sel(s)).toEqual(['/b', '/d']);
    s = clickRow(s, paths, 3, { toggle: true });
    expect(sel(s)).toEqual(['/b']);
    s = clickRow(clickRow(EMPTY_SELECTION, paths, 1), paths, 3, { range: true });
    expect(sel(s)).toEqual(['/b', '/c', '/d']);
    s = clickRow(s, paths, 0, { range: true });
    expect(sel(s)).toEqual(['/a', '/b']);
    s = clickRow(clickRow(s, paths, 4, { toggle: true }), paths, 3, { range: true, toggle: true });
    expect(sel(s)).toEqual(['/a', '/b', '/d', '/e']);
  });
});

describe('selection with the keyboard', () => {
  const paths = ['/a', '/b', '/c', '/d', '/e'];
  const sel = (s: { selected: ReadonlySet<string> } | null) => [...(s?.selected ?? [])].sort();

  it('arrows move and select, Shift extends, Ctrl moves the focus only, Space toggles', () => {
    let s = keyDown(EMPTY_SELECTION, paths, 'ArrowDown');
    expect([sel(s), s?.focus]).toEqual([['/a'], 0]);
    s = keyDown(s!, paths, 'ArrowDown', { range: true });
    s = keyDown(s!, paths, 'ArrowDown', { range: true });
    expect(sel(s)).toEqual(['/a', '/b', '/c']);
    s = keyDown(s!, paths, 'ArrowDown', { toggle: true });
    expect([sel(s), s?.focus]).toEqual([['/a', '/b', '/c'], 3]);
    s = keyDown(s!, paths, ' ');
    expect(sel(s)).toEqual(['/a', '/b', '/c', '/d']);
    s = keyDown(s!, paths, 'End');
    expect([sel(s), s?.focus]).toEqual([['/e'], 4]);
    s = keyDown(s!, paths, 'PageUp', { pageSize: 2 });
    expect(s?.focus).toBe(2);
    s = keyDown(s!, paths, 'a', { toggle: true });
    expect(sel(s)).toEqual(paths);
    s = keyDown(s!, paths, 'Escape');
    expect(sel(s)).toEqual([]);
    expect(keyDown(s!, paths, 'x')).toBeNull();
  });

  it('drops paths that left the list', () => {
    const s = clickRow(clickRow(EMPTY_SELECTION, paths, 0), paths, 4, { toggle: true });
    expect([...pruneSelection(s, ['/a', '/b']).selected]).toEqual(['/a']);
  });
});

describe('names', () => {
  it('blocks each forbidden character as a key press, not shortcuts or other keys', () => {
    for (const c of ['/', ':', '*', '?', '\\', '"', '<', '>', '|']) expect(blocksKey(c)).toBe(true);
    for (const k of ['a', 'Enter', 'Backspace', '.', ' ', '-']) expect(blocksKey(k)).toBe(false);
    expect(blocksKey('?', { ctrl: true })).toBe(false);
  });

  it('strips forbidden characters from pasted text', () => {
    expect(stripForbidden('a:b/c*d?e"f<g>h|i\\j')).toBe('abcdefghij');
  });

  it('picks a free name for a new folder', () => {
    expect(uniqueName('New folder', ['a'])).toBe('New folder');
    expect(uniqueName('New folder', ['new folder', 'New folder (2)'])).toBe('New folder (3)');
  });
});
