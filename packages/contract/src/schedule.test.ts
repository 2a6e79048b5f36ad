import { describe, expect, it } from 'vitest';
import {
  DAY_NAMES,
  RepeatType,
  nextRunTime,
  repeatKind,
  scheduleFromDialog,
  scheduleSchema,
  type Schedule,
} from './index.ts';

const at = (iso: string) => new Date(iso);
const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The successive runs of a schedule after `from`. */
function runs(schedule: Schedule, from: string, timeZone: string, count: number): string[] {
  const out: string[] = [];
  let after = at(from);
  for (let i = 0; i < count; i++) {
    const next = nextRunTime(schedule, after, timeZone);
    if (!next) break;
    out.push(next.toISOString());
    after = next;
  }
  return out;
}

describe('schedule value (spec section 3)', () => {
  it('names days Sunday first and numbers repeat types 0 daily, 1 weekly, 2 monthly', () => {
    expect(DAY_NAMES).toEqual(['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat']);
    expect(RepeatType).toEqual({ daily: 0, weekly: 1, monthly: 2 });
  });

  it('reads undefined as once, 0 daily, 1 weekly and anything else monthly', () => {
    expect(repeatKind(undefined)).toBe('once');
    expect(repeatKind(null)).toBe('once');
    expect(repeatKind(0)).toBe('daily');
    expect(repeatKind(1)).toBe('weekly');
    expect(repeatKind(2)).toBe('monthly');
    expect(repeatKind(3)).toBe('monthly');
    expect(repeatKind(99)).toBe('monthly');
  });
});

describe('scheduleSchema', () => {
  it('accepts the shapes of once, daily, weekly and monthly', () => {
    for (const value of [
      { start_date: '2025-06-01 12:00:00' },
      { start_date: '2025-06-01 12:00:00', repeat_type: 0, hour: 12, minute: 0, second: 0 },
      { start_date: '2025-06-01 12:00:00', repeat_type: 1, day_of_week: 'sun', hour: 12, minute: 0, second: 0 },
      { start_date: '2025-06-01 12:00:00', repeat_type: 2, day: 31, hour: 23, minute: 59, second: 59 },
    ]) {
      expect(scheduleSchema.parse(value)).toEqual(value);
    }
  });

  it.each([
    '2025-06-01',
    '2025-06-01T12:00:00',
    '2025/06/01 12:00:00',
    '2025-6-1 12:00:00',
    '2025-06-01 12:00',
    '2025-06-01 24:00:00',
    '2025-06-01 12:60:00',
    '2025-06-01 12:00:60',
    '2025-02-29 12:00:00',
    '2025-04-31 12:00:00',
    '2025-13-01 12:00:00',
    '2025-00-10 12:00:00',
    '2025-06-00 12:00:00',
    ' 2025-06-01 12:00:00',
    '',
  ])('rejects start_date %j', (start_date) => {
    expect(scheduleSchema.safeParse({ start_date }).success).toBe(false);
  });

  it('accepts 29 February in a leap year', () => {
    expect(scheduleSchema.safeParse({ start_date: '2024-02-29 00:00:00' }).success).toBe(true);
  });

  it.each([
    { repeat_type: -1 },
    { repeat_type: 1.5 },
    { repeat_type: '0' },
    { hour: 24 },
    { hour: -1 },
    { minute: 60 },
    { second: 60 },
    { day_of_week: 'monday' },
    { day_of_week: 'Mon' },
    { day: 0 },
    { day: 32 },
    { unknown_field: 1 },
  ])('rejects %j', (extra) => {
    expect(scheduleSchema.safeParse({ start_date: '2025-06-01 12:00:00', ...extra }).success).toBe(false);
  });
});

