import { ActionIcon, Box, Group, Stack, Text, Tooltip, UnstyledButton, VisuallyHidden } from '@mantine/core';
import { IconAlertTriangle, IconCloudPlus, IconGripVertical } from '@tabler/icons-react';
import { plainName } from '@skyferry/contract';
import { useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useLocation, useNavigate, useSearchParams } from 'react-router';
import { showReauthorize } from '../messages/store.ts';
import { toast } from '../messages/toast.ts';
import { sessionApi } from '../session/api.ts';
import { selectLoggedIn, selectVisibleClouds, sessionStore, useSession } from '../session/store.ts';
import type { Cloud } from '../session/types.ts';
import { CloudIcon } from './CloudIcon.tsx';
import { cloudHref, cloudLabel, isPhotosCloud, isSharedCloud, kindName, markCloudUsed, moveItem } from './clouds.ts';
import { openConnectCloud } from './store.ts';
import classes from './Sidebar.module.css';
import { Name } from '../../lib/Name.tsx';

/** Replaces the visible list (account or visitor) and saves the order with PUT /api/clouds/sort. */
export async function saveCloudOrder(next: Cloud[]): Promise<void> {
  const state = sessionStore.getState();
  const key = selectLoggedIn(state) ? 'clouds' : 'tempClouds';
  const previous = state[key];
  sessionStore.setState({ [key]: next } as Partial<typeof state>);
  try {
    await sessionApi.sortClouds(next.map((c) => c.id));
  } catch (err) {
    sessionStore.setState({ [key]: previous } as Partial<typeof state>);
    throw err;
  }
}

/**
 * The connected clouds below the menu: one row per account, reorderable by dragging or with the
 * arrow keys on a row's handle; a click opens the explorer (or the photos view for a photos cloud).
 */
