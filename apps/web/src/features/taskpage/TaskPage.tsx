import {
  Alert,
  Badge,
  Button,
  Center,
  Group,
  Loader,
  Pagination,
  Paper,
  Progress,
  SimpleGrid,
  Stack,
  Text,
  Title,
} from '@mantine/core';
import { IconChevronRight } from '@tabler/icons-react';
import {
  RUNS_PAGE_SIZE,
  TaskType,
  formatDateTime,
  type ListRunsData,
  type ServerTask,
  type TaskRun,
} from '@skyferry/contract';
import { useCallback, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router';
import { percentText, progressAmount } from '../tasks/format.ts';
import { taskPageApi } from './api.ts';
import { stopVerifying } from './actions.ts';
import { isNotFound, messageOf, useRepeat } from './hooks.ts';
import { hasActiveRun } from './model.ts';
import {
  BackLink,
  OutcomeBadge,
  Route,
  RunFigures,
  StateBadge,
  filterText,
  kindLabel,
  scheduleText,
  when,
} from './parts.tsx';
import { TaskActions } from './TaskActions.tsx';

/** Runs a page of the history shows. */
export const RUNS_PAGE = RUNS_PAGE_SIZE;
/** How often the page is read again while a run or a verification goes on. */
export const TASK_REFRESH_MS = 2500;

/**
 * A task's page (/tasks/:id): what it is (clouds, mode, policies, filter, schedule with its zone,
 * next run), its actions, the progress of a run going on, and its run history (transfers and
 * verifications, newest first, each opening its details).
 */
export function TaskPage() {
  const { t } = useTranslation('taskpage');
  const { id = '' } = useParams();
  const [task, setTask] = useState<ServerTask | null>(null);
  const [runs, setRuns] = useState<ListRunsData | null>(null);
  const [page, setPage] = useState(1);
  const [missing, setMissing] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      const [tk, rs] = await Promise.all([taskPageApi.task(id), taskPageApi.runs(id, page, RUNS_PAGE)]);
      setTask(tk);
      setRuns(rs);
      setError(null);
    } catch (err) {
      if (isNotFound(err)) setMissing(true);
      else setError(messageOf(err));
    }
  }, [id, page]);

  useEffect(() => {
    setMissing(false);
    void load();
  }, [load]);

  const going = (task !== null && hasActiveRun(task.state)) || (runs?.items.some((r) => r.outcome === null) ?? false);
  useRepeat(going, load, TASK_REFRESH_MS);

  const back = <BackLink to="/tasks" label={t('back')} testId="back-to-tasks" />;
  if (missing) {
    return (
      <Stack gap="md">
        {back}
        <Alert color="orange" variant="light" data-testid="task-missing">
          {t('notFound')}
        </Alert>
      </Stack>
    );
  }
  if (!task) {
    return (
      <Stack gap="md">
        {back}
        {error ? (
          <Alert color="red" variant="light">
            {error}
          </Alert>
        ) : (
          <Center py="xl">
            <Loader size="sm" role="status" aria-label={t('loading')} />
          </Center>
        )}
      </Stack>
    );
  }
  const verifying = runs?.items.find((r) => r.kind === 'verify' && r.outcome === null);

  return (
    <Stack gap="md" data-testid="task-page" data-task-id={task.id} data-state={task.state}>
      {back}
      <Stack gap={6}>
        <Title order={2} style={{ overflowWrap: 'anywhere' }} data-testid="task-title">
          {task.task_name}
        </Title>
        <Group gap={6} wrap="wrap">
          <StateBadge task={task} />
          <Badge size="sm" variant="outline" color="gray.7">
            {kindLabel(task, t)}
          </Badge>
        </Group>
      </Stack>
      <TaskActions task={task} onChanged={load} afterDelete="/tasks" />
      {error && (
        <Alert color="red" variant="light">
          {error}
        </Alert>
      )}
      {hasActiveRun(task.state) && task.progress.length + task.total_counts > 0 && (
        <Paper withBorder p="sm" radius="md" data-testid="task-progress">
          <Stack gap={4}>
            <Progress value={Math.min(100, task.progress.percentage)} aria-label={t('progress')} />
            <Group justify="space-between" gap="xs" wrap="wrap">
              <Text size="xs">{percentText(task.progress.percentage)}</Text>
              <Text size="xs" c="dimmed">
                {progressAmount(task)}
              </Text>
            </Group>
          </Stack>
        </Paper>
      )}
      {verifying && (
        <Alert color="blue" variant="light" data-testid="verify-running">
          <Group justify="space-between" wrap="wrap" gap="xs">
            <Text size="sm">{t('verifying', { count: verifying.compared })}</Text>
            <Button size="compact-sm" variant="default" onClick={() => void stopVerifying(task).then(load)}>
              {t('actions.stopVerify')}
            </Button>
          </Group>
        </Alert>
      )}
      <Paper withBorder p="md" radius="md">
        <Stack gap="sm">
          <Title order={3} size="h5">
            {t('settings.title')}
          </Title>
          <Route task={task} />
          <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="xs" verticalSpacing={6}>
            {task.task_type === TaskType.sync && (
              <Setting label={t('settings.mode')} value={t(`transfer:modes.${task.sync_mode ?? 'one_way'}`)} />
            )}
            {(task.task_type === TaskType.migrate ||
              task.sync_mode === 'one_way' ||
              task.sync_mode === 'incremental') && (
              <Setting
                label={t('settings.sameName')}
                value={t(`settings:defaults.policies.${task.same_name_policy}`)}
              />
            )}
            {task.sync_mode === 'two_way' && (
              <Setting label={t('settings.conflicts')} value={t(`conflictRules.${task.conflict_resolution}`)} />
            )}
            <Setting label={t('settings.filter')} value={filterText(task.filter, t)} />
            <Setting label={t('settings.schedule')} value={scheduleText(task, t)} testId="task-schedule" />
            {task.is_schedule === 2 && task.next_run_time !== null && (
              <Setting
                label={t('settings.nextRun')}
                value={formatDateTime(task.next_run_time)}
                testId="task-next-run"
              />
            )}
          </SimpleGrid>
        </Stack>
      </Paper>
      <Stack gap="sm">
        <Title order={3} size="h4">
          {t('history.title')}
        </Title>
        {runs && runs.items.length === 0 && (
          <Text size="sm" c="dimmed" data-testid="no-runs">
            {t('history.empty')}
          </Text>
        )}
        {runs && runs.items.length > 0 && (
          <Stack gap="xs" component="ul" style={{ listStyle: 'none', margin: 0, padding: 0 }}>
            {runs.items.map((run) => (
              <li key={run.id}>
                <RunRow task={task} run={run} />
              </li>
            ))}
          </Stack>
        )}
        {runs && runs.total > RUNS_PAGE && (
          <Group justify="center">
            <Pagination
              size="sm"
              total={Math.ceil(runs.total / RUNS_PAGE)}
              value={page}
              onChange={setPage}
              data-testid="runs-pages"
            />
          </Group>
        )}
      </Stack>
    </Stack>
  );
}