describe('scheduleFromDialog', () => {
  it('emits only the date-time for a one-off schedule', () => {
    expect(scheduleFromDialog({ datetime: '2025-06-01 12:30:15', needRepeat: false, repeatType: 'weekly' })).toEqual({
      start_date: '2025-06-01 12:30:15',
    });
  });

  it('adds hour, minute and second for daily', () => {
    expect(scheduleFromDialog({ datetime: '2025-06-01 07:05:09', needRepeat: true, repeatType: 'daily' })).toEqual({
      start_date: '2025-06-01 07:05:09',
      repeat_type: 0,
      hour: 7,
      minute: 5,
      second: 9,
    });
  });

  it.each([
    ['2025-06-01 08:00:00', 'sun'],
    ['2025-06-02 08:00:00', 'mon'],
    ['2025-06-03 08:00:00', 'tue'],
    ['2025-06-04 08:00:00', 'wed'],
    ['2025-06-05 08:00:00', 'thu'],
    ['2025-06-06 08:00:00', 'fri'],
    ['2025-06-07 08:00:00', 'sat'],
    ['2024-02-29 23:59:59', 'thu'],
  ])('adds the weekday of %s (%s) for weekly', (datetime, day) => {
    const schedule = scheduleFromDialog({ datetime, needRepeat: true, repeatType: 'weekly' });
    expect(schedule.repeat_type).toBe(1);
    expect(schedule.day_of_week).toBe(day);
    expect(schedule.day).toBeUndefined();
  });

  it('adds the day of the month for monthly', () => {
    expect(scheduleFromDialog({ datetime: '2025-01-31 22:00:00', needRepeat: true, repeatType: 'monthly' })).toEqual({
      start_date: '2025-01-31 22:00:00',
      repeat_type: 2,
      day: 31,
      hour: 22,
      minute: 0,
      second: 0,
    });
  });

  it('always produces a value the schema accepts', () => {
    for (const repeatType of ['daily', 'weekly', 'monthly'] as const) {
      for (const needRepeat of [true, false]) {
        const value = scheduleFromDialog({ datetime: '2025-12-31 23:59:59', needRepeat, repeatType });
        expect(scheduleSchema.parse(value)).toEqual(value);
      }
    }
  });

  it('refuses a malformed date-time', () => {
    expect(() =>
      scheduleFromDialog({ datetime: '2025-02-30 10:00:00', needRepeat: false, repeatType: 'daily' }),
    ).toThrow(/invalid datetime/);
    expect(() => scheduleFromDialog({ datetime: '', needRepeat: true, repeatType: 'daily' })).toThrow();
  });
});

describe('nextRunTime: once', () => {
  const once: Schedule = { start_date: '2025-06-01 12:00:00' };
  it('runs at the wall-clock time in the user zone', () => {
    expect(iso(nextRunTime(once, at('2025-05-01T00:00:00Z'), 'Europe/Berlin'))).toBe('2025-06-01T10:00:00.000Z');
    expect(iso(nextRunTime(once, at('2025-05-01T00:00:00Z'), 'America/New_York'))).toBe('2025-06-01T16:00:00.000Z');
    expect(iso(nextRunTime(once, at('2025-05-01T00:00:00Z'), 'UTC'))).toBe('2025-06-01T12:00:00.000Z');
  });
  it('is strictly after `after`', () => {
    expect(iso(nextRunTime(once, at('2025-06-01T09:59:59.999Z'), 'Europe/Berlin'))).toBe('2025-06-01T10:00:00.000Z');
    expect(nextRunTime(once, at('2025-06-01T10:00:00.000Z'), 'Europe/Berlin')).toBeNull();
  });
  it('is null once passed', () => {
    expect(nextRunTime(once, at('2026-01-01T00:00:00Z'), 'Europe/Berlin')).toBeNull();
  });
  it('throws on a malformed start_date', () => {
    expect(() => nextRunTime({ start_date: '2025-06-01' }, at('2025-01-01T00:00:00Z'), 'UTC')).toThrow(/start_date/);
  });
});