export function CloudList({ narrow }: { narrow: boolean }) {
  const { t } = useTranslation('shell');
  const clouds = useSession(selectVisibleClouds);
  const loaded = useSession((s) => s.cloudsLoaded);
  const navigate = useNavigate();
  const { pathname } = useLocation();
  const [params] = useSearchParams();
  const [dragIndex, setDragIndex] = useState<number | null>(null);
  const [overIndex, setOverIndex] = useState<number | null>(null);
  const [announcement, setAnnouncement] = useState('');
  const handles = useRef<Array<HTMLButtonElement | null>>([]);

  const inCloudView = pathname === '/manage/explorer' || pathname === '/manage/photos';
  const activeIndex = inCloudView ? Number(params.get('cloud_index') ?? NaN) : NaN;

  const reorder = async (from: number, to: number, focus: boolean) => {
    if (from === to || to < 0 || to >= clouds.length) return;
    const next = moveItem(clouds, from, to);
    const moved = next[to];
    try {
      const saving = saveCloudOrder(next);
      if (focus) requestAnimationFrame(() => handles.current[to]?.focus());
      if (moved) setAnnouncement(t('clouds.moved', { name: cloudLabel(moved), position: to + 1, total: next.length }));
      await saving;
    } catch {
      toast.error(t('clouds.sortFailed'));
    }
  };

  const open = async (cloud: Cloud, index: number, event: React.MouseEvent) => {
    event.preventDefault();
    if (cloud.status === 'expired') {
      if (await showReauthorize({ cloudName: cloudLabel(cloud) })) openConnectCloud(cloud.cloud_name);
      return;
    }
    markCloudUsed(cloud.id);
    navigate(cloudHref(cloud, index));
  };

  return (
    <Stack gap={4} className={classes.cloudSection}>
      <Group justify={narrow ? 'center' : 'space-between'} px={narrow ? 0 : 'xs'} mt="sm" mb={2} wrap="nowrap">
        {!narrow && (
          <Text size="xs" fw={600} c="dimmed" tt="uppercase" id="cloud-list-heading">
            {t('clouds.heading')}
          </Text>
        )}
        <Tooltip label={t('clouds.add')} position="right" withArrow>
          <ActionIcon
            variant="subtle"
            size="md"
            aria-label={t('clouds.add')}
            onClick={() => openConnectCloud()}
            data-guide="add-drive"
          >
            <IconCloudPlus size={18} aria-hidden />
          </ActionIcon>
        </Tooltip>
      </Group>
      {loaded && clouds.length === 0 && !narrow && (
        <Text size="xs" c="dimmed" px="xs">
          {t('clouds.empty')}
        </Text>
      )}
      <Box
        component="ul"
        aria-labelledby={narrow ? undefined : 'cloud-list-heading'}
        aria-label={narrow ? t('clouds.heading') : undefined}
        className={classes.cloudList}
      >
        {clouds.map((cloud, index) => {
          const label = cloudLabel(cloud);
          const shared = isSharedCloud(cloud);
          const expired = cloud.status === 'expired';
          const active = index === activeIndex;
          const tooltip = shared
            ? t('clouds.sharedWithMe', { account: cloud.cloud_account })
            : narrow
              ? plainName(label)
              : expired
                ? t('clouds.expired')
                : null;
          const row = (
            <Box
              component="li"
              key={cloud.id}
              className={classes.cloudRow}
              data-active={active || undefined}
              data-dragging={dragIndex === index || undefined}
              data-over={overIndex === index && dragIndex !== index ? true : undefined}
              draggable
              onDragStart={(e: React.DragEvent) => {
                setDragIndex(index);
                e.dataTransfer.effectAllowed = 'move';
                e.dataTransfer.setData('text/plain', cloud.id);
              }}
              onDragOver={(e: React.DragEvent) => {
                if (dragIndex === null) return;
                e.preventDefault();
                setOverIndex(index);
              }}
              onDragEnd={() => {
                setDragIndex(null);
                setOverIndex(null);
              }}
              onDrop={(e: React.DragEvent) => {
                e.preventDefault();
                if (dragIndex !== null) void reorder(dragIndex, index, false);
                setDragIndex(null);
                setOverIndex(null);
              }}
              data-testid="cloud-row"
            >
              <UnstyledButton
                component={Link}
                to={cloudHref(cloud, index)}
                onClick={(e: React.MouseEvent) => void open(cloud, index, e)}
                className={classes.cloudLink}
                aria-current={active ? 'page' : undefined}
                aria-label={narrow ? plainName(label) : undefined}
                data-photos={isPhotosCloud(cloud) || undefined}
              >
                <Group gap={8} wrap="nowrap" justify={narrow ? 'center' : 'flex-start'}>
                  <CloudIcon kind={cloud.cloud_name} />
                  {!narrow && (
                    <Box style={{ minWidth: 0, flex: 1 }}>
                      <Text size="sm" truncate="end" fw={active ? 600 : 400}>
                        <Name value={label} />
                      </Text>
                      <Text size="xs" c="dimmed" truncate="end">
                        {cloud.cloud_alias_name ? <Name value={cloud.cloud_account} /> : kindName(cloud.cloud_name)}
                      </Text>
                    </Box>
                  )}
                  {expired && !narrow && (
                    <IconAlertTriangle
                      size={16}
                      color="var(--mantine-color-orange-7)"
                      aria-label={t('clouds.expired')}
                    />
                  )}
                </Group>
              </UnstyledButton>
              {!narrow && (
                <ActionIcon
                  ref={(el: HTMLButtonElement | null) => {
                    handles.current[index] = el;
                  }}
                  variant="subtle"
                  color="gray"
                  size="sm"
                  className={classes.handle}
                  aria-label={t('clouds.reorder', { name: label })}
                  aria-describedby="cloud-reorder-help"
                  onKeyDown={(e: React.KeyboardEvent) => {
                    if (e.key === 'ArrowUp') {
                      e.preventDefault();
                      void reorder(index, index - 1, true);
                    } else if (e.key === 'ArrowDown') {
                      e.preventDefault();
                      void reorder(index, index + 1, true);
                    }
                  }}
                >
                  <IconGripVertical size={14} aria-hidden />
                </ActionIcon>
              )}
            </Box>
          );
          return tooltip ? (
            <Tooltip key={cloud.id} label={tooltip} position="right" withArrow openDelay={300}>
              {row}
            </Tooltip>
          ) : (
            row
          );
        })}
      </Box>
      <VisuallyHidden id="cloud-reorder-help">{t('clouds.reorderHelp')}</VisuallyHidden>
      <VisuallyHidden role="status" aria-live="polite">
        {announcement}
      </VisuallyHidden>
    </Stack>
  );
}
