import { describe, expect, it } from 'vitest';
import {
  BYTE_UNITS,
  formatBytes,
  formatDate,
  formatDateTime,
  graphemes,
  storageLevel,
  truncateTaskName,
  usageColour,
  visualWidth,
} from './index.ts';

describe('formatBytes', () => {
  it('has the units B to YB', () => {
    expect(BYTE_UNITS).toEqual(['B', 'KB', 'MB', 'GB', 'TB', 'PB', 'EB', 'ZB', 'YB']);
  });

  it.each([
    [0, '0 B'],
    [1, '1 B'],
    [9, '9 B'],
    [512, '512 B'],
    [1023, '1023 B'],
    [1023.6, '1.00 KB'],
    [1024, '1.00 KB'],
    [1536, '1.50 KB'],
    [1025, '1.00 KB'],
    [10 * 1024 + 512, '10.50 KB'],
    [1024 * 1024 - 11, '1023.99 KB'],
    [1024 * 1024 - 1, '1.00 MB'],
    [1024 * 1024, '1.00 MB'],
    [1.5 * 1024 ** 3, '1.50 GB'],
    [150 * 1024 ** 3, '150.00 GB'],
    [1024 ** 4 - 1, '1.00 TB'],
    [2.25 * 1024 ** 5, '2.25 PB'],
  ])('%d bytes is %s', (bytes, text) => {
    expect(formatBytes(bytes)).toBe(text);
  });

  it('carries 1023.999 of a unit into the next unit', () => {
    expect(formatBytes(1023.999 * 1024)).toBe('1.00 MB');
    expect(formatBytes(1023.999 * 1024 ** 2)).toBe('1.00 GB');
    expect(formatBytes(1023.999 * 1024 ** 7)).toBe('1.00 YB');
  });

  it('shows every unit boundary as 1.00 of that unit (1 B: bytes are whole)', () => {
    BYTE_UNITS.forEach((unit, i) => {
      expect(formatBytes(1024 ** i), unit).toBe(i === 0 ? '1 B' : `1.00 ${unit}`);
    });
  });

  it('stops at YB', () => {
    expect(formatBytes(1024 ** 9)).toBe('1024.00 YB');
    expect(formatBytes(5000 * 1024 ** 8)).toBe('5000.00 YB');
    expect(formatBytes(1023.999 * 1024 ** 8)).toBe('1024.00 YB');
  });

  it('shows 0 B for nothing, negatives and non-numbers', () => {
    expect(formatBytes(-1)).toBe('0 B');
    expect(formatBytes(-1024)).toBe('0 B');
    expect(formatBytes(Number.NaN)).toBe('0 B');
    expect(formatBytes(Number.POSITIVE_INFINITY)).toBe('0 B');
  });
});

describe('date formatting', () => {
  const instant = new Date('2025-01-05T23:30:07Z');

  it('shows YYYY/MM/DD in the given zone', () => {
    expect(formatDate(instant, 'UTC')).toBe('2025/01/05');
    expect(formatDate(instant, 'Pacific/Auckland')).toBe('2025/01/06');
    expect(formatDate(instant, 'America/New_York')).toBe('2025/01/05');
    expect(formatDate(instant.getTime(), 'Asia/Kolkata')).toBe('2025/01/06');
  });

  it('shows YYYY/MM/DD HH:mm:ss in the given zone, on a 24-hour clock', () => {
    expect(formatDateTime(instant, 'UTC')).toBe('2025/01/05 23:30:07');
    expect(formatDateTime(instant, 'Pacific/Auckland')).toBe('2025/01/06 12:30:07');
    expect(formatDateTime(instant, 'America/New_York')).toBe('2025/01/05 18:30:07');
    expect(formatDateTime(instant, 'Asia/Kolkata')).toBe('2025/01/06 05:00:07');
  });

  it('pads and shows midnight as 00', () => {
    expect(formatDateTime(Date.UTC(2024, 1, 9, 0, 0, 0), 'UTC')).toBe('2024/02/09 00:00:00');
    expect(formatDateTime(Date.UTC(2024, 11, 31, 12, 5, 9), 'UTC')).toBe('2024/12/31 12:05:09');
  });

  it("uses the runtime's zone when none is given", () => {
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    expect(formatDate(instant)).toBe(formatDate(instant, zone));
    expect(formatDateTime(instant)).toBe(formatDateTime(instant, zone));
  });
});

