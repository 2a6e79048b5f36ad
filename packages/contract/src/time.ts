/** Wall-clock arithmetic in IANA time zones, with no dependencies (Intl only). */

export interface WallClock {
  year: number;
  month: number; // 1-12
  day: number; // 1-31
  hour: number;
  minute: number;
  second: number;
  weekday: number; // 0 Sunday - 6 Saturday
}

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      weekday: 'short',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

const WEEKDAYS: Record<string, number> = { Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 };

/** Whether the runtime knows this IANA time zone. */
export function isValidTimeZone(timeZone: string): boolean {
  try {
    formatterFor(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** The wall clock at an instant in a time zone. */
export function wallClockAt(instant: Date | number, timeZone: string): WallClock {
  const parts = formatterFor(timeZone).formatToParts(new Date(instant));
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '0';
  return {
    year: Number(get('year')),
    month: Number(get('month')),
    day: Number(get('day')),
    hour: Number(get('hour')) % 24,
    minute: Number(get('minute')),
    second: Number(get('second')),
    weekday: WEEKDAYS[get('weekday')] ?? 0,
  };
}

function wallAsUtc(w: Omit<WallClock, 'weekday'>): number {
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
}

/** The time zone's offset from UTC at an instant, in milliseconds. */
export function offsetAt(instant: number, timeZone: string): number {
  const t = Math.floor(instant / 1000) * 1000;
  return wallAsUtc(wallClockAt(t, timeZone)) - t;
}

/**
 * The instant a wall-clock time happens in a time zone. A time repeated when clocks go back is
 * taken at its first occurrence; a time skipped when clocks go forward moves forward by the gap.
 */
export function zonedTimeToInstant(w: Omit<WallClock, 'weekday'>, timeZone: string): Date {
  const asUtc = wallAsUtc(w);
  const before = offsetAt(asUtc - 36 * 3600_000, timeZone);
  const after = offsetAt(asUtc + 36 * 3600_000, timeZone);
  const candidates = [asUtc - before, asUtc - after]
    .filter((t) => {
      const back = wallClockAt(t, timeZone);
      return wallAsUtc(back) === asUtc;
    })
    .sort((a, b) => a - b);
  return new Date(candidates[0] ?? asUtc - before);
}

export function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** "YYYY-MM-DD HH:mm:ss" of a wall clock (the schedule's start_date format). */
export function formatWallClock(w: Omit<WallClock, 'weekday'>): string {
  return `${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)} ${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}`;
}

const WALL_RE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

/** Parses "YYYY-MM-DD HH:mm:ss"; undefined when malformed or not a real date. */
export function parseWallClock(text: string): Omit<WallClock, 'weekday'> | undefined {
  const m = WALL_RE.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  return { year, month, day, hour, minute, second };
}
