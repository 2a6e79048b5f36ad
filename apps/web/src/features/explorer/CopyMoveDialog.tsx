import { Alert, Button, Group, Modal, NativeSelect, Stack, Text } from '@mantine/core';
import { formatBytes, isWithin, type CreateTaskBody, type FileItem } from '@skyferry/contract';
import { useEffect, useState } from 'react';
import type { TFunction } from 'i18next';
import { useTranslation } from 'react-i18next';
import { openLogin } from '../auth/login.ts';
import { confirm } from '../messages/store.ts';
import { toast } from '../messages/toast.ts';
import { selectLoggedIn, selectVisibleClouds, sessionStore, useSession } from '../session/store.ts';
import { cloudLabel } from '../shell/clouds.ts';
import { openTransmissionList } from '../shell/store.ts';
import { tasksApi } from '../tasks/api.ts';
import { reportTaskError } from '../tasks/errors.ts';
import { CloudTree } from '../transfer/CloudTree.tsx';
import { createWithPrompts } from '../transfer/model.ts';

export type CopyMoveMode = 'copy' | 'move';

/** Why a target cannot take the selection: it is where they are, or inside one of the folders. */
export function targetProblem(
  from: { cloudId: string; folder: string; items: readonly Pick<FileItem, 'path' | 'type'>[] },
  to: { cloudId: string; path: string },
): 'sameFolder' | 'intoItself' | null {
  if (from.cloudId !== to.cloudId) return null;
  if (to.path === from.folder) return 'sameFolder';
  if (from.items.some((i) => i.type === 0 && isWithin(to.path, i.path))) return 'intoItself';
  return null;
}

/** The server task a "Copy to" or "Move to" of the selection creates: a migration of the picked paths. */
export function copyMoveBody(
  mode: CopyMoveMode,
  from: { cloudId: string; items: readonly Pick<FileItem, 'path'>[] },
  to: { cloudId: string; path: string },
): CreateTaskBody {
  const body: CreateTaskBody = {
    task_type: 0,
    from_cloud: { cloud_id: from.cloudId, paths: from.items.map((i) => i.path) },
    to_cloud: { cloud_id: to.cloudId, path: to.path },
  };
  if (mode === 'move') body.move = true;
  // Within one cloud the user picked it here: no need to ask whether the same cloud is meant.
  if (from.cloudId === to.cloudId) body.confirm_same_cloud = true;
  return body;
}

/**
 * Starts the copy or move as a server task (answering its prompts), says so and opens the task
 * list. Answers whether it started. A visitor is asked to sign in first.
 */
export async function startCopyMove(
  mode: CopyMoveMode,
  from: { cloudId: string; items: readonly Pick<FileItem, 'path'>[] },
  to: { cloudId: string; path: string },
  t: TFunction<'explorer'>,
): Promise<boolean> {
  if (!selectLoggedIn(sessionStore.getState())) {
    toast.info(t('copyMove.signInFirst'));
    await openLogin();
    return false;
  }
  try {
    const created = await createWithPrompts(
      copyMoveBody(mode, from, to),
      {
        sameCloud: async () => true,
        insufficientSpace: async () =>
          (await confirm({ message: t('copyMove.noSpace'), yesLabel: t('copyMove.goOn') })) === 'yes',
        deletions: async () => false,
      },
      tasksApi.create,
    );
    if (!created?.task) return false;
    toast.success(t(mode === 'move' ? 'copyMove.startedMove' : 'copyMove.startedCopy'));
    openTransmissionList();
    return true;
  } catch (err) {
    await reportTaskError(err, to.cloudId);
    return false;
  }
}

export interface CopyMoveDialogProps {
  mode: CopyMoveMode | null;
  cloudId: string;
  /** The folder the selection is in. */
  folder: string;
  items: readonly FileItem[];
  onClose: () => void;
}

/**
 * "Copy to" / "Move to": pick a cloud (this one or another) and a folder in it; the copy runs as a
 * server task, its progress in the task list. A move deletes each source once the target holds it.
 */
