import { STORAGE_BAR, TASK_NAME_TRUNCATION, USAGE_COLOUR } from './constants.ts';
import { wallClockAt } from './time.ts';

export const BYTE_UNITS = ['B', 'KB', 'MB', 'GB', 'TB', 'PB', 'EB', 'ZB', 'YB'] as const;

/** Bytes as B to YB, base 1024, 2 decimals ("1.50 MB"); whole bytes below 1 KB ("9 B", never "9.00 B"); 0 is "0 B". */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes <= 0) return '0 B';
  let i = Math.floor(Math.log(bytes) / Math.log(1024));
  i = Math.max(0, Math.min(i, BYTE_UNITS.length - 1));
  if (i === 0) {
    // A byte has no fraction; 1023.5 bytes rounds up into the next unit like any other carry.
    if (Math.round(bytes) < 1024) return `${Math.round(bytes)} B`;
    i = 1;
  }
  let value = bytes / 1024 ** i;
  // 1023.999 KB rounds to 1024.00 KB: carry it into the next unit.
  if (Number(value.toFixed(2)) >= 1024 && i < BYTE_UNITS.length - 1) {
    i += 1;
    value = bytes / 1024 ** i;
  }
  return `${value.toFixed(2)} ${BYTE_UNITS[i]}`;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** YYYY/MM/DD in a time zone (default: the runtime's). */
export function formatDate(instant: Date | number, timeZone?: string): string {
  const w = wallClockAt(instant, timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone);
  return `${w.year}/${pad(w.month)}/${pad(w.day)}`;
}

/** YYYY/MM/DD HH:mm:ss in a time zone (default: the runtime's). */
export function formatDateTime(instant: Date | number, timeZone?: string): string {
  const w = wallClockAt(instant, timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone);
  return `${w.year}/${pad(w.month)}/${pad(w.day)} ${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}`;
}

/** Whether a code point is shown double-width (East Asian wide and fullwidth, emoji). */
export function isWideCodePoint(cp: number): boolean {
  return (
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0x303e) ||
    (cp >= 0x3041 && cp <= 0x33ff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0xa000 && cp <= 0xa4cf) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f1e6 && cp <= 0x1f1ff) ||
    (cp >= 0x1f300 && cp <= 0x1f64f) ||
    (cp >= 0x1f680 && cp <= 0x1f6ff) ||
    (cp >= 0x1f900 && cp <= 0x1f9ff) ||
    (cp >= 0x1fa70 && cp <= 0x1faff) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  );
}

/** Whether a code point takes no column of its own (combining marks, joiners, variation selectors, skin tones). */
export function isZeroWidthCodePoint(cp: number): boolean {
  return (
    (cp >= 0x0300 && cp <= 0x036f) ||
    (cp >= 0x200b && cp <= 0x200f) ||
    (cp >= 0xfe00 && cp <= 0xfe0f) ||
    (cp >= 0x1f3fb && cp <= 0x1f3ff) ||
    (cp >= 0xe0020 && cp <= 0xe007f) ||
    (cp >= 0xe0100 && cp <= 0xe01ef)
  );
}

const segmenter =
  typeof Intl.Segmenter === 'function' ? new Intl.Segmenter(undefined, { granularity: 'grapheme' }) : null;

/** The user-perceived characters of a text (an emoji sequence or a letter with its accents is one). */
export function graphemes(text: string): string[] {
  if (!segmenter) return Array.from(text);
  return Array.from(segmenter.segment(text), (s) => s.segment);
}

function graphemeWidth(grapheme: string): number {
  let width = 0;
  for (const ch of grapheme) {
    const cp = ch.codePointAt(0) ?? 0;
    // U+FE0F asks for emoji presentation, which is shown double-width.
    if (isWideCodePoint(cp) || cp === 0xfe0f) return 2;
    if (!isZeroWidthCodePoint(cp)) width = 1;
  }
  return width;
}

/** Visual width: wide characters and emoji count 2, combining marks and joiners 0, others 1. */
export function visualWidth(text: string): number {
  let width = 0;
  for (const g of graphemes(text)) width += graphemeWidth(g);
  return width;
}

/**
 * A task file name over 23 wide-aware columns becomes its first 7 characters, "...", and its last 6
 * (characters are user-perceived, so an emoji or accented letter is never cut in half). A name of 13
 * characters or fewer is kept whole: cutting it would not make it shorter.
 */
export function truncateTaskName(name: string): string {
  const { threshold, head, tail } = TASK_NAME_TRUNCATION;
  if (visualWidth(name) <= threshold) return name;
  const chars = graphemes(name);
  if (chars.length <= head + tail) return name;
  return `${chars.slice(0, head).join('')}...${chars.slice(-tail).join('')}`;
}

export type UsageColour = 'danger' | 'warn' | 'normal';
/** A cloud's usage bar colour: above .75 danger, above .5 warn. */
export function usageColour(used: number, total: number): UsageColour {
  if (!(total > 0)) return 'normal';
  const ratio = used / total;
  if (ratio > USAGE_COLOUR.danger) return 'danger';
  if (ratio > USAGE_COLOUR.warn) return 'warn';
  return 'normal';
}

export type StorageLevel = 'enough' | 'narrow' | 'hard';
/** The storage bar: under .7 enough, under .9 narrow, otherwise hard. */
export function storageLevel(used: number, total: number): StorageLevel {
  if (!(total > 0)) return 'enough';
  const ratio = used / total;
  if (ratio < STORAGE_BAR.enough) return 'enough';
  if (ratio < STORAGE_BAR.narrow) return 'narrow';
  return 'hard';
}
