import { DAY_NAMES, parseWallClock, repeatKind, type Schedule, type ScheduleDialogValue } from '@skyferry/contract';
import type { TFunction } from 'i18next';

export type RepeatType = ScheduleDialogValue['repeatType'];
export const REPEAT_TYPES: readonly RepeatType[] = ['daily', 'weekly', 'monthly'];

const pad = (n: number) => String(n).padStart(2, '0');

/** A local calendar day as YYYY-MM-DD. */
export function dayString(d: Date): string {
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** The start of today, local time: days before it cannot be picked (spec section 5). */
export function startOfToday(now: Date = new Date()): Date {
  return new Date(now.getFullYear(), now.getMonth(), now.getDate());
}

/** Whether a day (YYYY-MM-DD) lies before the start of today. */
export function isBeforeToday(day: string, now: Date = new Date()): boolean {
  return day < dayString(now);
}

/** The dialog's choice as the spec's output: datetime "YYYY-MM-DD HH:mm:ss", needRepeat, repeatType. */
export function dialogValue(
  day: string,
  hour: number,
  minute: number,
  needRepeat: boolean,
  repeatType: RepeatType,
): ScheduleDialogValue {
  return { datetime: `${day} ${pad(hour)}:${pad(minute)}:00`, needRepeat, repeatType };
}

/** The local instant a wall-clock "YYYY-MM-DD HH:mm:ss" names. */
export function localInstant(datetime: string): Date | null {
  const w = parseWallClock(datetime);
  if (!w) return null;
  return new Date(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
}

export type ScheduleProblem = 'pick_date' | 'before_today' | 'in_past';

/**
 * Why the dialog cannot be submitted yet: no day chosen, a day before today, or a one-off time
 * already past (a repeating schedule starting earlier today first runs on its next day).
 */
export function scheduleProblem(
  day: string | null,
  hour: number,
  minute: number,
  needRepeat: boolean,
  now: Date = new Date(),
): ScheduleProblem | null {
  if (!day) return 'pick_date';
  if (isBeforeToday(day, now)) return 'before_today';
  if (!needRepeat) {
    const at = localInstant(dialogValue(day, hour, minute, false, 'daily').datetime);
    if (!at || at.getTime() <= now.getTime()) return 'in_past';
  }
  return null;
}

/** A schedule in words: "Once on 2025/01/02 at 10:30", "Every day at 10:30", ... (namespace `schedule`). */
export function describeSchedule(schedule: Schedule, t: TFunction): string {
  const w = parseWallClock(schedule.start_date);
  if (!w) return schedule.start_date;
  const time = `${pad(schedule.hour ?? w.hour)}:${pad(schedule.minute ?? w.minute)}`;
  switch (repeatKind(schedule.repeat_type)) {
    case 'once':
      return t('schedule:summary.once', { date: `${w.year}/${pad(w.month)}/${pad(w.day)}`, time });
    case 'daily':
      return t('schedule:summary.daily', { time });
    case 'weekly': {
      const dayName =
        schedule.day_of_week ?? DAY_NAMES[new Date(Date.UTC(w.year, w.month - 1, w.day)).getUTCDay()] ?? 'mon';
      return t('schedule:summary.weekly', { day: t(`schedule:days.${dayName}`), time });
    }
    case 'monthly':
      return t('schedule:summary.monthly', { day: schedule.day ?? w.day, time });
  }
}
