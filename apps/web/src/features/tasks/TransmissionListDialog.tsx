import { Alert, Button, Center, Group, Loader, Modal, Pagination, ScrollArea, Stack, Tabs, Text } from '@mantine/core';
import { IconClearAll } from '@tabler/icons-react';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { DialogSlotProps } from '../../app/slot-types.ts';
import { selectLoggedIn, useSession } from '../session/store.ts';
import { clearAll, runTaskAction } from './actions.ts';
import { TaskRow } from './TaskRow.tsx';
import { TransferDetailsDialog } from './TransferDetailsDialog.tsx';
import { openDetails, transmission, useTransmission, type ListKind } from './store.ts';

/**
 * The Transmission list dialog the header's task-list button opens: tabs "Transferring(count)" and
 * "Transfer complete(count)", each a page of up to 100 tasks with clear all. While it is open the
 * running list is read every 5 s and each running task's progress every 2 to 3 s.
 */
export function TransmissionListDialog({ opened, onClose }: DialogSlotProps) {
  const { t } = useTranslation('transmission');
  const [tab, setTab] = useState<ListKind>('running');
  const running = useTransmission((s) => s.running);
  const completed = useTransmission((s) => s.completed);
  const error = useTransmission((s) => s.error);
  const detailsId = useTransmission((s) => s.detailsId);

  // Server tasks belong to signed-in users: a visitor's lists are empty, with nothing to poll.
  const loggedIn = useSession(selectLoggedIn);
  useEffect(() => {
    if (!opened || !loggedIn) return;
    transmission.start();
    return () => transmission.stop();
  }, [opened, loggedIn]);

  const panel = (kind: ListKind) => {
    const l = kind === 'running' ? running : completed;
    const pages = Math.max(1, Math.ceil(l.total / l.page_size));
    if (!loggedIn) {
      return (
        <Text size="sm" c="dimmed" data-testid={`tasks-empty-${kind}`}>
          {t('empty')}
        </Text>
      );
    }
    if (!l.loaded && !error) {
      return (
        <Center py="xl">
          <Loader size="sm" role="status" aria-label={t('loading')} />
        </Center>
      );
    }
    return (
      <Stack gap="sm">
        {l.list.length === 0 ? (
          <Text size="sm" c="dimmed" data-testid={`tasks-empty-${kind}`}>
            {t('empty')}
          </Text>
        ) : (
          <>
            <Group justify="flex-end">
              <Button
                size="compact-sm"
                variant="subtle"
                color="red"
                c="red.9"
                leftSection={<IconClearAll size={14} aria-hidden />}
                onClick={() => void clearAll(kind)}
                data-testid={`tasks-clear-${kind}`}
              >
                {t('clearAll')}
              </Button>
            </Group>
            <ScrollArea.Autosize
              mah="60vh"
              type="auto"
              viewportProps={{
                tabIndex: 0,
                role: 'region',
                'aria-label': kind === 'running' ? t('running', { n: l.total }) : t('completed', { n: l.total }),
              }}
            >
              <Stack gap="xs" data-testid={`tasks-${kind}`}>
                {l.list.map((task) => (
                  <TaskRow key={task.id} task={task} onAction={runTaskAction} />
                ))}
              </Stack>
            </ScrollArea.Autosize>
          </>
        )}
        {pages > 1 && (
          <Group justify="center">
            <Pagination
              size="sm"
              total={pages}
              value={l.page}
              onChange={(p) => void transmission.setPage(kind, p)}
              getControlProps={(control) => ({
                'aria-label': control === 'previous' ? t('previousPage') : control === 'next' ? t('nextPage') : control,
              })}
            />
          </Group>
        )}
      </Stack>
    );
  };

  return (
    <Modal opened={opened} onClose={onClose} title={t('title')} size="lg" centered>
      {error && loggedIn && (
        <Alert color="red" variant="light" mb="sm">
          {error}
        </Alert>
      )}
      <Tabs value={tab} onChange={(v) => v && setTab(v as ListKind)} keepMounted={false}>
        <Tabs.List>
          <Tabs.Tab value="running" data-testid="tab-running">
            {t('running', { n: loggedIn ? running.total : 0 })}
          </Tabs.Tab>
          <Tabs.Tab value="completed" data-testid="tab-completed">
            {t('completed', { n: loggedIn ? completed.total : 0 })}
          </Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="running" pt="md">
          {panel('running')}
        </Tabs.Panel>
        <Tabs.Panel value="completed" pt="md">
          {panel('completed')}
        </Tabs.Panel>
      </Tabs>
      <TransferDetailsDialog taskId={detailsId} onClose={() => openDetails(null)} />
    </Modal>
  );
}
