import { describe, expect, it } from 'vitest';
import {
  FORBIDDEN_NAME_CHARS,
  MAX_NAME_BYTES,
  NAME_PROBLEM_MESSAGE,
  baseName,
  cloudPathSchema,
  entryNameSchema,
  isForbiddenNameChar,
  isSafePath,
  isWithin,
  joinPath,
  normalizePath,
  parentOf,
  validateName,
} from './index.ts';
import { en } from './i18n/en.ts';

const utf8Bytes = (s: string) => new TextEncoder().encode(s).length;

describe('validateName (spec section 5)', () => {
  it('accepts ordinary names, including Unicode, inner spaces, leading dots and many dots', () => {
    for (const name of [
      'a',
      'report.pdf',
      'My Photos',
      '.bashrc',
      '...',
      'a..b',
      '日本語のファイル.txt',
      'été 2024',
      '😀.png',
      '-',
      '#1 & [x]',
    ]) {
      expect(validateName(name), name).toBeNull();
    }
  });

  it('rejects empty and blank names', () => {
    expect(validateName('')).toBe('empty');
    expect(validateName(' ')).toBe('empty');
    expect(validateName('   ')).toBe('empty');
    expect(validateName('\t')).toBe('empty');
  });

  it('rejects . and ..', () => {
    expect(validateName('.')).toBe('dot_name');
    expect(validateName('..')).toBe('dot_name');
  });

  it.each(['/', ':', '*', '?', '\\', '"', '<', '>', '|'])('rejects a name containing %s anywhere', (ch) => {
    expect(validateName(`${ch}name`)).toBe('forbidden_chars');
    expect(validateName(`na${ch}me`)).toBe('forbidden_chars');
    expect(validateName(`name${ch}`)).toBe('forbidden_chars');
    expect(validateName(ch)).toBe('forbidden_chars');
  });

  it('rejects control characters', () => {
    expect(validateName('a\u0000b')).toBe('control_chars');
    expect(validateName('a\nb')).toBe('control_chars');
    expect(validateName('a\u001fb')).toBe('control_chars');
    expect(validateName('a\u007fb')).toBe('control_chars');
  });

  it('rejects trailing spaces but not leading ones', () => {
    expect(validateName('name ')).toBe('trailing_space');
    expect(validateName('name.txt  ')).toBe('trailing_space');
    expect(validateName('name\u00a0')).toBe('trailing_space');
    expect(validateName(' name')).toBeNull();
  });

  it('limits names to 255 bytes of UTF-8, not 255 characters', () => {
    expect(MAX_NAME_BYTES).toBe(255);
    expect(validateName('a'.repeat(255))).toBeNull();
    expect(validateName('a'.repeat(256))).toBe('too_long');
    // é is 2 bytes: 127 of them and one ASCII letter make 255 bytes; 128 make 256.
    expect(utf8Bytes('é'.repeat(127) + 'a')).toBe(255);
    expect(validateName('é'.repeat(127) + 'a')).toBeNull();
    expect(validateName('é'.repeat(128))).toBe('too_long');
    // 日 is 3 bytes: 85 make 255, 86 make 258 although only 86 characters.
    expect(validateName('日'.repeat(85))).toBeNull();
    expect(validateName('日'.repeat(86))).toBe('too_long');
    // 😀 is 4 bytes (2 UTF-16 units): 63 make 252; with 3 letters 255; with 4 letters 256.
    expect(validateName('😀'.repeat(63) + 'abc')).toBeNull();
    expect(validateName('😀'.repeat(63) + 'abcd')).toBe('too_long');
  });
});

describe('isForbiddenNameChar', () => {
  it('blocks exactly / : * ? \\ " < > |', () => {
    expect([...FORBIDDEN_NAME_CHARS].sort()).toEqual(['/', ':', '*', '?', '\\', '"', '<', '>', '|'].sort());
    for (const ch of FORBIDDEN_NAME_CHARS) expect(isForbiddenNameChar(ch)).toBe(true);
  });
  it('lets every other printable ASCII character through', () => {
    for (let cp = 0x20; cp < 0x7f; cp++) {
      const ch = String.fromCharCode(cp);
      expect(isForbiddenNameChar(ch), ch).toBe('/:*?\\"<>|'.includes(ch));
    }
    expect(isForbiddenNameChar('日')).toBe(false);
    expect(isForbiddenNameChar('')).toBe(false);
  });
});