export function CopyMoveDialog({ mode, cloudId, folder, items, onClose }: CopyMoveDialogProps) {
  const { t } = useTranslation('explorer');
  const clouds = useSession(selectVisibleClouds);
  const [target, setTarget] = useState(cloudId);
  const [path, setPath] = useState('/');
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (mode === null) return;
    setTarget(cloudId);
    setPath('/');
  }, [mode, cloudId]);

  const targetCloud = clouds.find((c) => c.id === target);
  const problem = targetProblem({ cloudId, folder, items }, { cloudId: target, path });
  const bytes = items.reduce((sum, i) => sum + i.size, 0);

  const start = async () => {
    if (!mode || problem) return;
    setBusy(true);
    try {
      if (await startCopyMove(mode, { cloudId, items }, { cloudId: target, path }, t)) onClose();
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal
      opened={mode !== null}
      onClose={onClose}
      title={mode === 'move' ? t('copyMove.titleMove') : t('copyMove.titleCopy')}
      size="lg"
    >
      <Stack gap="sm" data-testid="copy-move-dialog">
        <Text size="sm" c="dimmed" data-testid="copy-move-what">
          {items.length === 1 ? items[0]?.name : t('copyMove.items', { count: items.length })}
          {bytes > 0 ? ` · ${formatBytes(bytes)}` : ''}
        </Text>
        <NativeSelect
          label={t('copyMove.targetCloud')}
          data={clouds.map((c) => ({ value: c.id, label: cloudLabel(c) }))}
          value={target}
          onChange={(e) => {
            setTarget(e.currentTarget.value);
            setPath('/');
          }}
          data-autofocus
          data-testid="copy-move-cloud"
        />
        {targetCloud && (
          <CloudTree
            key={targetCloud.id}
            cloudId={targetCloud.id}
            rootLabel={cloudLabel(targetCloud)}
            mode="folder"
            folder={path}
            onFolderChange={setPath}
            label={t('copyMove.targetFolder')}
            testId="copy-move-tree"
          />
        )}
        {problem && (
          <Alert color="yellow" data-testid="copy-move-problem">
            {t(`copyMove.${problem}`)}
          </Alert>
        )}
        {mode === 'move' && !problem && (
          <Text size="xs" c="dimmed">
            {t('copyMove.moveNote')}
          </Text>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            {t('cancel')}
          </Button>
          <Button onClick={() => void start()} loading={busy} disabled={problem !== null || !targetCloud}>
            {mode === 'move' ? t('copyMove.move') : t('copyMove.copy')}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

export interface DropDialogProps {
  /** The rows dropped, and where: null when closed. */
  drop: { from: { cloudId: string; folder: string; items: FileItem[] }; to: { cloudId: string; path: string } } | null;
  onClose: () => void;
}

/** A drop of rows on the other pane: copy or move them into that pane's folder. */
export function DropDialog({ drop, onClose }: DropDialogProps) {
  const { t } = useTranslation('explorer');
  const clouds = useSession(selectVisibleClouds);
  const [busy, setBusy] = useState(false);
  const problem = drop ? targetProblem(drop.from, drop.to) : null;
  const target = drop ? clouds.find((c) => c.id === drop.to.cloudId) : undefined;
  const go = async (mode: CopyMoveMode) => {
    if (!drop || problem) return;
    setBusy(true);
    try {
      if (await startCopyMove(mode, drop.from, drop.to, t)) onClose();
    } finally {
      setBusy(false);
    }
  };
  const items = drop?.from.items ?? [];
  return (
    <Modal opened={drop !== null} onClose={onClose} title={t('copyMove.dropTitle')}>
      <Stack gap="sm" data-testid="drop-dialog">
        <Text size="sm">
          {items.length === 1 ? items[0]?.name : t('copyMove.items', { count: items.length })}
          {' → '}
          {target ? cloudLabel(target) : ''} <bdi dir="ltr">{drop?.to.path}</bdi>
        </Text>
        {problem && <Alert color="yellow">{t(`copyMove.${problem}`)}</Alert>}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            {t('cancel')}
          </Button>
          <Button variant="light" disabled={problem !== null} loading={busy} onClick={() => void go('move')}>
            {t('copyMove.move')}
          </Button>
          <Button data-autofocus disabled={problem !== null} loading={busy} onClick={() => void go('copy')}>
            {t('copyMove.copy')}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
