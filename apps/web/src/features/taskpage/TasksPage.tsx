import {
  Alert,
  Anchor,
  Badge,
  Button,
  Center,
  Group,
  Loader,
  NativeSelect,
  Pagination,
  Paper,
  Stack,
  Text,
  Title,
} from '@mantine/core';
import { IconListCheck } from '@tabler/icons-react';
import { formatDateTime, truncateTaskName, type ServerTask } from '@skyferry/contract';
import { useCallback, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { openLogin } from '../auth/login.ts';
import { selectLoggedIn, useSession } from '../session/store.ts';
import { taskPageApi } from './api.ts';
import { messageOf, useRepeat } from './hooks.ts';
import { FILTER_STATES, STATE_FILTERS, hasActiveRun, type StateFilter } from './model.ts';
import { OutcomeBadge, Route, StateBadge, kindLabel, scheduleText } from './parts.tsx';
import { TaskActions } from './TaskActions.tsx';

/** How often the list is read again while one of its tasks has a run going on. */
export const LIST_REFRESH_MS = 3000;
/** Tasks a page of the list shows. */
export const TASKS_PAGE_SIZE = 50;

/**
 * The Tasks page (/tasks): every task of the user with its kind, clouds, schedule (with its zone),
 * last outcome and next run, filterable by state; each with Run now, Edit, Duplicate, Verify and
 * Delete. A task opens its own page with the run history.
 */
export function TasksPage() {
  const { t } = useTranslation('taskpage');
  const loggedIn = useSession(selectLoggedIn);
  const [filter, setFilter] = useState<StateFilter>('all');
  const [page, setPage] = useState(1);
  const [tasks, setTasks] = useState<ServerTask[] | null>(null);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      const found = await taskPageApi.list(FILTER_STATES[filter], page, TASKS_PAGE_SIZE);
      setTasks(found.items);
      setTotal(found.total);
      setError(null);
    } catch (err) {
      setError(messageOf(err));
    }
  }, [filter, page]);

  useEffect(() => {
    if (!loggedIn) return;
    setTasks(null);
    void load();
  }, [load, loggedIn]);

  useRepeat(tasks?.some((task) => hasActiveRun(task.state)) ?? false, load, LIST_REFRESH_MS);

  if (!loggedIn) {
    return (
      <Stack gap="md" maw={720}>
        <Title order={2}>{t('title')}</Title>
        <Text>{t('loginFirst')}</Text>
        <Button onClick={() => void openLogin()} style={{ alignSelf: 'flex-start' }}>
          {t('login')}
        </Button>
      </Stack>
    );
  }

  return (
    <Stack gap="md" data-testid="tasks-page">
      <Group justify="space-between" wrap="wrap" gap="sm">
        <Stack gap={2} style={{ minWidth: 0 }}>
          <Title order={2}>{t('title')}</Title>
          <Text size="sm" c="dimmed">
            {t('subtitle')}
          </Text>
        </Stack>
        <NativeSelect
          label={t('filter.label')}
          value={filter}
          onChange={(e) => {
            setFilter(e.currentTarget.value as StateFilter);
            setPage(1);
          }}
          data={STATE_FILTERS.map((f) => ({ value: f, label: t(`filter.${f}`) }))}
          w={{ base: '100%', xs: 240 }}
          data-testid="state-filter"
        />
      </Group>
      {error && (
        <Alert color="red" variant="light">
          {error}
        </Alert>
      )}
      {tasks === null && !error && (
        <Center py="xl">
          <Loader size="sm" role="status" aria-label={t('loading')} />
        </Center>
      )}
      {tasks?.length === 0 && (
        <Paper withBorder p="lg" radius="md">
          <Group gap="sm" wrap="nowrap">
            <IconListCheck size={24} aria-hidden style={{ flex: 'none' }} />
            <Text size="sm">{filter === 'all' ? t('empty') : t('emptyFilter')}</Text>
          </Group>
        </Paper>
      )}
      {tasks && tasks.length > 0 && (
        <Stack gap="sm" component="ul" style={{ listStyle: 'none', margin: 0, padding: 0 }} aria-label={t('title')}>
          {tasks.map((task) => (
            <li key={task.id}>
              <TaskCard task={task} onChanged={load} />
            </li>
          ))}
        </Stack>
      )}
      {total > TASKS_PAGE_SIZE && (
        <Group justify="center">
          <Pagination
            size="sm"
            total={Math.ceil(total / TASKS_PAGE_SIZE)}
            value={page}
            onChange={setPage}
            data-testid="tasks-pages"
          />
        </Group>
      )}
    </Stack>
  );
}

/** One task of the list: name (to its page), state, kind, clouds, schedule, last outcome, next run, actions. */
function TaskCard({ task, onChanged }: { task: ServerTask; onChanged: () => Promise<void> }) {
  const { t } = useTranslation('taskpage');
  return (
    <Paper withBorder p="sm" radius="md" data-testid="task-card" data-task-id={task.id} data-state={task.state}>
      <Stack gap={6}>
        <Group justify="space-between" wrap="nowrap" gap="xs" align="flex-start">
          <Stack gap={4} style={{ minWidth: 0 }}>
            <Anchor
              component={Link}
              to={`/tasks/${encodeURIComponent(task.id)}`}
              fw={600}
              size="sm"
              title={task.task_name}
              data-testid="task-link"
              style={{ overflowWrap: 'anywhere' }}
            >
              {truncateTaskName(task.task_name)}
            </Anchor>
            <Group gap={6} wrap="wrap">
              <StateBadge task={task} />
              <Badge size="sm" variant="outline" color="gray.7" data-testid="task-kind">
                {kindLabel(task, t)}
              </Badge>
            </Group>
          </Stack>
          <TaskActions task={task} onChanged={onChanged} compact />
        </Group>
        <Route task={task} />
        <Group gap="md" wrap="wrap">
          <Text size="xs" data-testid="task-schedule">
            {scheduleText(task, t)}
          </Text>
          {task.is_schedule === 2 && task.next_run_time !== null && (
            <Text size="xs" c="dimmed" data-testid="task-next-run">
              {t('nextRun', { time: formatDateTime(task.next_run_time) })}
            </Text>
          )}
          <Group gap={4} wrap="nowrap">
            <Text size="xs" c="dimmed">
              {t('lastRun')}:
            </Text>
            {task.result ? (
              <OutcomeBadge run={{ outcome: task.result.outcome }} />
            ) : (
              <Text size="xs" c="dimmed" data-testid="task-never">
                {t('never')}
              </Text>
            )}
          </Group>
        </Group>
      </Stack>
    </Paper>
  );
}