describe('entryNameSchema', () => {
  it('accepts valid names and reports the message key of invalid ones', () => {
    expect(entryNameSchema.parse('ok.txt')).toBe('ok.txt');
    const result = entryNameSchema.safeParse('a:b');
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toBe('name_forbidden_chars');
    expect(entryNameSchema.safeParse('..').error?.issues[0]?.message).toBe('name_dot');
    expect(entryNameSchema.safeParse('').error?.issues[0]?.message).toBe('name_empty');
    expect(entryNameSchema.safeParse('x ').error?.issues[0]?.message).toBe('name_trailing_space');
    expect(entryNameSchema.safeParse('x'.repeat(256)).error?.issues[0]?.message).toBe('name_too_long');
    expect(entryNameSchema.safeParse('a\u0001').error?.issues[0]?.message).toBe('name_control_chars');
    for (const [problem, key] of Object.entries(NAME_PROBLEM_MESSAGE)) expect(en[key], problem).toMatch(/\S/);
  });
});

describe('path helpers', () => {
  it.each([
    ['', '/'],
    ['/', '/'],
    ['a/b', '/a/b'],
    ['/a/b/', '/a/b'],
    ['//a///b', '/a/b'],
    ['/a/./b', '/a/b'],
    ['/a/../b', '/b'],
    ['/../../a', '/a'],
    ['a\\b\\c', '/a/b/c'],
  ])('normalizePath(%j) is %j', (input, output) => {
    expect(normalizePath(input)).toBe(output);
  });

  it('refuses rather than normalises traversal', () => {
    expect(isSafePath('/')).toBe(true);
    expect(isSafePath('/a/b c/d.txt')).toBe(true);
    expect(isSafePath('/a/..b/c..')).toBe(true);
    expect(isSafePath('a/b')).toBe(false);
    expect(isSafePath('/a/../b')).toBe(false);
    expect(isSafePath('/..')).toBe(false);
    expect(isSafePath('/a/./b')).toBe(false);
    expect(isSafePath('/a\u0000b')).toBe(false);
  });

  it('joins, splits and compares paths', () => {
    expect(joinPath('/', 'a')).toBe('/a');
    expect(joinPath('', 'a')).toBe('/a');
    expect(joinPath('/x', 'a')).toBe('/x/a');
    expect(joinPath('/x/', 'a')).toBe('/x/a');
    expect(parentOf('/a/b/c')).toBe('/a/b');
    expect(parentOf('/a')).toBe('/');
    expect(parentOf('/')).toBe('/');
    expect(baseName('/a/b/c.txt')).toBe('c.txt');
    expect(baseName('/a')).toBe('a');
    expect(baseName('/')).toBe('');
    expect(joinPath(parentOf('/x/y/z'), baseName('/x/y/z'))).toBe('/x/y/z');
  });

  it('knows when a path is inside a folder, without prefix confusion', () => {
    expect(isWithin('/a/b', '/a')).toBe(true);
    expect(isWithin('/a', '/a')).toBe(true);
    expect(isWithin('/ab', '/a')).toBe(false);
    expect(isWithin('/a', '/a/b')).toBe(false);
    expect(isWithin('/anything', '/')).toBe(true);
  });

  it('validates cloud paths in request schemas', () => {
    expect(cloudPathSchema.safeParse('/').success).toBe(true);
    expect(cloudPathSchema.safeParse('/a/b').success).toBe(true);
    expect(cloudPathSchema.safeParse('a/b').success).toBe(false);
    expect(cloudPathSchema.safeParse('/a/../b').success).toBe(false);
    expect(cloudPathSchema.safeParse('/a/./b').success).toBe(false);
    expect(cloudPathSchema.safeParse('/a\u0000').success).toBe(false);
    expect(cloudPathSchema.safeParse('/' + 'a'.repeat(4095)).success).toBe(true);
    expect(cloudPathSchema.safeParse('/' + 'a'.repeat(4096)).success).toBe(false);
  });
});
