import { describe, expect, it } from 'vitest';
import { unportable } from '../safety/support.ts';
import { conflictLabel, conflictLabels, conflictName } from './conflict-name.ts';

const NOW = new Date(Date.UTC(2026, 10, 28, 11, 9));
const free = () => false;
const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

describe('conflict copy names', () => {
  it('read "stem (conflict date from label).ext"', () => {
    expect(conflictName('report.txt', NOW, 'laptop', free)).toBe('report (conflict 2026-11-28 from laptop).txt');
    expect(conflictName('notes', NOW, 'NAS', free)).toBe('notes (conflict 2026-11-28 from NAS)');
    expect(conflictName('.bashrc', NOW, 'NAS', free)).toBe('.bashrc (conflict 2026-11-28 from NAS)');
    expect(conflictName('archive.tar.gz', NOW, 'NAS', free)).toBe('archive.tar (conflict 2026-11-28 from NAS).gz');
  });

  it('keep labels short and free of what a disk refuses (the account "p2 (/tmp/x/p2)", a WebDAV URL)', () => {
    const local = conflictName('f.txt', NOW, 'p2 (/tmp/x/p2)', free);
    expect(local).toBe('f (conflict 2026-11-28 from p2 ( tmp x p2)).txt');
    expect(unportable(local)).toBeNull();
    const dav = conflictName('f.txt', NOW, 'WebDAV (https://dav.example.com:8443/u)', free);
    expect(unportable(dav)).toBeNull();
    expect(dav).toBe('f (conflict 2026-11-28 from WebDAV (https dav.exampl).txt');
    expect(conflictLabel('a*b?c"d<e>f|g\\h:i')).toBe('a b c d e f g h i');
    expect(conflictLabel('\u202eevil\u202c\u0007 label. ')).toBe('evil label');
    expect(conflictName('f.txt', NOW, '...', free)).toBe('f (conflict 2026-11-28 from other side).txt');
  });

  it('make a name the other disks refuse portable: characters, trailing dots, reserved device names', () => {
    expect(conflictName('a:b?.txt', NOW, 'NAS', free)).toBe('a_b_ (conflict 2026-11-28 from NAS).txt');
    expect(conflictName('notes.', NOW, 'NAS', free)).toBe('notes (conflict 2026-11-28 from NAS)');
    expect(conflictName('notes. ', NOW, 'NAS', free)).toBe('notes (conflict 2026-11-28 from NAS)');
    expect(conflictName('CON.tar.gz', NOW, 'NAS', free)).toBe('_CON.tar (conflict 2026-11-28 from NAS).gz');
    expect(conflictName('nul.txt', NOW, 'NAS', free)).toBe('nul (conflict 2026-11-28 from NAS).txt');
    for (const n of ['a:b?.txt', 'notes.', 'CON.tar.gz', 'nul.txt', 'x\u0001y.txt', 'tail .md'])
      expect(unportable(conflictName(n, NOW, 'NAS', free)), n).toBeNull();
  });

  it('are numbered where the name is taken in the folder', () => {
    const taken = new Set([
      'report (conflict 2026-11-28 from laptop).txt',
      'report (conflict 2026-11-28 from laptop 2).txt',
    ]);
    expect(conflictName('report.txt', NOW, 'laptop', (c) => taken.has(c))).toBe(
      'report (conflict 2026-11-28 from laptop 3).txt',
    );
  });

  it('stay within each side’s limit: bytes on disks, characters elsewhere, cutting the stem and keeping the extension', () => {
    const ascii = 'a'.repeat(251) + '.txt';
    const cut = conflictName(ascii, NOW, 'laptop', free);
    expect(bytes(cut)).toBe(255);
    expect(cut.endsWith(' (conflict 2026-11-28 from laptop).txt')).toBe(true);

    // 84 three-byte characters: 252 bytes but 84 characters.
    const cjk = '文'.repeat(84) + '.md';
    const onDisk = conflictName(cjk, NOW, 'laptop', free, [{ max: 255, unit: 'bytes' }]);
    expect(bytes(onDisk)).toBeLessThanOrEqual(255);
    expect(onDisk.endsWith('.md')).toBe(true);
    expect(onDisk.startsWith('文')).toBe(true);
    // A cloud counting characters keeps the whole stem.
    expect(conflictName(cjk, NOW, 'laptop', free, [{ max: 255, unit: 'chars' }])).toBe(
      `${'文'.repeat(84)} (conflict 2026-11-28 from laptop).md`,
    );
    // Both sides' limits hold at once.
    const both = conflictName(cjk, NOW, 'laptop', free, [
      { max: 255, unit: 'chars' },
      { max: 255, unit: 'bytes' },
    ]);
    expect(both).toBe(onDisk);

    // Whole characters only: an accent stays with its letter, an emoji is never split.
    const accents = 'e\u0301'.repeat(100) + '.txt';
    const a = conflictName(accents, NOW, 'laptop', free);
    expect(bytes(a)).toBeLessThanOrEqual(255);
    expect(a.split(' (conflict')[0]).toMatch(/^(e\u0301)+$/);
    const emoji = '😀'.repeat(60) + '.png';
    const e = conflictName(emoji, NOW, 'laptop', free, [{ max: 100, unit: 'chars' }]);
    expect(e.length).toBeLessThanOrEqual(100);
    expect(e.split(' (conflict')[0]).toMatch(/^(😀)+$/u);
    expect(e.endsWith('.png')).toBe(true);
    for (const n of [cut, onDisk, a]) expect(unportable(n)).toBeNull();
  });

  it('a label of 24 characters at most; sides labelled alike are told apart', () => {
    expect(conflictLabel('My very long cloud alias that goes on and on')).toBe('My very long cloud alias');
    expect(
      conflictLabels({ source: 'Local folder', target: 'Local folder' }, { source: '/x/p1', target: '/x/p2' }),
    ).toEqual({
      source: 'p1',
      target: 'p2',
    });
    expect(conflictLabels({ source: 'Local', target: 'local' }, { source: '/', target: '/' })).toEqual({
      source: 'Local source',
      target: 'local target',
    });
    expect(conflictLabels(undefined, { source: '/a', target: '/b' })).toEqual({ source: 'source', target: 'target' });
    expect(conflictLabels({ source: 'laptop', target: 'Dropbox' }, { source: '/', target: '/' })).toEqual({
      source: 'laptop',
      target: 'Dropbox',
    });
  });
});
