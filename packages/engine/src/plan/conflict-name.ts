import { DEFAULT_NAME_LIMIT, type NameLimit } from '@skyferry/providers';

/**
 * Names of two-way conflict copies: "report (conflict 2026-11-28 from laptop).txt". The copy is
 * written to both sides, so its name must be valid on both backends and on any disk a user may
 * later copy it to (Windows, macOS, Linux): none of / \ : * ? " < > | or control characters, no
 * trailing dot or space, within each side's name-length limit (bytes or characters), and not taken
 * in the folder on either side. The original's extension stays last, so the copy opens like it.
 */

/** Characters no Windows, macOS or Linux disk takes in a name, and control characters. */
// eslint-disable-next-line no-control-regex
const UNPORTABLE = /[/\\:*?"<>|\u0000-\u001f\u007f-\u009f]/g;
/** Invisible characters that reorder or hide text: a label must read as it is. */
const INVISIBLE = /[\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g;
/** An extension kept as such: a dot and 1 to 16 characters, none a dot or a space. */
const EXTENSION = /\.[^.\s]{1,16}$/;
/** Device names Windows reserves, whatever the extension ("CON.tar.gz" is CON). */
const RESERVED = /^(con|prn|aux|nul|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3])$/i;
/** Longest side label, in characters. */
const LABEL_MAX = 24;

const encoder = new TextEncoder();

/** The size of a name in a limit's unit (characters: UTF-16 code units, as services count them). */
function sizeIn(unit: NameLimit['unit'], s: string): number {
  return unit === 'bytes' ? encoder.encode(s).length : s.length;
}

/** The user-perceived characters of a string (a letter and its accents stay together). */
function graphemes(s: string): string[] {
  return Array.from(new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(s), (g) => g.segment);
}

/** Drops what would end a name badly (Windows strips trailing dots and spaces). */
function trimEnd(s: string): string {
  return s.replace(/[\s.]+$/u, '');
}

/**
 * A side's label as conflict names show it: the cloud's alias or kind, made short and portable
 * (characters a disk refuses become spaces, at most 24 characters). Empty when nothing is left.
 */
export function conflictLabel(raw: string): string {
  const clean = raw.normalize('NFC').replace(INVISIBLE, '').replace(UNPORTABLE, ' ').replace(/\s+/gu, ' ').trim();
  const g = graphemes(clean);
  const short = g.length > LABEL_MAX ? g.slice(0, LABEL_MAX).join('') : clean;
  return trimEnd(short.replace(/^[\s.]+/u, ''));
}

/**
 * The labels of both sides in conflict names. Sides whose labels read the same (two local
 * folders) are told apart by their folders' names, else by "source" and "target".
 */
export function conflictLabels(
  names: { source: string; target: string } | undefined,
  roots: { source: string; target: string },
): { source: string; target: string } {
  const source = conflictLabel(names?.source ?? '') || 'source';
  const target = conflictLabel(names?.target ?? '') || 'target';
  if (source.toLowerCase() !== target.toLowerCase()) return { source, target };
  const base = (p: string) => conflictLabel(p.slice(p.lastIndexOf('/') + 1));
  const s = base(roots.source);
  const t = base(roots.target);
  if (s && t && s.toLowerCase() !== t.toLowerCase()) return { source: s, target: t };
  return { source: `${source} source`, target: `${target} target` };
}

/** The longest start of `stem` (whole characters) that fits `room` in every limit. */
function fit(stem: string, room: (limit: NameLimit) => number, limits: readonly NameLimit[]): string {
  if (limits.every((l) => sizeIn(l.unit, stem) <= room(l))) return stem;
  const g = graphemes(stem);
  let lo = 0;
  let hi = g.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    const s = g.slice(0, mid).join('');
    if (limits.every((l) => sizeIn(l.unit, s) <= room(l))) lo = mid;
    else hi = mid - 1;
  }
  return g.slice(0, lo).join('');
}

/**
 * A conflict copy's name for `name`: "stem (conflict YYYY-MM-DD from label).ext", numbered
 * ("... from label 2)") where `taken` says a name is in use in the folder on either side. The stem
 * is cut (whole characters) to keep the name within every limit; the label is expected short
 * (`conflictLabel`). Dates are UTC.
 */
export function conflictName(
  name: string,
  now: Date,
  label: string,
  taken: (candidate: string) => boolean,
  limits: readonly NameLimit[] = [DEFAULT_NAME_LIMIT],
): string {
  const from = conflictLabel(label) || 'other side';
  const clean = name.replace(INVISIBLE, '').replace(UNPORTABLE, '_');
  const m = EXTENSION.exec(clean);
  const ext = m && m.index > 0 ? m[0] : '';
  let stem = trimEnd(clean.slice(0, clean.length - ext.length));
  // "CON.tar (conflict ...).gz" is CON to Windows; "CON (conflict ...)" is not.
  const dot = stem.indexOf('.');
  if (dot >= 0 && RESERVED.test(trimEnd(stem.slice(0, dot)))) stem = `_${stem}`;
  const p = (n: number) => String(n).padStart(2, '0');
  const date = `${now.getUTCFullYear()}-${p(now.getUTCMonth() + 1)}-${p(now.getUTCDate())}`;
  for (let i = 1; ; i++) {
    const tail = `(conflict ${date} from ${from}${i > 1 ? ` ${i}` : ''})${ext}`;
    const cut = trimEnd(fit(stem, (l) => l.max - sizeIn(l.unit, ` ${tail}`), limits));
    const candidate = cut ? `${cut} ${tail}` : tail;
    if (!taken(candidate)) return candidate;
  }
}
