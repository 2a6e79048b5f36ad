import { Button, Checkbox, Group, Modal, NativeSelect, Stack, Text } from '@mantine/core';
import { DatePicker } from '@mantine/dates';
import '@mantine/dates/styles.layer.css';
import { parseWallClock, scheduleFromDialog, type ScheduleDialogValue } from '@skyferry/contract';
import { useEffect, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { REPEAT_TYPES, dayString, describeSchedule, dialogValue, scheduleProblem, type RepeatType } from './model.ts';

export interface ScheduleDialogProps {
  opened: boolean;
  onClose: () => void;
  /** Set task: the dialog's output (datetime, needRepeat, repeatType); turn it into a schedule with scheduleFromDialog. */
  onSubmit: (value: ScheduleDialogValue) => void;
  /** The choice to start from (the last one set), if any. */
  initial?: ScheduleDialogValue | null;
}

const HOURS = Array.from({ length: 24 }, (_, i) => String(i).padStart(2, '0'));
const MINUTES = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));

/**
 * The Scheduled task dialog: a calendar (days before today disabled) and hour and minute lists
 * (native selects), none of which can be typed into; a Repeat tick box with its type; Cancel and Set task. Submitting
 * closes it and emits the choice.
 */
export function ScheduleDialog({ opened, onClose, onSubmit, initial }: ScheduleDialogProps) {
  const { t } = useTranslation('schedule');
  const [day, setDay] = useState<string | null>(null);
  const [hour, setHour] = useState(0);
  const [minute, setMinute] = useState(0);
  const [needRepeat, setNeedRepeat] = useState(false);
  const [repeatType, setRepeatType] = useState<RepeatType>('daily');
  const [now, setNow] = useState(() => new Date());

  // Each opening starts from the last choice, or from no day and the next whole hour.
  useEffect(() => {
    if (!opened) return;
    const at = new Date();
    setNow(at);
    const w = initial ? parseWallClock(initial.datetime) : undefined;
    if (initial && w) {
      setDay(initial.datetime.slice(0, 10));
      setHour(w.hour);
      setMinute(w.minute);
      setNeedRepeat(initial.needRepeat);
      setRepeatType(initial.repeatType);
    } else {
      setDay(null);
      setHour((at.getHours() + 1) % 24);
      setMinute(0);
      setNeedRepeat(false);
      setRepeatType('daily');
    }
  }, [opened, initial]);

  const problem = scheduleProblem(day, hour, minute, needRepeat, now);
  const value = day ? dialogValue(day, hour, minute, needRepeat, repeatType) : null;
  const summary = useMemo(() => (value ? describeSchedule(scheduleFromDialog(value), t) : ''), [value, t]);

  const submit = () => {
    // The clock moves on while the dialog is open: check against the time of the click.
    if (!value || scheduleProblem(day, hour, minute, needRepeat, new Date())) return;
    onSubmit(value);
    onClose();
  };

  return (
    <Modal opened={opened} onClose={onClose} title={t('title')} centered size="auto">
      <Stack gap="sm" data-testid="schedule-dialog">
        <Text size="sm" fw={500} id="schedule-date-label">
          {t('date')}
        </Text>
        <DatePicker
          value={day}
          onChange={(v) => setDay(v)}
          minDate={dayString(now)}
          aria-labelledby="schedule-date-label"
          data-testid="schedule-calendar"
          getDayProps={(date) => ({ 'data-day': date })}
        />
        <Group gap="xs" align="flex-end">
          <NativeSelect
            label={t('hour')}
            data={HOURS}
            value={String(hour).padStart(2, '0')}
            onChange={(e) => setHour(Number(e.currentTarget.value))}
            w={90}
            data-testid="schedule-hour"
          />
          <Text pb={6}>:</Text>
          <NativeSelect
            label={t('minute')}
            data={MINUTES}
            value={String(minute).padStart(2, '0')}
            onChange={(e) => setMinute(Number(e.currentTarget.value))}
            w={90}
            data-testid="schedule-minute"
          />
        </Group>
        <Group gap="sm" align="center">
          <Checkbox
            label={t('repeat')}
            checked={needRepeat}
            onChange={(e) => setNeedRepeat(e.currentTarget.checked)}
            data-testid="schedule-repeat"
          />
          {needRepeat && (
            <NativeSelect
              aria-label={t('repeatType')}
              data={REPEAT_TYPES.map((r) => ({ value: r, label: t(`repeatTypes.${r}`) }))}
              value={repeatType}
              onChange={(e) => setRepeatType(e.currentTarget.value as RepeatType)}
              w={140}
              data-testid="schedule-repeat-type"
            />
          )}
        </Group>
        <Text size="sm" data-testid="schedule-summary" c={problem && problem !== 'pick_date' ? 'red.9' : undefined}>
          {problem ? t(`problems.${problem}`) : summary}
        </Text>
        <Group justify="flex-end" gap="sm">
          <Button variant="default" onClick={onClose}>
            {t('cancel')}
          </Button>
          <Button onClick={submit} disabled={problem !== null} data-testid="schedule-submit">
            {t('setTask')}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
