import { FilterError } from './glob.ts';

/**
 * rclone's size and time values (https://rclone.org/docs/#size-option, #time-option): a size is
 * KiB unless a suffix says B, K, M, G, T or P (binary units); an age is seconds unless a suffix
 * says ms, s, m, h, d, w, M (30 days) or y (365 days), and may be a date instead.
 */

const SIZE_UNITS: Record<string, number> = { b: 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30, t: 2 ** 40, p: 2 ** 50 };

/** Bytes of a size: a number is bytes, a string is rclone's syntax ("50k", "1.5G", "100"). */
export function parseSize(value: number | string, rule = String(value)): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) throw new FilterError(rule, 'invalid size');
    return Math.floor(value);
  }
  const m = /^(\d+(?:\.\d*)?|\.\d+)\s*(?:([bkmgtp])(?:i?b)?)?$/i.exec(value.trim());
  if (!m) throw new FilterError(rule, 'invalid size');
  const unit = m[2] ? SIZE_UNITS[m[2].toLowerCase()] : SIZE_UNITS.k;
  return Math.floor(Number(m[1]) * (unit as number));
}

const DAY = 86_400_000;
const AGE_UNITS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: DAY,
  w: 7 * DAY,
  M: 30 * DAY,
  y: 365 * DAY,
};

/** Milliseconds of a duration ("2d", "1h30m", "-1.5h", "3600"), or undefined when it is none. */
function parseDuration(text: string): number | undefined {
  const m = /^([+-]?)((?:(?:\d+(?:\.\d*)?|\.\d+)(?:ms|s|m|h|d|w|M|y))+|\d+(?:\.\d*)?|\.\d+)$/.exec(text);
  if (!m) return undefined;
  const sign = m[1] === '-' ? -1 : 1;
  const body = m[2] as string;
  if (/^[\d.]+$/.test(body)) return sign * Number(body) * 1000;
  let total = 0;
  for (const part of body.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ms|s|m|h|d|w|M|y)/g))
    total += Number(part[1]) * (AGE_UNITS[part[2] as string] as number);
  return sign * total;
}

/**
 * The moment an age points at: `now` minus a duration, or a date as written (RFC 3339, or
 * "2006-01-02", "2006-01-02 15:04:05", "2006-01-02T15:04:05" in local time). Milliseconds since the epoch.
 */
export function parseAge(value: string, now: number, rule = value): number {
  const text = value.trim();
  const d = parseDuration(text);
  if (d !== undefined) return now - d;
  const date = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})?)?$/.exec(text);
  if (date) {
    const [, y, mo, da, h, mi, s, frac, zone] = date;
    const t = zone
      ? Date.parse(text.replace(' ', 'T'))
      : new Date(
          Number(y),
          Number(mo) - 1,
          Number(da),
          Number(h ?? 0),
          Number(mi ?? 0),
          Number(s ?? 0),
          frac ? Math.round(Number(frac) * 1000) : 0,
        ).getTime();
    if (Number.isFinite(t)) return t;
  }
  throw new FilterError(rule, 'invalid age (a duration such as 7d or 2h30m, or a date such as 2024-01-31)');
}
