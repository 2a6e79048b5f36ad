import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { i18n } from '../../i18n/index.ts';
import { scheduleFromDialog, type ScheduleDialogValue } from '@skyferry/contract';
import { renderWithProviders } from '../../test/utils.tsx';
import { describeSchedule, isBeforeToday, scheduleProblem, startOfToday } from './model.ts';
import { ScheduleDialog } from './ScheduleDialog.tsx';

// Thursday 15 May 2025, 10:20 local time.
const NOW = new Date(2025, 4, 15, 10, 20, 0);

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(NOW);
});
afterEach(() => {
  vi.useRealTimers();
});

function day(date: string): HTMLButtonElement {
  const el = document.querySelector<HTMLButtonElement>(`[data-day="${date}"]`);
  if (!el) throw new Error(`no day ${date} in the calendar`);
  return el;
}

async function pick(testId: string, option: string) {
  const select = screen.getByTestId(testId);
  const value = [...select.querySelectorAll('option')].find((o) => o.textContent === option)?.value ?? option;
  await userEvent.selectOptions(select, value);
}

function open(onSubmit = vi.fn(), onClose = vi.fn(), initial: ScheduleDialogValue | null = null) {
  renderWithProviders(<ScheduleDialog opened onClose={onClose} onSubmit={onSubmit} initial={initial} />);
  return { onSubmit, onClose };
}

describe('the schedule rules', () => {
  it('days before the start of today are out; today is in', () => {
    expect(startOfToday(NOW)).toEqual(new Date(2025, 4, 15));
    expect(isBeforeToday('2025-05-14', NOW)).toBe(true);
    expect(isBeforeToday('2025-05-15', NOW)).toBe(false);
    expect(scheduleProblem(null, 11, 0, false, NOW)).toBe('pick_date');
    expect(scheduleProblem('2025-05-14', 11, 0, true, NOW)).toBe('before_today');
    expect(scheduleProblem('2025-05-15', 10, 20, false, NOW)).toBe('in_past');
    expect(scheduleProblem('2025-05-15', 10, 21, false, NOW)).toBeNull();
    // A repeating schedule may start earlier today: its first run is the next matching time.
    expect(scheduleProblem('2025-05-15', 9, 0, true, NOW)).toBeNull();
  });

  it('describes each kind of schedule', () => {
    const t = i18n.getFixedT('en', 'schedule');
    const v = (needRepeat: boolean, repeatType: ScheduleDialogValue['repeatType']) =>
      describeSchedule(scheduleFromDialog({ datetime: '2025-05-15 11:05:00', needRepeat, repeatType }), t);
    expect(v(false, 'daily')).toBe('Once, on 2025/05/15 at 11:05');
    expect(v(true, 'daily')).toBe('Every day at 11:05');
    expect(v(true, 'weekly')).toBe('Every Thursday at 11:05');
    expect(v(true, 'monthly')).toBe('Every month on day 15 at 11:05');
  });
});

