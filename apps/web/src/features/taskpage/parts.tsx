import { Anchor, Badge, Group, Text } from '@mantine/core';
import { IconArrowLeft, IconArrowRight } from '@tabler/icons-react';
import {
  TaskType,
  formatBytes,
  formatDateTime,
  type FileFilter,
  type ServerTask,
  type TaskRun,
} from '@skyferry/contract';
import type { TFunction } from 'i18next';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { describeSchedule } from '../schedule/model.ts';
import { cloudLabel } from '../shell/clouds.ts';
import { formatDuration } from '../tasks/format.ts';
import { STATE_COLOURS } from '../tasks/TaskRow.tsx';
import { OUTCOME_COLOURS, runOutcomeKey } from './model.ts';

export function StateBadge({ task }: { task: Pick<ServerTask, 'state'> }) {
  const { t } = useTranslation('transmission');
  return (
    <Badge size="sm" variant="outline" color={STATE_COLOURS[task.state] ?? 'gray.7'} data-testid="task-state">
      {t(`state.${task.state}`)}
    </Badge>
  );
}

export function OutcomeBadge({ run }: { run: Pick<TaskRun, 'outcome'> }) {
  const { t } = useTranslation('taskpage');
  const key = runOutcomeKey(run);
  return (
    <Badge size="sm" variant="outline" color={OUTCOME_COLOURS[key]} data-testid="run-outcome" data-outcome={key}>
      {t(`outcomes.${key}`)}
    </Badge>
  );
}

/** "Migration" or the sync's mode ("Two-way sync"). */
export function kindLabel(task: Pick<ServerTask, 'task_type' | 'sync_mode'>, t: TFunction): string {
  return task.task_type === TaskType.migrate
    ? t('transmission:type.migrate')
    : t(`transmission:type.sync.${task.sync_mode ?? 'one_way'}`);
}

/** The schedule in words with the zone it is read in, or that there is none. */
export function scheduleText(task: Pick<ServerTask, 'schedule' | 'time_zone' | 'is_schedule'>, t: TFunction): string {
  if (!task.schedule) return t('taskpage:noSchedule');
  const words = t('taskpage:scheduleIn', { schedule: describeSchedule(task.schedule, t), zone: task.time_zone });
  return task.is_schedule === 2 ? words : t('taskpage:scheduleOff', { schedule: words });
}

export function filterText(filter: FileFilter | null, t: TFunction): string {
  if (!filter) return t('taskpage:settings.noFilter');
  const list = filter.categories.map((c) => t(`settings:defaults.categories.${c}`)).join(', ');
  return t(filter.mode === 'include' ? 'taskpage:settings.include' : 'taskpage:settings.exclude', { list });
}

/** Source → target, each cloud with its path(s); wraps on narrow screens. */
export function Route({ task }: { task: ServerTask }) {
  const { t } = useTranslation('taskpage');
  const from = `${cloudLabel(task.from_cloud)} ${task.from_cloud.paths.join(', ')}`;
  const to = `${cloudLabel(task.to_cloud)} ${task.to_cloud.path}`;
  return (
    <Group gap={4} wrap="wrap" data-testid="task-route" style={{ minWidth: 0 }}>
      <Text size="sm" c="dimmed" style={{ overflowWrap: 'anywhere' }}>
        {from}
      </Text>
      <IconArrowRight size={14} aria-label={t('to')} style={{ flex: 'none' }} />
      <Text size="sm" c="dimmed" style={{ overflowWrap: 'anywhere' }}>
        {to}
      </Text>
    </Group>
  );
}

/** A run's line of figures: files by outcome, bytes, speed, duration. */
export function RunFigures({ run }: { run: TaskRun }) {
  const { t } = useTranslation('taskpage');
  const counts = Object.entries(run.counts).filter(([, n]) => (n ?? 0) > 0);
  return (
    <Group gap="xs" wrap="wrap" data-testid="run-figures">
      {counts.map(([k, n]) => (
        <Text key={k} size="xs" data-testid={`run-count-${k}`}>
          {t(`fileOutcomes.${k}`)}: {n}
        </Text>
      ))}
      {run.kind === 'verify' ? (
        <Text size="xs" c="dimmed">
          {t('history.compared', { count: run.compared })}
        </Text>
      ) : (
        <Text size="xs" c="dimmed">
          {formatBytes(run.bytes)} · {formatBytes(run.speed)}/s
        </Text>
      )}
      <Text size="xs" c="dimmed">
        {formatDuration(run.duration)}
      </Text>
    </Group>
  );
}

export function when(ms: number | null): string {
  return ms === null ? '—' : formatDateTime(ms);
}

/** The link back up (to the list, or to the task). */
export function BackLink({ to, label, testId }: { to: string; label: string; testId: string }) {
  return (
    <Anchor component={Link} to={to} size="sm" data-testid={testId} style={{ alignSelf: 'flex-start' }}>
      <Group gap={4} wrap="nowrap">
        <IconArrowLeft size={14} aria-hidden />
        {label}
      </Group>
    </Anchor>
  );
}
