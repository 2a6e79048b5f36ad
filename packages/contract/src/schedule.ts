import { z } from 'zod';
import { daysInMonth, formatWallClock, parseWallClock, wallClockAt, zonedTimeToInstant } from './time.ts';

/** day_of_week names, Sunday first. */
export const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type DayName = (typeof DAY_NAMES)[number];

/** Repeat types: 0 daily, 1 weekly, anything else monthly; undefined for a one-off. */
export const RepeatType = { daily: 0, weekly: 1, monthly: 2 } as const;
export type RepeatKind = 'once' | 'daily' | 'weekly' | 'monthly';

export function repeatKind(repeatType: number | undefined | null): RepeatKind {
  if (repeatType === undefined || repeatType === null) return 'once';
  if (repeatType === RepeatType.daily) return 'daily';
  if (repeatType === RepeatType.weekly) return 'weekly';
  return 'monthly';
}

/** The spec's schedule value (section 3). */
export const scheduleSchema = z
  .object({
    start_date: z
      .string()
      .refine((s) => parseWallClock(s) !== undefined, { message: 'start_date must be YYYY-MM-DD HH:mm:ss' }),
    /** 0 daily, 1 weekly, 2 monthly; absent: once. */
    repeat_type: z.number().int().min(0).max(2).optional(),
    hour: z.number().int().min(0).max(23).optional(),
    minute: z.number().int().min(0).max(59).optional(),
    second: z.number().int().min(0).max(59).optional(),
    day_of_week: z.enum(DAY_NAMES).optional(),
    day: z.number().int().min(1).max(31).optional(),
  })
  .strict();
export type Schedule = z.infer<typeof scheduleSchema>;

/** What the scheduled-task dialog emits. */
export interface ScheduleDialogValue {
  /** The chosen wall-clock date and time in the user's zone ("YYYY-MM-DD HH:mm:ss"). */
  datetime: string;
  needRepeat: boolean;
  repeatType: 'daily' | 'weekly' | 'monthly';
}

/** Turns the dialog's output into the spec's schedule value. */
export function scheduleFromDialog(value: ScheduleDialogValue): Schedule {
  const w = parseWallClock(value.datetime);
  if (!w) throw new Error(`invalid datetime: ${value.datetime}`);
  const start_date = formatWallClock(w);
  if (!value.needRepeat) return { start_date };
  const time = { hour: w.hour, minute: w.minute, second: w.second };
  if (value.repeatType === 'daily') return { start_date, repeat_type: RepeatType.daily, ...time };
  if (value.repeatType === 'weekly') {
    const weekday = new Date(Date.UTC(w.year, w.month - 1, w.day)).getUTCDay();
    return { start_date, repeat_type: RepeatType.weekly, day_of_week: DAY_NAMES[weekday], ...time };
  }
  return { start_date, repeat_type: RepeatType.monthly, day: w.day, ...time };
}

/**
 * The first run of a schedule strictly after `after`, in the user's time zone; null when a
 * one-off schedule has already passed. A monthly schedule on a day the month lacks (31st) runs on
 * its last day; a wall time skipped by a DST change runs just after the change; a repeated one runs once.
 */
export function nextRunTime(schedule: Schedule, after: Date, timeZone: string): Date | null {
  const start = parseWallClock(schedule.start_date);
  if (!start) throw new Error(`invalid start_date: ${schedule.start_date}`);
  const startInstant = zonedTimeToInstant(start, timeZone);
  const kind = repeatKind(schedule.repeat_type);
  if (kind === 'once') return startInstant.getTime() > after.getTime() ? startInstant : null;

  const hour = schedule.hour ?? start.hour;
  const minute = schedule.minute ?? start.minute;
  const second = schedule.second ?? start.second;
  const startWeekday = new Date(Date.UTC(start.year, start.month - 1, start.day)).getUTCDay();
  const weekday = schedule.day_of_week ? DAY_NAMES.indexOf(schedule.day_of_week) : startWeekday;
  const monthDay = schedule.day ?? start.day;

  // Walk calendar days from the later of the start date and the day before `after` (in the zone).
  const afterWall = wallClockAt(after.getTime() - 86_400_000, timeZone);
  const fromStart = Date.UTC(start.year, start.month - 1, start.day);
  const fromAfter = Date.UTC(afterWall.year, afterWall.month - 1, afterWall.day);
  let cursor = Math.max(fromStart, fromAfter);
  for (let i = 0; i < 800; i++, cursor += 86_400_000) {
    const d = new Date(cursor);
    const year = d.getUTCFullYear();
    const month = d.getUTCMonth() + 1;
    const day = d.getUTCDate();
    const matches =
      kind === 'daily' ||
      (kind === 'weekly' && d.getUTCDay() === weekday) ||
      (kind === 'monthly' && day === Math.min(monthDay, daysInMonth(year, month)));
    if (!matches) continue;
    const at = zonedTimeToInstant({ year, month, day, hour, minute, second }, timeZone);
    if (at.getTime() > after.getTime() && at.getTime() >= startInstant.getTime()) return at;
  }
  return null;
}