describe('the Scheduled task dialog', () => {
  it('cannot be typed into: the calendar is buttons, the time and repeat type are lists', async () => {
    open();
    const dialog = screen.getByRole('dialog', { name: 'Scheduled task' });
    await userEvent.click(screen.getByRole('checkbox', { name: 'Repeat' }));
    expect(within(dialog).queryAllByRole('textbox')).toEqual([]);
    expect(
      within(dialog)
        .getAllByRole('combobox')
        .map((c) => c.tagName),
    ).toEqual(['SELECT', 'SELECT', 'SELECT']);
    expect(day('2025-05-20').tagName).toBe('BUTTON');
  });

  it('disables the days before today (fake clock) and needs a day before Set task', async () => {
    open();
    expect(day('2025-05-01')).toBeDisabled();
    expect(day('2025-05-14')).toBeDisabled();
    expect(day('2025-05-15')).toBeEnabled();
    expect(day('2025-05-31')).toBeEnabled();
    expect(screen.getByTestId('schedule-submit')).toBeDisabled();
    expect(screen.getByTestId('schedule-summary').textContent).toBe('Choose a date and a time.');
    // Clicking a disabled day picks nothing.
    await userEvent.click(day('2025-05-14'));
    expect(screen.getByTestId('schedule-submit')).toBeDisabled();
  });

  it('a one-off time already past today is refused; a later one is emitted as datetime/needRepeat/repeatType', async () => {
    const { onSubmit, onClose } = open();
    await userEvent.click(day('2025-05-15'));
    await pick('schedule-hour', '09');
    expect(screen.getByTestId('schedule-summary').textContent).toBe(
      'This time has already passed. Choose a later time.',
    );
    expect(screen.getByTestId('schedule-submit')).toBeDisabled();
    await pick('schedule-hour', '11');
    await pick('schedule-minute', '30');
    expect(screen.getByTestId('schedule-summary').textContent).toBe('Once, on 2025/05/15 at 11:30');
    await userEvent.click(screen.getByTestId('schedule-submit'));
    expect(onSubmit).toHaveBeenCalledWith({ datetime: '2025-05-15 11:30:00', needRepeat: false, repeatType: 'daily' });
    expect(onClose).toHaveBeenCalled();
    expect(scheduleFromDialog(onSubmit.mock.calls[0]?.[0] as ScheduleDialogValue)).toEqual({
      start_date: '2025-05-15 11:30:00',
    });
  });

  it('repeat with its type: weekly from a Thursday becomes day_of_week thu', async () => {
    const { onSubmit } = open();
    // The repeat type shows only once Repeat is ticked, offering daily, weekly and monthly.
    expect(screen.queryByTestId('schedule-repeat-type')).toBeNull();
    await userEvent.click(day('2025-05-22'));
    await userEvent.click(screen.getByRole('checkbox', { name: 'Repeat' }));
    const options = [...screen.getByTestId('schedule-repeat-type').querySelectorAll('option')].map(
      (o) => o.textContent,
    );
    expect(options).toEqual(['Daily', 'Weekly', 'Monthly']);
    await pick('schedule-repeat-type', 'Weekly');
    await pick('schedule-hour', '08');
    expect(screen.getByTestId('schedule-summary').textContent).toBe('Every Thursday at 08:00');
    await userEvent.click(screen.getByRole('button', { name: 'Set task' }));
    const value = onSubmit.mock.calls[0]?.[0] as ScheduleDialogValue;
    expect(value).toEqual({ datetime: '2025-05-22 08:00:00', needRepeat: true, repeatType: 'weekly' });
    expect(scheduleFromDialog(value)).toEqual({
      start_date: '2025-05-22 08:00:00',
      repeat_type: 1,
      day_of_week: 'thu',
      hour: 8,
      minute: 0,
      second: 0,
    });
  });

  it('a daily repeat may start earlier today; monthly keeps the day of the month', async () => {
    const { onSubmit } = open();
    await userEvent.click(day('2025-05-15'));
    await pick('schedule-hour', '07');
    await userEvent.click(screen.getByRole('checkbox', { name: 'Repeat' }));
    expect(screen.getByTestId('schedule-submit')).toBeEnabled();
    expect(screen.getByTestId('schedule-summary').textContent).toBe('Every day at 07:00');
    await pick('schedule-repeat-type', 'Monthly');
    await userEvent.click(screen.getByTestId('schedule-submit'));
    expect(scheduleFromDialog(onSubmit.mock.calls[0]?.[0] as ScheduleDialogValue)).toEqual({
      start_date: '2025-05-15 07:00:00',
      repeat_type: 2,
      day: 15,
      hour: 7,
      minute: 0,
      second: 0,
    });
  });

  it('Cancel closes without emitting; reopening starts from the last choice', async () => {
    const onSubmit = vi.fn();
    const onClose = vi.fn();
    open(onSubmit, onClose, { datetime: '2025-06-02 18:45:00', needRepeat: true, repeatType: 'monthly' });
    expect(screen.getByTestId('schedule-summary').textContent).toBe('Every month on day 2 at 18:45');
    expect(screen.getByRole('checkbox', { name: 'Repeat' })).toBeChecked();
    await userEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(onClose).toHaveBeenCalled();
    expect(onSubmit).not.toHaveBeenCalled();
  });

  it('the clock moving past a chosen one-off time while the dialog is open blocks Set task', async () => {
    const { onSubmit } = open();
    await userEvent.click(day('2025-05-15'));
    await pick('schedule-hour', '11');
    vi.setSystemTime(new Date(2025, 4, 15, 11, 0, 30));
    await userEvent.click(screen.getByTestId('schedule-submit'));
    await waitFor(() => expect(onSubmit).not.toHaveBeenCalled());
  });
});
