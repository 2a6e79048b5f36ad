import { ActionIcon, Badge, Button, Checkbox, Group, Paper, Progress, Stack, Text, Tooltip } from '@mantine/core';
import { IconArrowRight, IconFileAlert, IconTrash } from '@tabler/icons-react';
import {
  ScheduleSwitch,
  TaskState,
  TaskType,
  formatBytes,
  formatDateTime,
  plainName,
  taskActions,
  truncateTaskName,
  type ServerTask,
  type TaskAction,
} from '@skyferry/contract';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { cloudLabel } from '../shell/clouds.ts';
import {
  failedLine,
  formatSpeed,
  hasProgress,
  offersResync,
  percentText,
  progressAmount,
  showsSchedule,
  type RowAction,
} from './format.ts';
import { Name } from '../../lib/Name.tsx';

export interface TaskRowProps {
  task: ServerTask;
  onAction: (action: RowAction, task: ServerTask) => Promise<void> | void;
}

/** Badge colours, outlined in shade 9 so the small text keeps AA contrast on white. */
export const STATE_COLOURS: Record<number, string> = {
  0: 'teal.9',
  1: 'blue.9',
  2: 'blue.9',
  3: 'red.9',
  4: 'gray.7',
  5: 'grape.9',
  6: 'red.9',
  7: 'violet.9',
  8: 'gray.7',
  9: 'gray.7',
  10: 'grape.9',
};

/**
 * One task of the Transmission list, rendered and actionable as spec section 4's table says for
 * its state, with a delete-record control on every task.
 */
export function TaskRow({ task, onAction }: TaskRowProps) {
  const { t } = useTranslation('transmission');
  const [busy, setBusy] = useState<RowAction | null>(null);
  const actions = taskActions(task.state);
  const resync = offersResync(task);
  const act = async (action: RowAction) => {
    setBusy(action);
    try {
      await onAction(action, task);
    } finally {
      setBusy(null);
    }
  };
  const button = (action: Exclude<TaskAction, 'delete' | 'details' | 'toggle_schedule'>, label: string) =>
    actions.includes(action) ? (
      <Button
        key={action}
        size="compact-sm"
        variant={action === 'cancel' ? 'default' : 'light'}
        loading={busy === action}
        onClick={() => void act(action)}
        data-testid={`task-${action}`}
        title={action === 'retry' ? t('retryHint') : undefined}
      >
        {label}
      </Button>
    ) : null;
  const typeLabel =
    task.task_type === TaskType.migrate ? t('type.migrate') : t(`type.sync.${task.sync_mode ?? 'one_way'}`);
  const name = truncateTaskName(task.task_name);

  return (
    <Paper
      withBorder
      p="sm"
      radius="md"
      data-testid="task-item"
      data-task-id={task.id}
      data-state={task.state}
      aria-label={plainName(task.task_name)}
      role="group"
    >
      <Stack gap={6}>
        <Group justify="space-between" wrap="nowrap" gap="xs">
          <Group gap="xs" wrap="nowrap" style={{ minWidth: 0 }}>
            <Text fw={600} size="sm" title={plainName(task.task_name)} data-testid="task-name" truncate>
              <Name value={name} />
            </Text>
            <Badge size="xs" variant="outline" color="gray.7">
              {typeLabel}
            </Badge>
          </Group>
          <Group gap={6} wrap="nowrap">
            <Badge size="sm" variant="outline" color={STATE_COLOURS[task.state] ?? 'gray.7'} data-testid="task-state">
              {t(`state.${task.state}`)}
            </Badge>
            <Tooltip label={t('deleteRecord')} withArrow>
              <ActionIcon
                variant="subtle"
                color="gray"
                aria-label={t('deleteRecord')}
                loading={busy === 'delete'}
                onClick={() => void act('delete')}
                data-testid="task-delete"
              >
                <IconTrash size={16} aria-hidden />
              </ActionIcon>
            </Tooltip>
          </Group>
        </Group>
        <Group gap={4} wrap="nowrap">
          <Text size="xs" c="dimmed" truncate data-testid="task-route">
            <Name value={cloudLabel(task.from_cloud)} />
          </Text>
          <IconArrowRight size={12} aria-label={t('to')} style={{ flex: 'none' }} className="sf-flip-rtl" />
          <Text size="xs" c="dimmed" truncate>
            <Name value={cloudLabel(task.to_cloud)} />
            {task.to_cloud.path !== '/' && (
              <>
                {' '}
                <Name value={task.to_cloud.path} />
              </>
            )}
          </Text>
        </Group>
        <StateLine task={task} />
        {showsSchedule(task) && (
          <Group gap="sm" data-testid="task-schedule">
            <Checkbox
              size="xs"
              label={t('scheduleOn')}
              checked={task.is_schedule === ScheduleSwitch.on}
              disabled={busy === 'toggle_schedule'}
              onChange={() => void act('toggle_schedule')}
              data-testid="task-schedule-toggle"
            />
            <Text size="xs" c="dimmed" data-testid="task-next-run">
              {task.is_schedule === ScheduleSwitch.on && task.next_run_time
                ? t('nextRun', { time: formatDateTime(task.next_run_time) })
                : t('scheduleOff')}
            </Text>
          </Group>
        )}
        {(resync || actions.some((a) => a !== 'delete' && a !== 'toggle_schedule')) && (
          <Group gap="xs" justify="flex-end">
            {actions.includes('details') && (
              <Button
                size="compact-sm"
                variant="subtle"
                leftSection={<IconFileAlert size={14} aria-hidden />}
                onClick={() => void act('details')}
                data-testid="task-details"
              >
                {t('viewReasons')}
              </Button>
            )}
            {button('view', t('view'))}
            {resync && (
              <Button
                size="compact-sm"
                variant="light"
                loading={busy === 'resync'}
                onClick={() => void act('resync')}
                data-testid="task-resync"
                title={t('resyncHint')}
              >
                {t('resync')}
              </Button>
            )}
            {button('retry', t('retry'))}
            {button('restart', t('restart'))}
            {button('start_now', t('startNow'))}
            {button('cancel', t('cancel'))}
          </Group>
        )}
      </Stack>
    </Paper>
  );
}