describe('nextRunTime: daily', () => {
  const daily: Schedule = { start_date: '2025-01-01 08:00:00', repeat_type: 0, hour: 8, minute: 0, second: 0 };

  it('runs today when the time is still ahead, else tomorrow', () => {
    expect(iso(nextRunTime(daily, at('2025-01-10T06:59:59Z'), 'Europe/Berlin'))).toBe('2025-01-10T07:00:00.000Z');
    expect(iso(nextRunTime(daily, at('2025-01-10T07:00:01Z'), 'Europe/Berlin'))).toBe('2025-01-11T07:00:00.000Z');
  });

  it('does not run again at the instant it just ran (strictly after)', () => {
    expect(iso(nextRunTime(daily, at('2025-01-10T07:00:00Z'), 'Europe/Berlin'))).toBe('2025-01-11T07:00:00.000Z');
  });

  it('never runs before a future start_date', () => {
    const future: Schedule = { start_date: '2025-03-01 08:00:00', repeat_type: 0, hour: 8, minute: 0, second: 0 };
    expect(iso(nextRunTime(future, at('2025-01-01T00:00:00Z'), 'Europe/Berlin'))).toBe('2025-03-01T07:00:00.000Z');
    const lateStart: Schedule = { start_date: '2025-03-01 20:00:00', repeat_type: 0, hour: 8, minute: 0, second: 0 };
    expect(iso(nextRunTime(lateStart, at('2025-01-01T00:00:00Z'), 'Europe/Berlin'))).toBe('2025-03-02T07:00:00.000Z');
  });

  it('takes the time of start_date when hour, minute and second are missing', () => {
    const bare: Schedule = { start_date: '2025-01-01 06:15:30', repeat_type: 0 };
    expect(iso(nextRunTime(bare, at('2025-02-02T12:00:00Z'), 'UTC'))).toBe('2025-02-03T06:15:30.000Z');
  });

  it('keeps the wall-clock time across a DST change (a 23-hour day)', () => {
    const noon: Schedule = { start_date: '2025-03-28 12:00:00', repeat_type: 0, hour: 12, minute: 0, second: 0 };
    expect(runs(noon, '2025-03-28T00:00:00Z', 'Europe/Berlin', 3)).toEqual([
      '2025-03-28T11:00:00.000Z',
      '2025-03-29T11:00:00.000Z',
      '2025-03-30T10:00:00.000Z',
    ]);
  });
});

describe('nextRunTime: weekly', () => {
  it('runs on its weekday every 7 days', () => {
    const monday: Schedule = {
      start_date: '2025-01-06 09:30:00',
      repeat_type: 1,
      day_of_week: 'mon',
      hour: 9,
      minute: 30,
      second: 0,
    };
    expect(runs(monday, '2025-01-08T00:00:00Z', 'Europe/Berlin', 3)).toEqual([
      '2025-01-13T08:30:00.000Z',
      '2025-01-20T08:30:00.000Z',
      '2025-01-27T08:30:00.000Z',
    ]);
    expect(iso(nextRunTime(monday, at('2025-01-13T08:30:00Z'), 'Europe/Berlin'))).toBe('2025-01-20T08:30:00.000Z');
  });

  it.each([
    ['sun', '2025-01-05T00:00:00.000Z'],
    ['mon', '2025-01-06T00:00:00.000Z'],
    ['tue', '2025-01-07T00:00:00.000Z'],
    ['wed', '2025-01-08T00:00:00.000Z'],
    ['thu', '2025-01-02T00:00:00.000Z'],
    ['fri', '2025-01-03T00:00:00.000Z'],
    ['sat', '2025-01-04T00:00:00.000Z'],
  ] as const)('day_of_week %s from Wednesday 1 January 2025 first runs at %s', (day, expected) => {
    const schedule: Schedule = { start_date: '2025-01-01 00:00:00', repeat_type: 1, day_of_week: day };
    expect(iso(nextRunTime(schedule, at('2025-01-01T00:00:00Z'), 'UTC'))).toBe(expected);
  });

  it('starts on the first matching weekday on or after a future start_date', () => {
    const schedule: Schedule = {
      start_date: '2025-03-05 08:00:00',
      repeat_type: 1,
      day_of_week: 'mon',
      hour: 8,
      minute: 0,
      second: 0,
    };
    expect(iso(nextRunTime(schedule, at('2025-01-01T00:00:00Z'), 'Europe/Berlin'))).toBe('2025-03-10T07:00:00.000Z');
    const sameDay: Schedule = { ...schedule, day_of_week: 'wed' };
    expect(iso(nextRunTime(sameDay, at('2025-01-01T00:00:00Z'), 'Europe/Berlin'))).toBe('2025-03-05T07:00:00.000Z');
  });

  it('uses the weekday of the user zone, not of UTC (Auckland Monday morning is Sunday in UTC)', () => {
    const schedule: Schedule = {
      start_date: '2025-01-06 07:00:00',
      repeat_type: 1,
      day_of_week: 'mon',
      hour: 7,
      minute: 0,
      second: 0,
    };
    expect(runs(schedule, '2025-01-01T00:00:00Z', 'Pacific/Auckland', 2)).toEqual([
      '2025-01-05T18:00:00.000Z',
      '2025-01-12T18:00:00.000Z',
    ]);
  });
});

