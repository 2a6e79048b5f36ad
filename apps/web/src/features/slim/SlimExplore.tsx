import { Alert, Box, Button, Group, List, Loader, Progress, Stack, Text, Title } from '@mantine/core';
import { IconCircleCheck, IconRefresh } from '@tabler/icons-react';
import { CleanupStatus, INTERVALS, LIMITS, formatBytes, type CleanupTask } from '@skyferry/contract';
import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate, useSearchParams } from 'react-router';
import { confirm } from '../messages/store.ts';
import { selectVisibleClouds, useSession } from '../session/store.ts';
import { cloudLabel } from '../shell/clouds.ts';
import { Results } from './Results.tsx';
import { backToResults, cancelScan, loadTask, pollOnce, startScan, useSlim, type DeletionReport } from './store.ts';
import { Name } from '../../lib/Name.tsx';

/** The next progress poll: every 2 to 3 s (spec section 7). */
export function pollDelay(random = Math.random): number {
  return INTERVALS.progressPollMin + Math.floor(random() * (INTERVALS.progressPollMax - INTERVALS.progressPollMin));
}

function ScanProgress({ task, starting }: { task: CleanupTask | null; starting: boolean }) {
  const { t } = useTranslation('slim');
  const phase = task?.phase ?? 'waiting';
  return (
    <Stack gap="sm" data-testid="slim-scanning" maw={640}>
      <Group gap="xs">
        <Loader size="sm" />
        <Text fw={600}>{starting ? t('starting') : t(`phase.${phase}`)}</Text>
      </Group>
      <Progress
        value={task?.percentage ?? 100}
        animated={task?.percentage === null || task?.percentage === undefined}
        striped={task?.percentage === null || task?.percentage === undefined}
        aria-label={t('scanning')}
      />
      {task && (
        <>
          <Text size="sm">
            {t('scanned', { files: task.total_count, folders: task.folder_count, size: formatBytes(task.total_size) })}
          </Text>
          {task.filename && (
            <Text size="xs" c="dimmed" truncate="start" title={task.filename}>
              {t('current', { name: task.filename })}
            </Text>
          )}
        </>
      )}
      <Group>
        <Button variant="default" onClick={() => void cancelScan()} disabled={!task}>
          {t('cancel')}
        </Button>
      </Group>
    </Stack>
  );
}

function DoneView({ report, onRescan }: { report: DeletionReport; onRescan: () => void }) {
  const { t } = useTranslation('slim');
  return (
    <Stack gap="sm" maw={640} data-testid="slim-done">
      <Group gap="xs">
        <IconCircleCheck size={28} color="var(--mantine-color-green-6)" aria-hidden />
        <Title order={3}>{t('done')}</Title>
      </Group>
      <Text data-testid="slim-done-summary">
        {report.freed === 0 && report.inTrash > 0
          ? t('doneSummaryTrash', { count: report.deleted })
          : t('doneSummary', { count: report.deleted, size: formatBytes(report.freed) })}
      </Text>
      {report.inTrash > 0 && (
        <Text data-testid="slim-in-trash">{t('doneInTrash', { size: formatBytes(report.inTrash) })}</Text>
      )}
      {report.deleted > 0 && (
        <Text size="sm" c="dimmed">
          {report.trashed
            ? `${t('doneTrash')} ${t('common:restoreWithin', { days: LIMITS.restoreDeletedDays })}`
            : t('donePermanent')}
        </Text>
      )}
      {report.failed.length > 0 && (
        <Alert color="yellow" variant="light" title={t('doneFailed', { count: report.failed.length })}>
          <List size="sm">
            {report.failed.map((f) => (
              <List.Item key={f.id}>
                <Name value={f.path} />: {t(`reasons.${f.reason}`)}
              </List.Item>
            ))}
          </List>
        </Alert>
      )}
      <Group>
        <Button onClick={backToResults}>{t('backToResults')}</Button>
        <Button variant="default" leftSection={<IconRefresh size={16} aria-hidden />} onClick={onRescan}>
          {t('rescan')}
        </Button>
      </Group>
    </Stack>
  );
}

