import {
  ActionIcon,
  Badge,
  Box,
  Button,
  Card,
  Group,
  Progress,
  Stack,
  Text,
  TextInput,
  Title,
  Tooltip,
} from '@mantine/core';
import {
  IconArrowDown,
  IconArrowUp,
  IconCheck,
  IconKey,
  IconPencil,
  IconRefresh,
  IconTrash,
  IconX,
} from '@tabler/icons-react';
import { formatBytes, hasUsageDetail, storageLevel, usageColour, type CloudInfoData } from '@skyferry/contract';
import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api } from '../../api/client.ts';
import { ConnectCloudDialog } from '../connect/ConnectCloudDialog.tsx';
import { filesApi } from '../explorer/api.ts';
import { Home } from '../home/Home.tsx';
import { confirm } from '../messages/store.ts';
import { toast } from '../messages/toast.ts';
import { loadClouds } from '../session/actions.ts';
import { selectLoggedIn, selectVisibleClouds, sessionStore, useSession } from '../session/store.ts';
import type { Cloud } from '../session/types.ts';
import { CloudIcon } from '../shell/CloudIcon.tsx';
import { cloudLabel, kindName, moveItem } from '../shell/clouds.ts';
import { saveCloudOrder } from '../shell/CloudList.tsx';
import { TaskPanel } from '../task-panel/TaskPanel.tsx';
import { refreshSpaceStaggered } from './space.ts';
import { Name } from '../../lib/Name.tsx';

export const USAGE_COLOURS = { danger: 'red', warn: 'orange', normal: 'blue' } as const;
export const STORAGE_COLOURS = { enough: 'teal', narrow: 'yellow', hard: 'red' } as const;

/** Replaces one cloud in the visible list (after its space or alias changed). */
function patchCloud(id: string, patch: Partial<Cloud>): void {
  const state = sessionStore.getState();
  const key = selectLoggedIn(state) ? 'clouds' : 'tempClouds';
  sessionStore.setState({ [key]: state[key].map((c) => (c.id === id ? { ...c, ...patch } : c)) } as Partial<
    typeof state
  >);
}

/**
 * /manage: Home (the overview, DECISIONS) and below it every connected cloud with its usage bar,
 * its storage bar (enough, narrow, hard), alias rename, order, reauthorize and remove. Space is
 * refreshed from each service, one cloud at a time, 1 to 2 s apart.
 */
export function ManagePage() {
  const { t } = useTranslation('manage');
  const clouds = useSession(selectVisibleClouds);
  const [reauth, setReauth] = useState<Cloud | null>(null);
  // Clouds whose service answered that it reports no space (an FTP server, WebDAV without quota).
  const [unreported, setUnreported] = useState<ReadonlySet<string>>(new Set());
  const stopRefresh = useRef<(() => void) | null>(null);
  const showInfo = (id: string, info: CloudInfoData) => {
    patchCloud(id, { space: info.space_amount, used_space: info.space_used });
    setUnreported((prev) => {
      if (prev.has(id) === !info.reported) return prev;
      const next = new Set(prev);
      if (info.reported) next.delete(id);
      else next.add(id);
      return next;
    });
  };

  // One pass over the clouds listed when the page opens; each answer changes `clouds`, so the pass
  // is stopped only when the page closes, never by the list changing under it.
  useEffect(() => {
    if (stopRefresh.current || clouds.length === 0) return;
    stopRefresh.current = refreshSpaceStaggered(clouds, async (cloud) =>
      showInfo(cloud.id, await filesApi.info(cloud.id, true)),
    );
  }, [clouds]);
  useEffect(
    () => () => {
      stopRefresh.current?.();
      stopRefresh.current = null;
    },
    [],
  );

  const move = async (from: number, to: number) => {
    if (to < 0 || to >= clouds.length) return;
    try {
      await saveCloudOrder(moveItem(clouds, from, to));
    } catch {
      toast.error(t('sortFailed'));
    }
  };

  return (
    <Stack gap="xl">
      <Home />
      <Stack gap="sm" component="section" aria-labelledby="manage-clouds" data-testid="manage-clouds">
        <Title order={3} size="h4" id="manage-clouds">
          {t('heading')}
        </Title>
        {clouds.length === 0 ? (
          <Text size="sm" c="dimmed">
            {t('empty')}
          </Text>
        ) : (
          clouds.map((cloud, index) => (
            <CloudCard
              key={cloud.id}
              cloud={cloud}
              first={index === 0}
              last={index === clouds.length - 1}
              onUp={() => void move(index, index - 1)}
              onDown={() => void move(index, index + 1)}
              onReauthorize={() => setReauth(cloud)}
              unreported={unreported.has(cloud.id)}
              onInfo={(info) => showInfo(cloud.id, info)}
            />
          ))
        )}
      </Stack>
      <ConnectCloudDialog
        opened={reauth !== null}
        onClose={() => setReauth(null)}
        kind={reauth?.cloud_name ?? null}
        reauthorize={reauth}
      />
      <TaskPanel />
    </Stack>
  );
}

