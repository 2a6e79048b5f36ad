import { Alert, Button, Checkbox, Group, Loader, Modal, ScrollArea, Stack, Table, Text } from '@mantine/core';
import { IconFile, IconFolder } from '@tabler/icons-react';
import { formatBytes, type TrashItem } from '@skyferry/contract';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Name } from '../../lib/Name.tsx';
import { confirm } from '../messages/store.ts';
import { toast } from '../messages/toast.ts';
import { filesApi } from './api.ts';
import { formatModified } from './FileList.tsx';

type TrashLoad =
  | { state: 'loading' }
  | { state: 'unsupported'; serviceTrash: boolean }
  /** canPurge, canEmpty: whether items can be deleted for good, and the whole trash emptied. */
  | { state: 'ready'; items: TrashItem[]; canPurge: boolean; canEmpty: boolean }
  | { state: 'error'; message: string };

/** Every page of the cloud's trash. */
async function loadTrash(cloudId: string): Promise<TrashLoad> {
  const items: TrashItem[] = [];
  let token: string | null = null;
  for (;;) {
    const page = await filesApi.trashList(cloudId, token);
    if (!page.supported) return { state: 'unsupported', serviceTrash: page.service_trash };
    items.push(...page.items);
    token = page.page_token;
    if (!token) return { state: 'ready', items, canPurge: page.can_purge, canEmpty: page.can_empty };
  }
}

export interface TrashDialogProps {
  opened: boolean;
  cloudId: string;
  cloudName: string;
  canDelete: boolean;
  onClose: () => void;
  /** Told after items came back, so the folder on screen is read again. */
  onRestored: () => void;
}

/**
 * The cloud's deleted files (its trash where Skyferry can read it): what each was and where, when
 * it went; restore the picked ones where they were, delete them for good, or empty the trash.
 */
export function TrashDialog({ opened, cloudId, cloudName, canDelete, onClose, onRestored }: TrashDialogProps) {
  const { t } = useTranslation('explorer');
  const [load, setLoad] = useState<TrashLoad>({ state: 'loading' });
  const [picked, setPicked] = useState<ReadonlySet<string>>(new Set());
  const [busy, setBusy] = useState(false);

  const reload = async () => {
    setPicked(new Set());
    try {
      setLoad(await loadTrash(cloudId));
    } catch (err) {
      setLoad({ state: 'error', message: err instanceof Error ? err.message : String(err) });
    }
  };

  useEffect(() => {
    if (!opened) return;
    setLoad({ state: 'loading' });
    void reload();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [opened, cloudId]);

  const act = async (work: () => Promise<{ failed: Array<{ msg: string }> }>, done: string) => {
    setBusy(true);
    try {
      const result = await work();
      if (result.failed.length > 0) toast.error(result.failed[0]?.msg ?? '');
      else toast.success(done);
    } catch (err) {
      toast.error(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
    await reload();
  };

  const restore = () =>
    act(async () => {
      const r = await filesApi.trashRestore(cloudId, [...picked]);
      if (r.restored.length > 0) onRestored();
      return r;
    }, t('trash.restored'));

  const purge = async () => {
    if ((await confirm({ message: t('trash.confirmPurge'), danger: true })) !== 'yes') return;
    await act(() => filesApi.trashDelete(cloudId, [...picked]), t('trash.purged'));
  };

  const empty = async () => {
    if ((await confirm({ message: t('trash.confirmEmpty'), danger: true })) !== 'yes') return;
    await act(async () => {
      await filesApi.trashEmpty(cloudId);
      return { failed: [] };
    }, t('trash.emptied'));
  };

  const items = load.state === 'ready' ? load.items : [];
  const canPurge = canDelete && load.state === 'ready' && load.canPurge;
  const canEmpty = canDelete && load.state === 'ready' && load.canEmpty;
  const all = items.length > 0 && picked.size === items.length;
  const toggle = (id: string, on: boolean) =>
    setPicked((prev) => {
      const next = new Set(prev);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });

  return (
    <Modal opened={opened} onClose={onClose} title={t('trash.title', { name: cloudName })} size="xl">
      <Stack gap="sm" data-testid="trash-dialog">
        {load.state === 'loading' && <Loader size="sm" role="status" aria-label={t('loading')} />}
        {load.state === 'error' && <Alert color="red">{load.message}</Alert>}
        {load.state === 'unsupported' && (
          <Alert color="gray" data-testid="trash-unsupported">
            {t(load.serviceTrash ? 'trash.serviceOnly' : 'trash.unsupported')}
          </Alert>
        )}
        {load.state === 'ready' && items.length === 0 && (
          <Text c="dimmed" data-testid="trash-empty">
            {t('trash.nothing')}
          </Text>
        )}
        {items.length > 0 && (
          <ScrollArea.Autosize mah="60vh">
            <Table striped highlightOnHover data-testid="trash-list">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th w={36}>
                    <Checkbox
                      aria-label={t('selectAll')}
                      checked={all}
                      indeterminate={picked.size > 0 && !all}
                      onChange={(e) => setPicked(e.currentTarget.checked ? new Set(items.map((i) => i.id)) : new Set())}
                    />
                  </Table.Th>
                  <Table.Th>{t('column.name')}</Table.Th>
                  <Table.Th>{t('trash.wasIn')}</Table.Th>
                  <Table.Th>{t('column.size')}</Table.Th>
                  <Table.Th>{t('trash.deletedAt')}</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {items.map((item) => (
                  <Table.Tr key={item.id} data-testid="trash-row">
                    <Table.Td>
                      <Checkbox
                        aria-label={item.name}
                        checked={picked.has(item.id)}
                        onChange={(e) => toggle(item.id, e.currentTarget.checked)}
                      />
                    </Table.Td>
                    <Table.Td>
                      <Group gap={6} wrap="nowrap">
                        {item.type === 0 ? <IconFolder size={16} aria-hidden /> : <IconFile size={16} aria-hidden />}
                        <Name value={item.name} />
                      </Group>
                    </Table.Td>
                    <Table.Td>
                      <Text size="xs" c="dimmed">
                        <bdi dir="ltr">{item.original_path ?? '—'}</bdi>
                      </Text>
                    </Table.Td>
                    <Table.Td>{item.type === 0 ? '—' : <bdi dir="ltr">{formatBytes(item.size)}</bdi>}</Table.Td>
                    <Table.Td>
                      {item.deleted_at > 0 ? <bdi dir="ltr">{formatModified(item.deleted_at)}</bdi> : '—'}
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </ScrollArea.Autosize>
        )}
        {load.state === 'ready' && items.length > 0 && (!load.canPurge || !load.canEmpty) && (
          <Text size="sm" c="dimmed" data-testid="trash-no-purge">
            {t('trash.noPurge')}
          </Text>
        )}
        <Group justify="space-between">
          <Button
            variant="subtle"
            color="red"
            disabled={!canEmpty || items.length === 0 || busy}
            onClick={() => void empty()}
          >
            {t('trash.empty')}
          </Button>
          <Group gap="xs">
            <Button
              variant="default"
              color="red"
              disabled={!canPurge || picked.size === 0 || busy}
              onClick={() => void purge()}
            >
              {t('trash.purge')}
            </Button>
            <Button disabled={picked.size === 0} loading={busy} onClick={() => void restore()}>
              {t('trash.restore')}
            </Button>
          </Group>
        </Group>
      </Stack>
    </Modal>
  );
}
