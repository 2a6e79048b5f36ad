import { describe, expect, it } from 'vitest';
import { baseName, checkName, cleanPath, isWithin, joinPath, parentPath } from './path.ts';

describe('cloud paths', () => {
  it('normalises and splits paths', () => {
    expect(cleanPath('a//b/')).toBe('/a/b');
    expect(cleanPath('')).toBe('/');
    expect(parentPath('/a/b')).toBe('/a');
    expect(parentPath('/a')).toBe('/');
    expect(baseName('/a/b c.txt')).toBe('b c.txt');
    expect(joinPath('/a', 'b', 'c')).toBe('/a/b/c');
    expect(isWithin('/a', '/a/b')).toBe(true);
    expect(isWithin('/a', '/ab')).toBe(false);
  });

  it('refuses dot segments, NUL and separators in names', () => {
    expect(() => cleanPath('/a/../b')).toThrow(/invalid path segment/);
    expect(() => cleanPath('/a/./b')).toThrow();
    expect(() => checkName('a/b')).toThrow();
    expect(() => checkName('..')).toThrow();
    expect(checkName('...')).toBe('...');
  });
});