describe('nextRunTime: monthly', () => {
  it('runs a schedule on the 31st on the last day of shorter months (leap year)', () => {
    const schedule: Schedule = {
      start_date: '2024-01-31 10:00:00',
      repeat_type: 2,
      day: 31,
      hour: 10,
      minute: 0,
      second: 0,
    };
    expect(runs(schedule, '2024-01-01T00:00:00Z', 'UTC', 14)).toEqual([
      '2024-01-31T10:00:00.000Z',
      '2024-02-29T10:00:00.000Z',
      '2024-03-31T10:00:00.000Z',
      '2024-04-30T10:00:00.000Z',
      '2024-05-31T10:00:00.000Z',
      '2024-06-30T10:00:00.000Z',
      '2024-07-31T10:00:00.000Z',
      '2024-08-31T10:00:00.000Z',
      '2024-09-30T10:00:00.000Z',
      '2024-10-31T10:00:00.000Z',
      '2024-11-30T10:00:00.000Z',
      '2024-12-31T10:00:00.000Z',
      '2025-01-31T10:00:00.000Z',
      '2025-02-28T10:00:00.000Z',
    ]);
  });

  it('runs the 30th on 28 February of a common year and back on the 30th in March', () => {
    const schedule: Schedule = {
      start_date: '2025-01-30 00:00:00',
      repeat_type: 2,
      day: 30,
      hour: 0,
      minute: 0,
      second: 0,
    };
    expect(runs(schedule, '2025-01-29T00:00:00Z', 'UTC', 3)).toEqual([
      '2025-01-30T00:00:00.000Z',
      '2025-02-28T00:00:00.000Z',
      '2025-03-30T00:00:00.000Z',
    ]);
  });

  it('runs the 29th on 28 February of a common year and 29 February of a leap year', () => {
    const schedule: Schedule = { start_date: '2023-01-29 12:00:00', repeat_type: 2, day: 29 };
    expect(iso(nextRunTime(schedule, at('2023-02-01T00:00:00Z'), 'UTC'))).toBe('2023-02-28T12:00:00.000Z');
    expect(iso(nextRunTime(schedule, at('2024-02-01T00:00:00Z'), 'UTC'))).toBe('2024-02-29T12:00:00.000Z');
    expect(iso(nextRunTime(schedule, at('2100-02-01T00:00:00Z'), 'UTC'))).toBe('2100-02-28T12:00:00.000Z');
  });

  it('takes the day of start_date when day is missing, and treats other repeat types as monthly', () => {
    const schedule: Schedule = { start_date: '2025-01-15 10:00:00', repeat_type: 7 };
    expect(runs(schedule, '2025-01-15T10:00:00Z', 'UTC', 2)).toEqual([
      '2025-02-15T10:00:00.000Z',
      '2025-03-15T10:00:00.000Z',
    ]);
  });

  it('waits for a future start_date', () => {
    const schedule: Schedule = {
      start_date: '2025-05-15 10:00:00',
      repeat_type: 2,
      day: 15,
      hour: 10,
      minute: 0,
      second: 0,
    };
    expect(iso(nextRunTime(schedule, at('2025-01-01T00:00:00Z'), 'Europe/Berlin'))).toBe('2025-05-15T08:00:00.000Z');
  });

  it('is strictly after a run it equals', () => {
    const schedule: Schedule = {
      start_date: '2025-01-31 10:00:00',
      repeat_type: 2,
      day: 31,
      hour: 10,
      minute: 0,
      second: 0,
    };
    expect(iso(nextRunTime(schedule, at('2025-02-28T10:00:00Z'), 'UTC'))).toBe('2025-03-31T10:00:00.000Z');
  });
});