/** The middle line: what each state shows (size, loading count, progress, needed size...). */
function StateLine({ task }: { task: ServerTask }) {
  const { t } = useTranslation('transmission');
  switch (task.state) {
    case TaskState.completed:
      return (
        <Text size="xs" data-testid="task-size">
          {t('size', { size: formatBytes(task.size) })}
          {task.finished_at ? ` · ${formatDateTime(task.finished_at)}` : ''}
        </Text>
      );
    case TaskState.scanning:
      return (
        <Text size="xs" data-testid="task-loading">
          {t('loadingItems', { count: task.total_counts })}
        </Text>
      );
    case TaskState.waitingNoCancel:
      // Stopping after a cancel: the progress it had stays until its worker has stopped.
      return (
        <Stack gap={2} data-testid="task-cancelling">
          {hasProgress(task) && (
            <Progress
              value={Math.min(100, task.progress.percentage)}
              size="sm"
              color="gray"
              aria-label={t('progressLabel', { name: task.task_name })}
            />
          )}
          <Group justify="space-between" gap="xs">
            <Text size="xs" c="dimmed">
              {t('cancelling')}
            </Text>
            {hasProgress(task) && (
              <Text size="xs" c="dimmed" data-testid="task-amount">
                {percentText(task.progress.percentage)} · {progressAmount(task)}
              </Text>
            )}
          </Group>
        </Stack>
      );
    case TaskState.running:
      if (task.progress.counting) {
        // A copy that plans while it goes: how far along it is cannot be told until the count is whole.
        return (
          <Group justify="space-between" gap="xs" data-testid="task-counting">
            <Text size="xs">{t('countingItems', { count: task.total_counts })}</Text>
            <Text size="xs" c="dimmed" data-testid="task-speed">
              {formatSpeed(task.progress.speed)}
            </Text>
            <Text size="xs" c="dimmed" data-testid="task-amount">
              {formatBytes(task.progress.transferred)}
            </Text>
          </Group>
        );
      }
      if (!hasProgress(task)) {
        return (
          <Text size="xs" data-testid="task-scanning">
            {t('scanning')}
          </Text>
        );
      }
      return (
        <Stack gap={2} data-testid="task-progress">
          <Progress
            value={Math.min(100, task.progress.percentage)}
            size="sm"
            aria-label={t('progressLabel', { name: task.task_name })}
          />
          <Group justify="space-between" gap="xs">
            <Text size="xs" data-testid="task-percent">
              {percentText(task.progress.percentage)}
            </Text>
            <Text size="xs" c="dimmed" data-testid="task-speed">
              {formatSpeed(task.progress.speed)}
            </Text>
            <Text size="xs" c="dimmed" data-testid="task-amount">
              {progressAmount(task)}
            </Text>
          </Group>
        </Stack>
      );
    case TaskState.failed:
      return (
        <Text size="xs" c="red.9" data-testid="task-failed">
          {failedLine(task, t)}
        </Text>
      );
    case TaskState.partial:
      return (
        <Text size="xs" data-testid="task-counts">
          {t('partialCounts', {
            done: task.result?.success_count ?? task.finished_counts,
            total: task.result?.total_count ?? task.total_counts,
            failed: task.result?.failed ?? 0,
          })}
        </Text>
      );
    case TaskState.insufficientStorage:
      return (
        <Text size="xs" c="red.9" data-testid="task-insufficient">
          {task.needed_size
            ? t('insufficientNeeded', { size: formatBytes(task.needed_size) })
            : t('insufficientStorage')}
        </Text>
      );
    case TaskState.notEnoughTraffic:
      return (
        <Text size="xs" c="red.9" data-testid="task-needed">
          {t('trafficNeeded', { size: formatBytes(task.needed_size ?? 0) })}
        </Text>
      );
    case TaskState.pending:
      return (
        <Text size="xs" c="dimmed">
          {task.schedule ? t('scheduled') : t('pending')}
        </Text>
      );
    case TaskState.canceled:
      return (
        <Text size="xs" c="dimmed">
          {task.total_counts > 0
            ? t('canceledCounts', { done: task.finished_counts, total: task.total_counts })
            : t('canceledHint')}
        </Text>
      );
    default:
      return (
        <Text size="xs" c="dimmed" data-testid="task-waiting">
          {t('waitingHint')}
        </Text>
      );
  }
}