function CloudCard({
  cloud,
  first,
  last,
  onUp,
  onDown,
  onReauthorize,
  unreported,
  onInfo,
}: {
  cloud: Cloud;
  first: boolean;
  last: boolean;
  onUp: () => void;
  onDown: () => void;
  onReauthorize: () => void;
  /** The service said it reports no space. */
  unreported: boolean;
  onInfo: (info: CloudInfoData) => void;
}) {
  const { t } = useTranslation('manage');
  const [editing, setEditing] = useState(false);
  const [alias, setAlias] = useState(cloud.cloud_alias_name);
  const [busy, setBusy] = useState(false);
  const total = cloud.space ?? 0;
  const used = cloud.used_space ?? 0;
  const colour = usageColour(used, total);
  const level = storageLevel(used, total);
  const label = cloudLabel(cloud);
  const expired = cloud.status === 'expired';
  const percent = total > 0 ? Math.min(100, (used / total) * 100) : 0;

  const saveAlias = async () => {
    setBusy(true);
    try {
      const next = await api<Cloud>(`/api/clouds/${cloud.id}`, { method: 'PUT', body: { alias: alias.trim() } });
      patchCloud(cloud.id, { cloud_alias_name: next.cloud_alias_name });
      setEditing(false);
    } catch (err) {
      toast.error(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  const remove = async () => {
    const answer = await confirm({ message: t('removeConfirm', { name: label }), danger: true });
    if (answer !== 'yes') return;
    try {
      await api<null>(`/api/clouds/${cloud.id}`, { method: 'DELETE' });
      toast.success(t('removed', { name: label }));
      await loadClouds();
    } catch (err) {
      toast.error(err instanceof Error ? err.message : String(err));
    }
  };

  const refreshSpace = async () => {
    try {
      onInfo(await filesApi.info(cloud.id));
    } catch (err) {
      toast.error(err instanceof Error ? err.message : String(err));
    }
  };

  return (
    <Card withBorder padding="sm" data-testid="manage-cloud" data-cloud-id={cloud.id}>
      <Group justify="space-between" wrap="nowrap" align="flex-start">
        <Group gap="sm" wrap="nowrap" style={{ minWidth: 0, flex: 1 }}>
          <CloudIcon kind={cloud.cloud_name} size={28} />
          <Box style={{ minWidth: 0, flex: 1 }}>
            {editing ? (
              <Group gap={4} wrap="nowrap">
                <TextInput
                  size="xs"
                  value={alias}
                  aria-label={t('alias')}
                  autoFocus
                  maxLength={100}
                  onChange={(e) => setAlias(e.currentTarget.value)}
                  onKeyDown={(e) => {
                    if (e.key === 'Enter') void saveAlias();
                    if (e.key === 'Escape') setEditing(false);
                  }}
                />
                <ActionIcon
                  size="sm"
                  variant="light"
                  aria-label={t('save')}
                  loading={busy}
                  onClick={() => void saveAlias()}
                >
                  <IconCheck size={14} aria-hidden />
                </ActionIcon>
                <ActionIcon
                  size="sm"
                  variant="subtle"
                  color="gray"
                  aria-label={t('cancel')}
                  onClick={() => setEditing(false)}
                >
                  <IconX size={14} aria-hidden />
                </ActionIcon>
              </Group>
            ) : (
              <Group gap={6} wrap="nowrap">
                <Text fw={600} truncate="end">
                  <Name value={label} />
                </Text>
                {expired && (
                  <Badge color="orange" size="sm" variant="light">
                    {t('expired')}
                  </Badge>
                )}
              </Group>
            )}
            <Text size="xs" c="dimmed" truncate="end">
              {kindName(cloud.cloud_name)} · <Name value={cloud.cloud_account} />
            </Text>
            {hasUsageDetail(cloud.flags) && total > 0 ? (
              <Stack gap={4} mt={6}>
                <Progress
                  value={percent}
                  color={USAGE_COLOURS[colour]}
                  size="sm"
                  data-testid="usage-bar"
                  data-colour={colour}
                  aria-label={t('usage', { used: formatBytes(used), total: formatBytes(total) })}
                />
                <Group gap="xs">
                  <Text size="xs" c="dimmed">
                    {t('usage', { used: formatBytes(used), total: formatBytes(total) })}
                  </Text>
                  <Badge
                    size="xs"
                    variant="light"
                    color={STORAGE_COLOURS[level]}
                    data-testid="storage-level"
                    data-level={level}
                  >
                    {t(`storage.${level}`)}
                  </Badge>
                </Group>
              </Stack>
            ) : (
              <Text size="xs" c="dimmed" mt={6}>
                {hasUsageDetail(cloud.flags) && !unreported ? t('spaceUnknown') : t('noUsageDetail')}
              </Text>
            )}
          </Box>
        </Group>
        <Group gap={2} wrap="nowrap">
          <Tooltip label={t('moveUp')} withArrow>
            <ActionIcon variant="subtle" size="sm" aria-label={t('moveUp')} disabled={first} onClick={onUp}>
              <IconArrowUp size={14} aria-hidden />
            </ActionIcon>
          </Tooltip>
          <Tooltip label={t('moveDown')} withArrow>
            <ActionIcon variant="subtle" size="sm" aria-label={t('moveDown')} disabled={last} onClick={onDown}>
              <IconArrowDown size={14} aria-hidden />
            </ActionIcon>
          </Tooltip>
          <Tooltip label={t('rename')} withArrow>
            <ActionIcon
              variant="subtle"
              size="sm"
              aria-label={t('rename')}
              onClick={() => {
                setAlias(cloud.cloud_alias_name);
                setEditing(true);
              }}
            >
              <IconPencil size={14} aria-hidden />
            </ActionIcon>
          </Tooltip>
          <Tooltip label={t('refreshSpace')} withArrow>
            <ActionIcon
              variant="subtle"
              size="sm"
              aria-label={t('refreshSpace')}
              disabled={expired}
              onClick={() => void refreshSpace()}
            >
              <IconRefresh size={14} aria-hidden />
            </ActionIcon>
          </Tooltip>
          <Button
            size="compact-xs"
            variant={expired ? 'filled' : 'subtle'}
            color={expired ? 'orange' : 'gray'}
            leftSection={<IconKey size={12} aria-hidden />}
            onClick={onReauthorize}
          >
            {t('reauthorize')}
          </Button>
          <Tooltip label={t('remove')} withArrow>
            <ActionIcon variant="subtle" size="sm" color="red" aria-label={t('remove')} onClick={() => void remove()}>
              <IconTrash size={14} aria-hidden />
            </ActionIcon>
          </Tooltip>
        </Group>
      </Group>
    </Card>
  );
}