describe('nextRunTime: daylight saving time', () => {
  it('Europe/Berlin spring forward: a skipped 02:30 runs at 03:30 CEST, once', () => {
    const schedule: Schedule = { start_date: '2025-03-28 02:30:00', repeat_type: 0, hour: 2, minute: 30, second: 0 };
    expect(runs(schedule, '2025-03-27T12:00:00Z', 'Europe/Berlin', 4)).toEqual([
      '2025-03-28T01:30:00.000Z',
      '2025-03-29T01:30:00.000Z',
      '2025-03-30T01:30:00.000Z',
      '2025-03-31T00:30:00.000Z',
    ]);
  });

  it('Europe/Berlin fall back: a repeated 02:30 runs once, at its first occurrence', () => {
    const schedule: Schedule = { start_date: '2025-10-24 02:30:00', repeat_type: 0, hour: 2, minute: 30, second: 0 };
    expect(runs(schedule, '2025-10-23T12:00:00Z', 'Europe/Berlin', 4)).toEqual([
      '2025-10-24T00:30:00.000Z',
      '2025-10-25T00:30:00.000Z',
      '2025-10-26T00:30:00.000Z',
      '2025-10-27T01:30:00.000Z',
    ]);
    // Just after the first 02:30 the second one (01:30Z) must not count as another run that day.
    expect(iso(nextRunTime(schedule, at('2025-10-26T00:30:00Z'), 'Europe/Berlin'))).toBe('2025-10-27T01:30:00.000Z');
    expect(iso(nextRunTime(schedule, at('2025-10-26T01:00:00Z'), 'Europe/Berlin'))).toBe('2025-10-27T01:30:00.000Z');
  });

  it('America/New_York spring forward: a skipped 02:30 runs at 03:30 EDT', () => {
    const schedule: Schedule = { start_date: '2025-03-07 02:30:00', repeat_type: 0, hour: 2, minute: 30, second: 0 };
    expect(runs(schedule, '2025-03-07T00:00:00Z', 'America/New_York', 4)).toEqual([
      '2025-03-07T07:30:00.000Z',
      '2025-03-08T07:30:00.000Z',
      '2025-03-09T07:30:00.000Z',
      '2025-03-10T06:30:00.000Z',
    ]);
  });

  it('America/New_York fall back: a repeated 01:30 runs once', () => {
    const schedule: Schedule = { start_date: '2025-10-31 01:30:00', repeat_type: 0, hour: 1, minute: 30, second: 0 };
    expect(runs(schedule, '2025-10-31T00:00:00Z', 'America/New_York', 4)).toEqual([
      '2025-10-31T05:30:00.000Z',
      '2025-11-01T05:30:00.000Z',
      '2025-11-02T05:30:00.000Z',
      '2025-11-03T06:30:00.000Z',
    ]);
  });

  it('a one-off in the Berlin gap runs just after the change', () => {
    const schedule: Schedule = { start_date: '2025-03-30 02:15:00' };
    expect(iso(nextRunTime(schedule, at('2025-03-01T00:00:00Z'), 'Europe/Berlin'))).toBe('2025-03-30T01:15:00.000Z');
  });

  it('a weekly run keeps its wall-clock time across the change', () => {
    const schedule: Schedule = {
      start_date: '2025-03-23 09:00:00',
      repeat_type: 1,
      day_of_week: 'sun',
      hour: 9,
      minute: 0,
      second: 0,
    };
    expect(runs(schedule, '2025-03-22T00:00:00Z', 'America/New_York', 1)).toEqual(['2025-03-23T13:00:00.000Z']);
    expect(runs(schedule, '2025-03-01T00:00:00Z', 'Europe/Berlin', 2)).toEqual([
      '2025-03-23T08:00:00.000Z',
      '2025-03-30T07:00:00.000Z',
    ]);
  });
});