/**
 * Scan and clean-up exploration (/slim/explore, route name SlimExplore, narrow sidebar): follows
 * a scan through its stages (scanning, results, deleting, done), polling its progress every 2 to
 * 3 s while it runs. Query: task_id (or cloud_id for the cloud's latest scan).
 */
export function SlimExplore() {
  const { t } = useTranslation('slim');
  const navigate = useNavigate();
  const [params, setParams] = useSearchParams();
  const taskId = params.get('task_id') ?? undefined;
  const cloudId = params.get('cloud_id') ?? undefined;
  const stage = useSlim((s) => s.stage);
  const status = useSlim((s) => s.status);
  const task = useSlim((s) => s.task);
  const report = useSlim((s) => s.report);
  const deleting = useSlim((s) => s.deleting);
  const lastRun = useSlim((s) => s.lastRun);
  const error = useSlim((s) => s.error);
  const clouds = useSession(selectVisibleClouds);
  const currentId = task?.task_id;

  useEffect(() => {
    if (status === CleanupStatus.starting) return;
    if (taskId && currentId === taskId) return;
    let live = true;
    loadTask({ taskId, cloudId }).then(
      (found) => {
        if (live && !found) navigate('/slim', { replace: true });
      },
      () => undefined,
    );
    return () => {
      live = false;
    };
    // Load once per scan asked for; the store keeps it afterwards.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [taskId, cloudId]);

  useEffect(() => {
    if (status !== CleanupStatus.scanning) return;
    const timer = setTimeout(() => void pollOnce(), pollDelay());
    return () => clearTimeout(timer);
  }, [status, task]);

  const rescan = async () => {
    if (!lastRun) return;
    if ((await confirm({ message: t('rescanConfirm') })) !== 'yes') return;
    try {
      const id = await startScan(lastRun);
      setParams({ task_id: id }, { replace: true });
    } catch {
      // shown by the store's error
    }
  };

  const cloud = clouds.find((c) => c.id === (task?.cloud_id ?? lastRun?.cloud_id));
  return (
    <Stack gap="md" data-testid="slim-explore" data-stage={stage}>
      <Group justify="space-between" align="flex-end">
        <Box>
          <Title order={2}>{t('title')}</Title>
          {(cloud || task) && (
            <Text size="sm" c="dimmed">
              {cloud ? <Name value={cloudLabel(cloud)} /> : ''} <Name value={task?.path ?? lastRun?.path ?? ''} />
            </Text>
          )}
        </Box>
        {(stage === 'results' || stage === 'idle') && lastRun && (
          <Button variant="default" leftSection={<IconRefresh size={16} aria-hidden />} onClick={() => void rescan()}>
            {t('rescan')}
          </Button>
        )}
      </Group>
      {error && (
        <Alert color="red" variant="light">
          {error}
        </Alert>
      )}
      {stage === 'scanning' && <ScanProgress task={task} starting={status === CleanupStatus.starting} />}
      {stage === 'results' && task && <Results task={task} />}
      {stage === 'deleting' && (
        <Stack gap="xs" maw={640} data-testid="slim-deleting">
          <Group gap="xs">
            <Loader size="sm" />
            <Text fw={600}>{t('deleting', { done: deleting?.done ?? 0, total: deleting?.total ?? 0 })}</Text>
          </Group>
          <Progress value={deleting && deleting.total > 0 ? (deleting.done / deleting.total) * 100 : 0} />
        </Stack>
      )}
      {stage === 'done' && report && <DoneView report={report} onRescan={() => void rescan()} />}
      {stage === 'idle' && task && task.status === CleanupStatus.canceled && (
        <Alert variant="light" data-testid="slim-canceled">
          {t('canceled')}
        </Alert>
      )}
      {stage === 'idle' && task && task.status === CleanupStatus.failed && (
        <Alert color="red" variant="light" data-testid="slim-failed">
          {t('failed', {
            reason:
              task.error?.code === 'not_found' || task.error?.code === 'auth_expired'
                ? t(`errors.${task.error.code}`)
                : t('errors.other'),
          })}
        </Alert>
      )}
    </Stack>
  );
}