function Setting({ label, value, testId }: { label: string; value: string; testId?: string }) {
  return (
    <Group gap={6} wrap="wrap" align="baseline" style={{ minWidth: 0 }}>
      <Text size="sm" c="dimmed" style={{ overflowWrap: 'anywhere' }}>
        {label}:
      </Text>
      <Text size="sm" data-testid={testId} style={{ overflowWrap: 'anywhere' }}>
        {value}
      </Text>
    </Group>
  );
}

/** One run of the history: outcome, when, what started it, its figures; opens its details. */
function RunRow({ task, run }: { task: ServerTask; run: TaskRun }) {
  const { t } = useTranslation('taskpage');
  return (
    <Paper
      withBorder
      p="sm"
      radius="md"
      component={Link}
      to={`/tasks/${encodeURIComponent(task.id)}/runs/${encodeURIComponent(run.id)}`}
      style={{ display: 'block', color: 'inherit', textDecoration: 'none' }}
      data-testid="run-row"
      data-run-id={run.id}
      data-kind={run.kind}
    >
      <Group justify="space-between" wrap="nowrap" gap="xs">
        <Stack gap={4} style={{ minWidth: 0 }}>
          <Group gap={6} wrap="wrap">
            <OutcomeBadge run={run} />
            <Text size="sm" fw={500}>
              {when(run.started_at)}
            </Text>
            <Text size="xs" c="dimmed" data-testid="run-trigger">
              {run.kind === 'verify' ? t('history.verify') : t(`triggers.${run.trigger}`)}
            </Text>
          </Group>
          <RunFigures run={run} />
        </Stack>
        <IconChevronRight size={16} aria-hidden style={{ flex: 'none' }} />
      </Group>
    </Paper>
  );
}
