import { Alert, Anchor, Center, Group, Loader, Modal, ScrollArea, Stack, Table, Text } from '@mantine/core';
import { formatBytes, taskActions, type TaskDetail } from '@skyferry/contract';
import { Fragment, useEffect, useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { cloudLabel } from '../shell/clouds.ts';
import { tasksApi } from './api.ts';
import { reportTaskError } from './errors.ts';
import { failedLine, formatDuration } from './format.ts';
import { transmission } from './store.ts';
import { Name } from '../../lib/Name.tsx';

type Load = { state: 'loading' } | { state: 'ready'; task: TaskDetail } | { state: 'error'; message: string };

/** A failure reason code as words (provider error codes and the engine's own). */
export function reasonKey(reason: string): string {
  return `reasons.${reason}`;
}

/**
 * Transfer Details: the run's result (success count, total, size, time, source, target) and the
 * files that failed with their reasons, with a link retrying all of them.
 */
export function TransferDetailsDialog({ taskId, onClose }: { taskId: string | null; onClose: () => void }) {
  const { t } = useTranslation('transmission');
  const [load, setLoad] = useState<Load>({ state: 'loading' });
  const [retrying, setRetrying] = useState(false);

  useEffect(() => {
    if (!taskId) return;
    let live = true;
    setLoad({ state: 'loading' });
    tasksApi.detail(taskId).then(
      (task) => live && setLoad({ state: 'ready', task }),
      (err: unknown) => live && setLoad({ state: 'error', message: err instanceof Error ? err.message : String(err) }),
    );
    return () => {
      live = false;
    };
  }, [taskId]);

  const retryAll = async () => {
    if (!taskId || load.state !== 'ready') return;
    setRetrying(true);
    try {
      await tasksApi.retry(taskId);
      onClose();
      await transmission.refreshAll();
    } catch (err) {
      await reportTaskError(err, load.task.to_cloud.cloud_id);
    } finally {
      setRetrying(false);
    }
  };

  return (
    <Modal opened={taskId !== null} onClose={onClose} title={t('details.title')} size="lg" centered>
      {load.state === 'loading' && (
        <Center py="lg">
          <Loader size="sm" role="status" aria-label={t('loading')} />
        </Center>
      )}
      {load.state === 'error' && (
        <Alert color="red" variant="light">
          {load.message}
        </Alert>
      )}
      {load.state === 'ready' && (
        <Stack gap="md" data-testid="transfer-details">
          {load.task.result?.error && (
            // A run that stopped as a whole says why, as failed files do (MSG-25).
            <Alert
              color="red"
              variant="light"
              title={failedLine({ ...load.task, result: null }, t)}
              data-testid="details-error"
            >
              {load.task.result.error.message}
            </Alert>
          )}
          <TransferResult task={load.task} />
          {load.task.result_list.length > 0 && (
            <Stack gap="xs">
              <Group justify="space-between">
                <Text fw={600} size="sm">
                  {t('details.failedFiles', { count: load.task.result_total })}
                </Text>
                {taskActions(load.task.state).includes('retry') && (
                  <Anchor
                    component="button"
                    type="button"
                    size="sm"
                    onClick={() => void retryAll()}
                    disabled={retrying}
                    data-testid="details-retry-all"
                  >
                    {t('details.retryAll')}
                  </Anchor>
                )}
              </Group>
              <ScrollArea.Autosize
                mah={320}
                viewportProps={{
                  tabIndex: 0,
                  role: 'region',
                  'aria-label': t('details.failedFiles', { count: load.task.result_total }),
                }}
              >
                <Table striped withTableBorder fz="xs" data-testid="failed-files">
                  <Table.Thead>
                    <Table.Tr>
                      <Table.Th>{t('details.file')}</Table.Th>
                      <Table.Th>{t('details.folder')}</Table.Th>
                      <Table.Th>{t('details.reason')}</Table.Th>
                    </Table.Tr>
                  </Table.Thead>
                  <Table.Tbody>
                    {load.task.result_list.map((f, i) => (
                      <Table.Tr key={`${f.sourceFile.parent}/${f.sourceFile.name}/${i}`} data-testid="failed-file">
                        <Table.Td style={{ wordBreak: 'break-all' }}>
                          <Name value={f.sourceFile.name} />
                        </Table.Td>
                        <Table.Td style={{ wordBreak: 'break-all' }} className="sf-value">
                          <Name value={f.sourceFile.parent} />
                        </Table.Td>
                        <Table.Td>
                          <Text size="xs">{t(reasonKey(f.reason), { defaultValue: f.reason })}</Text>
                          {f.message && (
                            <Text size="xs" c="dimmed">
                              {f.message}
                            </Text>
                          )}
                        </Table.Td>
                      </Table.Tr>
                    ))}
                  </Table.Tbody>
                </Table>
              </ScrollArea.Autosize>
              {load.task.result_total > load.task.result_list.length && (
                <Text size="xs" c="dimmed">
                  {t('details.firstOf', { shown: load.task.result_list.length, total: load.task.result_total })}
                </Text>
              )}
            </Stack>
          )}
          {load.task.result_list.length === 0 && !load.task.result?.error && (
            <Text size="sm" c="dimmed">
              {t('details.noFailures')}
            </Text>
          )}
        </Stack>
      )}
    </Modal>
  );
}

/** The transfer result: success count, total count, total size, time taken, source, target. */
function TransferResult({ task }: { task: TaskDetail }) {
  const { t } = useTranslation('transmission');
  const r = task.result;
  /** A cloud and its paths, each name isolated. */
  const route = (cloud: string, paths: readonly string[]) => (
    <>
      <Name value={cloud} />
      {paths.map((p, i) => (
        <Fragment key={i}>
          {i === 0 ? ' ' : ', '}
          <Name value={p} />
        </Fragment>
      ))}
    </>
  );
  const rows: Array<[string, string, ReactNode]> = [
    ['success', t('details.successCount'), String(r?.success_count ?? task.finished_counts)],
    ['total', t('details.totalCount'), String(r?.total_count ?? task.total_counts)],
    ['size', t('details.totalSize'), formatBytes(r?.total_size ?? task.size)],
    ['time', t('details.timeTaken'), formatDuration(r?.time_taken ?? task.duration)],
    ['source', t('details.source'), route(cloudLabel(task.from_cloud), task.from_cloud.paths)],
    ['target', t('details.target'), route(cloudLabel(task.to_cloud), [task.to_cloud.path])],
  ];
  return (
    <Table withTableBorder fz="sm" data-testid="transfer-result">
      <Table.Tbody>
        {rows.map(([key, label, value]) => (
          <Table.Tr key={key} data-testid={`result-${key}`}>
            <Table.Th w={160}>{label}</Table.Th>
            <Table.Td style={{ wordBreak: 'break-all' }}>{value}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
