import { describe, expect, it } from 'vitest';
import {
  daysInMonth,
  formatWallClock,
  isValidTimeZone,
  offsetAt,
  parseWallClock,
  wallClockAt,
  zonedTimeToInstant,
} from './index.ts';

const HOUR = 3_600_000;

describe('isValidTimeZone', () => {
  it('knows IANA zones and refuses made-up ones', () => {
    for (const zone of ['UTC', 'Europe/Berlin', 'America/New_York', 'Pacific/Auckland', 'Asia/Kolkata']) {
      expect(isValidTimeZone(zone), zone).toBe(true);
    }
    for (const zone of ['Mars/Olympus', 'Europe/Nowhere', 'not a zone', '']) {
      expect(isValidTimeZone(zone), zone).toBe(false);
    }
  });
});

describe('wallClockAt', () => {
  it('reads the wall clock of an instant in a zone, with the weekday', () => {
    expect(wallClockAt(new Date('2025-01-05T23:30:00Z'), 'Pacific/Auckland')).toEqual({
      year: 2025,
      month: 1,
      day: 6,
      hour: 12,
      minute: 30,
      second: 0,
      weekday: 1,
    });
    expect(wallClockAt(Date.UTC(2024, 11, 31, 23, 59, 59), 'America/New_York')).toEqual({
      year: 2024,
      month: 12,
      day: 31,
      hour: 18,
      minute: 59,
      second: 59,
      weekday: 2,
    });
  });
  it('shows midnight as hour 0', () => {
    expect(wallClockAt(Date.UTC(2025, 0, 1, 0, 0, 0), 'UTC').hour).toBe(0);
  });
});

describe('offsetAt', () => {
  it.each([
    ['UTC', '2025-01-15T12:00:00Z', 0],
    ['Europe/Berlin', '2025-01-15T12:00:00Z', 1 * HOUR],
    ['Europe/Berlin', '2025-07-15T12:00:00Z', 2 * HOUR],
    ['America/New_York', '2025-01-15T12:00:00Z', -5 * HOUR],
    ['America/New_York', '2025-07-15T12:00:00Z', -4 * HOUR],
    ['Pacific/Auckland', '2025-01-15T12:00:00Z', 13 * HOUR],
    ['Pacific/Auckland', '2025-07-15T12:00:00Z', 12 * HOUR],
    ['Asia/Kolkata', '2025-01-15T12:00:00Z', 5.5 * HOUR],
  ])('%s at %s is %i ms', (zone, instant, offset) => {
    expect(offsetAt(new Date(instant).getTime(), zone)).toBe(offset);
  });
});

describe('zonedTimeToInstant', () => {
  const wall = (year: number, month: number, day: number, hour: number, minute = 0, second = 0) => ({
    year,
    month,
    day,
    hour,
    minute,
    second,
  });

  it('turns an ordinary wall time into its instant', () => {
    expect(zonedTimeToInstant(wall(2025, 7, 1, 12), 'Europe/Berlin').toISOString()).toBe('2025-07-01T10:00:00.000Z');
    expect(zonedTimeToInstant(wall(2025, 1, 1, 0), 'Pacific/Auckland').toISOString()).toBe('2024-12-31T11:00:00.000Z');
    expect(zonedTimeToInstant(wall(2025, 1, 1, 0, 15), 'Asia/Kolkata').toISOString()).toBe('2024-12-31T18:45:00.000Z');
  });

  it('moves a skipped wall time forward by the gap', () => {
    expect(zonedTimeToInstant(wall(2025, 3, 30, 2, 30), 'Europe/Berlin').toISOString()).toBe(
      '2025-03-30T01:30:00.000Z',
    );
    expect(zonedTimeToInstant(wall(2025, 3, 9, 2, 0), 'America/New_York').toISOString()).toBe(
      '2025-03-09T07:00:00.000Z',
    );
  });

  it('takes a repeated wall time at its first occurrence', () => {
    expect(zonedTimeToInstant(wall(2025, 10, 26, 2, 30), 'Europe/Berlin').toISOString()).toBe(
      '2025-10-26T00:30:00.000Z',
    );
    expect(zonedTimeToInstant(wall(2025, 11, 2, 1, 30), 'America/New_York').toISOString()).toBe(
      '2025-11-02T05:30:00.000Z',
    );
  });

  it('round-trips with wallClockAt outside transitions', () => {
    for (const zone of ['Europe/Berlin', 'America/New_York', 'Pacific/Auckland', 'Asia/Kolkata']) {
      for (let t = Date.UTC(2025, 0, 1); t < Date.UTC(2026, 0, 1); t += 7 * 86_400_000 + 3_601_000) {
        const w = wallClockAt(t, zone);
        const back = zonedTimeToInstant(w, zone).getTime();
        expect(wallClockAt(back, zone)).toEqual(w);
      }
    }
  });
});

describe('daysInMonth', () => {
  it('knows month lengths and leap years', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12].map((m) => daysInMonth(2025, m))).toEqual([
      31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31,
    ]);
    expect(daysInMonth(2024, 2)).toBe(29);
    expect(daysInMonth(2000, 2)).toBe(29);
    expect(daysInMonth(1900, 2)).toBe(28);
    expect(daysInMonth(2100, 2)).toBe(28);
  });
});

describe('wall-clock text', () => {
  it('formats as YYYY-MM-DD HH:mm:ss with zero padding', () => {
    expect(formatWallClock({ year: 2025, month: 3, day: 4, hour: 5, minute: 6, second: 7 })).toBe(
      '2025-03-04 05:06:07',
    );
    expect(formatWallClock({ year: 999, month: 12, day: 31, hour: 23, minute: 59, second: 59 })).toBe(
      '0999-12-31 23:59:59',
    );
  });
  it('parses what it formats and refuses impossible dates', () => {
    expect(parseWallClock('2024-02-29 23:59:59')).toEqual({
      year: 2024,
      month: 2,
      day: 29,
      hour: 23,
      minute: 59,
      second: 59,
    });
    expect(parseWallClock('2025-02-29 00:00:00')).toBeUndefined();
    expect(parseWallClock('2025-04-31 00:00:00')).toBeUndefined();
    expect(parseWallClock('2025-01-01 24:00:00')).toBeUndefined();
    expect(parseWallClock('2025-01-01T00:00:00')).toBeUndefined();
    expect(parseWallClock('2025-01-01 00:00:00 ')).toBeUndefined();
    const text = '2030-11-09 08:07:06';
    const parsed = parseWallClock(text);
    expect(parsed && formatWallClock(parsed)).toBe(text);
  });
});
