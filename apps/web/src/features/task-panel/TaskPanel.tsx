import { ActionIcon, Badge, Box, Button, Group, Paper, Progress, ScrollArea, Stack, Text } from '@mantine/core';
import {
  IconChevronDown,
  IconChevronUp,
  IconDownload,
  IconFile,
  IconFolderOpen,
  IconFolderSearch,
  IconRefresh,
  IconTrash,
  IconUpload,
} from '@tabler/icons-react';
import { formatBytes, plainName } from '@skyferry/contract';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { confirm } from '../messages/store.ts';
import { selectVisibleClouds, sessionStore } from '../session/store.ts';
import { cloudHref } from '../shell/clouds.ts';
import { desktopBridge } from '../shell/desktop.ts';
import { clearTasks, deleteTask, retryTask } from './runner.ts';
import { anyRunning, setCollapsed, statusView, taskDisplayName, useTaskPanel, type LocalTask } from './store.ts';
import { Name } from '../../lib/Name.tsx';

/** Where "open target folder" goes: the task's cloud in the explorer, at the folder. */
export function targetFolderHref(task: Pick<LocalTask, 'cloud_id' | 'parent'>, now = Date.now()): string | null {
  const clouds = selectVisibleClouds(sessionStore.getState());
  const index = clouds.findIndex((c) => c.id === task.cloud_id);
  const cloud = clouds[index];
  if (!cloud) return null;
  return `${cloudHref(cloud, index, now)}&path=${encodeURIComponent(task.parent)}`;
}

/**
 * The task panel of uploads and downloads: the count in the title, collapsible, clear all (asking
 * first while a task runs), and per task its status, delete and open-target-folder.
 */
export function TaskPanel() {
  const { t } = useTranslation('tasks');
  const navigate = useNavigate();
  const tasks = useTaskPanel((s) => s.tasks);
  const open = useTaskPanel((s) => s.open);
  const collapsed = useTaskPanel((s) => s.collapsed);
  if (!open) return null;

  const clearAll = async () => {
    if (anyRunning(tasks)) {
      const answer = await confirm({ message: t('clearConfirm'), danger: true });
      if (answer !== 'yes') return;
    }
    clearTasks();
  };

  return (
    <Paper
      shadow="md"
      withBorder
      radius="md"
      role="region"
      aria-label={t('title', { count: tasks.length })}
      data-testid="task-panel"
      style={{
        position: 'fixed',
        insetInlineEnd: 16,
        bottom: 16,
        width: 'min(380px, calc(100vw - 32px))',
        zIndex: 150,
      }}
    >
      <Group justify="space-between" px="sm" py={6} wrap="nowrap">
        <Text fw={600} size="sm" data-testid="task-panel-title">
          {t('title', { count: tasks.length })}
        </Text>
        <Group gap={4} wrap="nowrap">
          <Button size="compact-xs" variant="subtle" color="red" onClick={() => void clearAll()}>
            {t('clearAll')}
          </Button>
          <ActionIcon
            variant="subtle"
            size="sm"
            aria-label={collapsed ? t('expand') : t('collapse')}
            aria-expanded={!collapsed}
            onClick={() => setCollapsed(!collapsed)}
          >
            {collapsed ? <IconChevronUp size={16} aria-hidden /> : <IconChevronDown size={16} aria-hidden />}
          </ActionIcon>
        </Group>
      </Group>
      {!collapsed && (
        <ScrollArea.Autosize mah={280} type="auto">
          <Stack gap={0} component="ul" style={{ listStyle: 'none', margin: 0, padding: 0 }}>
            {tasks.map((task) => (
              <TaskRow key={task.id} task={task} onOpen={(href) => navigate(href)} />
            ))}
          </Stack>
        </ScrollArea.Autosize>
      )}
    </Paper>
  );
}

function TaskRow({ task, onOpen }: { task: LocalTask; onOpen: (href: string) => void }) {
  const { t } = useTranslation('tasks');
  const view = statusView(task);
  const href = targetFolderHref(task);
  return (
    <Box
      component="li"
      px="sm"
      py={6}
      style={{ borderTop: '1px solid var(--mantine-color-gray-2)' }}
      data-testid="task-row"
      data-status={task.status}
    >
      <Group gap="xs" wrap="nowrap">
        {task.type === 0 ? (
          <IconUpload size={16} aria-label={t('upload')} />
        ) : (
          <IconDownload size={16} aria-label={t('download')} />
        )}
        <Box style={{ flex: 1, minWidth: 0 }}>
          <Text size="sm" title={plainName(task.name)} data-testid="task-name">
            <Name value={taskDisplayName(task)} />
          </Text>
          <Group gap={6} wrap="nowrap">
            <Text size="xs" c="dimmed">
              {formatBytes(task.size)}
            </Text>
            {view.kind === 'progress' && (
              <>
                <Progress
                  value={view.percent}
                  size="sm"
                  style={{ flex: 1 }}
                  aria-label={t('progress', { percent: view.percent })}
                />
                <Text size="xs" c="dimmed" title={task.progress_text || undefined}>
                  {view.percent}%
                </Text>
              </>
            )}
            {/* Outlined in shade 9: the small text keeps AA contrast on white. */}
            {view.kind === 'done' && (
              <Badge size="xs" color="teal.9" variant="outline">
                {task.type === 0 ? t('uploaded') : t('downloaded')}
              </Badge>
            )}
            {view.kind === 'failed' && (
              <Badge size="xs" color="red.9" variant="outline" data-testid="task-failed">
                {t('failed')}
              </Badge>
            )}
          </Group>
          {view.kind === 'failed' && task.error && (
            <Text size="xs" c="red.9" lineClamp={2} title={task.error} data-testid="task-error">
              {task.error}
            </Text>
          )}
        </Box>
        {view.kind === 'failed' && view.retry && (
          <ActionIcon variant="subtle" size="sm" aria-label={t('retry')} onClick={() => retryTask(task.id)}>
            <IconRefresh size={16} aria-hidden />
          </ActionIcon>
        )}
        {task.local_path && <LocalFileActions path={task.local_path} />}
        {href && (
          <ActionIcon variant="subtle" size="sm" aria-label={t('openFolder')} onClick={() => onOpen(href)}>
            <IconFolderOpen size={16} aria-hidden />
          </ActionIcon>
        )}
        <ActionIcon
          variant="subtle"
          size="sm"
          color="gray"
          aria-label={t('delete')}
          onClick={() => deleteTask(task.id)}
        >
          <IconTrash size={16} aria-hidden />
        </ActionIcon>
      </Group>
    </Box>
  );
}

/** Desktop client: open a downloaded file, or show it in its folder. */
function LocalFileActions({ path }: { path: string }) {
  const { t } = useTranslation('tasks');
  const bridge = desktopBridge();
  if (!bridge?.openDownloadedFile) return null;
  return (
    <>
      <ActionIcon
        variant="subtle"
        size="sm"
        aria-label={t('openFile')}
        onClick={() => void bridge.openDownloadedFile?.(path)}
        data-testid="open-file"
      >
        <IconFile size={16} aria-hidden />
      </ActionIcon>
      <ActionIcon
        variant="subtle"
        size="sm"
        aria-label={t('showInFolder')}
        onClick={() => void bridge.showInFolder?.(path)}
        data-testid="show-in-folder"
      >
        <IconFolderSearch size={16} aria-hidden />
      </ActionIcon>
    </>
  );
}