describe('nextRunTime: zones far from UTC', () => {
  it('Pacific/Auckland (UTC+13 in January) runs on the previous UTC day', () => {
    const schedule: Schedule = { start_date: '2025-01-10 09:00:00', repeat_type: 0, hour: 9, minute: 0, second: 0 };
    expect(iso(nextRunTime(schedule, at('2025-01-01T00:00:00Z'), 'Pacific/Auckland'))).toBe('2025-01-09T20:00:00.000Z');
    expect(iso(nextRunTime(schedule, at('2025-01-14T19:00:00Z'), 'Pacific/Auckland'))).toBe('2025-01-14T20:00:00.000Z');
    expect(iso(nextRunTime(schedule, at('2025-01-14T20:30:00Z'), 'Pacific/Auckland'))).toBe('2025-01-15T20:00:00.000Z');
  });

  it('Pacific/Auckland monthly on the 1st at midnight, across the April change to NZST', () => {
    const schedule: Schedule = {
      start_date: '2025-01-01 00:00:00',
      repeat_type: 2,
      day: 1,
      hour: 0,
      minute: 0,
      second: 0,
    };
    expect(runs(schedule, '2024-12-01T00:00:00Z', 'Pacific/Auckland', 5)).toEqual([
      '2024-12-31T11:00:00.000Z',
      '2025-01-31T11:00:00.000Z',
      '2025-02-28T11:00:00.000Z',
      '2025-03-31T11:00:00.000Z',
      '2025-04-30T12:00:00.000Z',
    ]);
  });

  it('Pacific/Auckland spring forward in September: 02:30 runs at 03:30 NZDT', () => {
    const schedule: Schedule = { start_date: '2025-09-26 02:30:00', repeat_type: 0, hour: 2, minute: 30, second: 0 };
    expect(runs(schedule, '2025-09-25T00:00:00Z', 'Pacific/Auckland', 4)).toEqual([
      '2025-09-25T14:30:00.000Z',
      '2025-09-26T14:30:00.000Z',
      '2025-09-27T14:30:00.000Z',
      '2025-09-28T13:30:00.000Z',
    ]);
  });

  it('Asia/Kolkata (UTC+05:30) keeps the half hour', () => {
    const monthly: Schedule = {
      start_date: '2025-01-01 00:15:00',
      repeat_type: 2,
      day: 1,
      hour: 0,
      minute: 15,
      second: 0,
    };
    expect(runs(monthly, '2024-12-01T00:00:00Z', 'Asia/Kolkata', 2)).toEqual([
      '2024-12-31T18:45:00.000Z',
      '2025-01-31T18:45:00.000Z',
    ]);
    const daily: Schedule = { start_date: '2025-01-01 23:45:00', repeat_type: 0, hour: 23, minute: 45, second: 0 };
    expect(iso(nextRunTime(daily, at('2025-06-10T18:15:00Z'), 'Asia/Kolkata'))).toBe('2025-06-11T18:15:00.000Z');
    expect(iso(nextRunTime(daily, at('2025-06-10T18:14:59Z'), 'Asia/Kolkata'))).toBe('2025-06-10T18:15:00.000Z');
  });

  it('Pacific/Honolulu (UTC-10) runs on the next UTC day', () => {
    const daily: Schedule = { start_date: '2025-01-01 20:00:00', repeat_type: 0, hour: 20, minute: 0, second: 0 };
    expect(iso(nextRunTime(daily, at('2025-07-04T00:00:00Z'), 'Pacific/Honolulu'))).toBe('2025-07-04T06:00:00.000Z');
  });
});
