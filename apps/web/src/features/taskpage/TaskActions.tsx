import { ActionIcon, Button, Group, Menu, Tooltip } from '@mantine/core';
import {
  IconCopy,
  IconDots,
  IconPencil,
  IconPlayerPlay,
  IconPlayerStop,
  IconShieldCheck,
  IconTrash,
} from '@tabler/icons-react';
import type { ServerTask } from '@skyferry/contract';
import { useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { cancelRun, deleteTask, duplicateTask, runNow, verifyTask } from './actions.ts';
import { EditTaskDialog } from './EditTaskDialog.tsx';
import { hasActiveRun } from './model.ts';

type Action = 'run' | 'cancel' | 'edit' | 'duplicate' | 'verify' | 'delete';

export interface TaskActionsProps {
  task: ServerTask;
  /** Reads the task (and what shows it) again after an action. */
  onChanged: () => Promise<void>;
  /** A menu behind one button (the list), or a row of buttons (the task's page). */
  compact?: boolean;
  /** Where the page goes after the task is deleted (the task's own page leaves it). */
  afterDelete?: string;
}

/**
 * What can be done with any task, whatever its state: Run now (Cancel while a run is queued or
 * going), Edit, Duplicate, Verify and Delete.
 */
export function TaskActions({ task, onChanged, compact = false, afterDelete }: TaskActionsProps) {
  const { t } = useTranslation('taskpage');
  const navigate = useNavigate();
  const [busy, setBusy] = useState<Action | null>(null);
  const [editing, setEditing] = useState(false);
  const active = hasActiveRun(task.state);

  const act = async (action: Action) => {
    if (action === 'edit') {
      setEditing(true);
      return;
    }
    setBusy(action);
    try {
      if (action === 'run') await runNow(task);
      else if (action === 'cancel') await cancelRun(task);
      else if (action === 'verify') await verifyTask(task);
      else if (action === 'duplicate') {
        const copy = await duplicateTask(task);
        if (copy && !compact) {
          navigate(`/tasks/${encodeURIComponent(copy.id)}`);
          return;
        }
      } else if (action === 'delete') {
        if (!(await deleteTask(task))) return;
        if (afterDelete) {
          navigate(afterDelete);
          return;
        }
      }
      await onChanged();
    } finally {
      setBusy(null);
    }
  };

  const items: Array<{ action: Action; label: string; icon: ReactNode; danger?: boolean }> = [
    active
      ? { action: 'cancel', label: t('actions.cancel'), icon: <IconPlayerStop size={16} aria-hidden /> }
      : { action: 'run', label: t('actions.runNow'), icon: <IconPlayerPlay size={16} aria-hidden /> },
    { action: 'edit', label: t('actions.edit'), icon: <IconPencil size={16} aria-hidden /> },
    { action: 'duplicate', label: t('actions.duplicate'), icon: <IconCopy size={16} aria-hidden /> },
    { action: 'verify', label: t('actions.verify'), icon: <IconShieldCheck size={16} aria-hidden /> },
    { action: 'delete', label: t('actions.delete'), icon: <IconTrash size={16} aria-hidden />, danger: true },
  ];

  const dialog = (
    <EditTaskDialog
      task={editing ? task : null}
      onClose={() => setEditing(false)}
      onSaved={async () => {
        setEditing(false);
        await onChanged();
      }}
    />
  );

  if (compact) {
    return (
      <>
        <Menu position="bottom-end" withinPortal>
          <Menu.Target>
            <Tooltip label={t('actions.more', { name: task.task_name })} withArrow>
              <ActionIcon
                variant="subtle"
                color="gray"
                size="lg"
                aria-label={t('actions.more', { name: task.task_name })}
                loading={busy !== null}
                data-testid="task-menu"
              >
                <IconDots size={18} aria-hidden />
              </ActionIcon>
            </Tooltip>
          </Menu.Target>
          <Menu.Dropdown>
            {items.map((item) => (
              <Menu.Item
                key={item.action}
                leftSection={item.icon}
                color={item.danger ? 'red.9' : undefined}
                onClick={() => void act(item.action)}
                data-testid={`action-${item.action}`}
              >
                {item.label}
              </Menu.Item>
            ))}
          </Menu.Dropdown>
        </Menu>
        {dialog}
      </>
    );
  }
  return (
    <>
      <Group gap="xs" wrap="wrap" data-testid="task-actions">
        {items.map((item) => (
          <Button
            key={item.action}
            size="compact-sm"
            variant={item.action === 'run' ? 'filled' : item.danger ? 'outline' : 'light'}
            color={item.danger ? 'red.9' : undefined}
            leftSection={item.icon}
            loading={busy === item.action}
            onClick={() => void act(item.action)}
            data-testid={`action-${item.action}`}
          >
            {item.label}
          </Button>
        ))}
      </Group>
      {dialog}
    </>
  );
}