describe('visualWidth', () => {
  it.each([
    ['', 0],
    ['abc', 3],
    ['report 2024.pdf', 15],
    ['日本', 4],
    ['中文文件', 8],
    ['한국어', 6],
    ['カタカナ', 8],
    ['ｶﾀｶﾅ', 4],
    ['ＡＢ', 4],
    ['😀', 2],
    ['🚀', 2],
    ['👍🏽', 2],
    ['👨‍👩‍👧', 2],
    ['❤️', 2],
    ['🇩🇪', 2],
    ['é', 1],
    ['e\u0301', 1],
    ['a日b', 4],
  ])('%j is %i wide', (text, width) => {
    expect(visualWidth(text)).toBe(width);
  });
});

describe('graphemes', () => {
  it('keeps emoji sequences and accented letters whole', () => {
    expect(graphemes('a👨‍👩‍👧e\u0301')).toEqual(['a', '👨‍👩‍👧', 'e\u0301']);
    expect(graphemes('')).toEqual([]);
  });
});

describe('truncateTaskName', () => {
  it('keeps a name exactly 23 wide', () => {
    const name = 'abcdefghijklmnopqrs.txt';
    expect(visualWidth(name)).toBe(23);
    expect(truncateTaskName(name)).toBe(name);
  });

  it('shortens a name 24 wide to its first 7 characters, an ellipsis and its last 6', () => {
    const name = 'abcdefghijklmnopqrst.txt';
    expect(visualWidth(name)).toBe(24);
    expect(truncateTaskName(name)).toBe('abcdefg...st.txt');
  });

  it('counts wide characters as 2 for the threshold and as one character when cutting', () => {
    const eleven = '一二三四五六七八九十百';
    expect(visualWidth(eleven + 'a')).toBe(23);
    expect(truncateTaskName(eleven + 'a')).toBe(eleven + 'a');
    const name = '一二三四五六七八九十百千万.mp4';
    expect(visualWidth(name)).toBe(30);
    expect(truncateTaskName(name)).toBe('一二三四五六七...千万.mp4');
  });

  it('counts emoji as 2 and never cuts one in half', () => {
    const name = '😀😀😀😀😀😀😀😀😀😀😀😀 party.jpg';
    expect(truncateTaskName(name)).toBe('😀😀😀😀😀😀😀...ty.jpg');
    const family = 'family👨‍👩‍👧 holiday pictures 2024.zip';
    expect(truncateTaskName(family)).toBe('family👨‍👩‍👧...24.zip');
  });

  it('keeps a wide name that cutting would not shorten', () => {
    const twelve = '一二三四五六七八九十百千';
    expect(visualWidth(twelve)).toBe(24);
    expect(truncateTaskName(twelve)).toBe(twelve);
    const fourteen = '一二三四五六七八九十百千万亿';
    expect(truncateTaskName(fourteen)).toBe('一二三四五六七...九十百千万亿');
  });
});

describe('usageColour', () => {
  it.each([
    [0, 100, 'normal'],
    [50, 100, 'normal'],
    [50.01, 100, 'warn'],
    [75, 100, 'warn'],
    [3, 4, 'warn'],
    [75.01, 100, 'danger'],
    [100, 100, 'danger'],
    [150, 100, 'danger'],
  ] as const)('%d of %d is %s', (used, total, colour) => {
    expect(usageColour(used, total)).toBe(colour);
  });

  it('is normal when the total is unknown', () => {
    expect(usageColour(10, 0)).toBe('normal');
    expect(usageColour(10, -1)).toBe('normal');
    expect(usageColour(10, Number.NaN)).toBe('normal');
  });
});

describe('storageLevel', () => {
  it.each([
    [0, 10, 'enough'],
    [6.99, 10, 'enough'],
    [7, 10, 'narrow'],
    [8.99, 10, 'narrow'],
    [9, 10, 'hard'],
    [10, 10, 'hard'],
    [12, 10, 'hard'],
  ] as const)('%d of %d is %s', (used, total, level) => {
    expect(storageLevel(used, total)).toBe(level);
  });

  it('is enough when the total is unknown', () => {
    expect(storageLevel(5, 0)).toBe('enough');
    expect(storageLevel(5, Number.NaN)).toBe('enough');
  });
});
