import { ActionIcon, Box, Button, Checkbox, Group, Loader, Radio, Text, Tooltip, UnstyledButton } from '@mantine/core';
import { IconChevronDown, IconChevronRight, IconFile, IconFolder, IconRefresh } from '@tabler/icons-react';
import { Code, RemoteFileType, formatBytes, isWithin, plainName, type FileItem } from '@skyferry/contract';
import { useCallback, useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ApiRequestError } from '../../api/client.ts';
import { listAll } from '../explorer/api.ts';
import type { PickedEntry } from './model.ts';
import { Name } from '../../lib/Name.tsx';

/** Children shown per folder before "Show more". */
export const TREE_PAGE = 200;

type FolderLoad =
  | { status: 'loading' }
  | { status: 'ready'; items: FileItem[]; shown: number }
  | { status: 'error'; message: string; code: number };

export interface CloudTreeProps {
  cloudId: string;
  /** The root row's label (the cloud's name). */
  rootLabel: string;
  /**
   * multi: files and folders with tick boxes (a migration's source); folder: one folder with a
   * radio (a sync's source, any target).
   */
  mode: 'multi' | 'folder';
  /** multi: the picked entries. */
  picked?: readonly PickedEntry[];
  onPickedChange?: (next: PickedEntry[]) => void;
  /** folder: the chosen folder. */
  folder?: string;
  onFolderChange?: (path: string) => void;
  /** Told when a folder cannot be listed (401 opens the reauthorize prompt upstairs). */
  onError?: (code: number) => void;
  /** Accessible name of the tree. */
  label: string;
  testId?: string;
}

/** Picking a folder drops its picked descendants; picking under a picked folder is not offered. */
export function togglePicked(picked: readonly PickedEntry[], entry: PickedEntry, on: boolean): PickedEntry[] {
  if (!on) return picked.filter((p) => p.path !== entry.path);
  const kept = entry.type === 0 ? picked.filter((p) => !isWithin(p.path, entry.path)) : [...picked];
  return kept.some((p) => p.path === entry.path) ? kept : [...kept, entry];
}

/** The picked folder that contains a path (a strict ancestor), if any. */
export function pickedAncestor(picked: readonly PickedEntry[], path: string): PickedEntry | undefined {
  return picked.find((p) => p.type === 0 && p.path !== path && isWithin(path, p.path));
}

/**
 * A cloud's folders (and, in multi mode, files) as a tree that lists each folder when it is first
 * opened. Large folders show 200 entries at a time.
 */
export function CloudTree(props: CloudTreeProps) {
  const { cloudId, mode } = props;
  const { t } = useTranslation('transfer');
  const [loads, setLoads] = useState<Record<string, FolderLoad>>({});
  const [expanded, setExpanded] = useState<Set<string>>(() => new Set(['/']));
  const requested = useRef(new Set<string>());
  // The parent may pass a new callback on every render; the tree must not reload for that.
  const onError = useRef(props.onError);
  onError.current = props.onError;

  const load = useCallback(
    async (path: string, refresh = false, background = false) => {
      setLoads((l) => ({ ...l, [path]: { status: 'loading' } }));
      try {
        const items = await listAll(cloudId, path, refresh, undefined, background);
        const sorted = [...items].sort((a, b) => a.type - b.type || a.name.localeCompare(b.name));
        setLoads((l) => ({ ...l, [path]: { status: 'ready', items: sorted, shown: TREE_PAGE } }));
      } catch (err) {
        const code = err instanceof ApiRequestError ? err.code : Code.INTERNAL;
        setLoads((l) => ({
          ...l,
          [path]: { status: 'error', code, message: err instanceof Error ? err.message : String(err) },
        }));
        onError.current?.(code);
      }
    },
    [cloudId],
  );

  useEffect(() => {
    requested.current = new Set(['/']);
    setLoads({});
    setExpanded(new Set(['/']));
    // Showing the tree is not using the cloud (the page may pick it on its own); opening folders is.
    void load('/', false, true);
  }, [cloudId, load]);

  /** Reads every open folder again from the service (the server caches listings for a few seconds). */
  const refreshAll = () => {
    requested.current = new Set(expanded);
    for (const path of expanded) void load(path, true);
  };

  const toggleExpand = (path: string) => {
    setExpanded((prev) => {
      const next = new Set(prev);
      if (next.has(path)) next.delete(path);
      else {
        next.add(path);
        if (!requested.current.has(path)) {
          requested.current.add(path);
          void load(path);
        }
      }
      return next;
    });
  };

  const picked = props.picked ?? [];
  const renderRow = (entry: { path: string; name: string; type: 0 | 1; size: number }, depth: number) => {
    const isFolder = entry.type === RemoteFileType.folder;
    const open = expanded.has(entry.path);
    const ancestor = mode === 'multi' ? pickedAncestor(picked, entry.path) : undefined;
    const checked = mode === 'multi' ? ancestor !== undefined || picked.some((p) => p.path === entry.path) : false;
    const name = entry.path === '/' ? props.rootLabel : entry.name;
    return (
      <Box key={entry.path} component="li" style={{ listStyle: 'none' }}>
        <Group
          gap={6}
          wrap="nowrap"
          pl={depth * 18}
          py={2}
          data-testid="tree-row"
          data-path={entry.path}
          data-type={entry.type}
        >
          {isFolder ? (
            <ActionIcon
              variant="subtle"
              color="gray"
              size="sm"
              aria-label={open ? t('tree.collapse', { name }) : t('tree.expand', { name })}
              aria-expanded={open}
              onClick={() => toggleExpand(entry.path)}
              data-testid="tree-expand"
            >
              {open ? <IconChevronDown size={14} aria-hidden /> : <IconChevronRight size={14} aria-hidden />}
            </ActionIcon>
          ) : (
            <Box w={22} />
          )}
          {mode === 'multi' ? (
            <Checkbox
              size="xs"
              checked={checked}
              disabled={ancestor !== undefined}
              aria-label={t('tree.select', { name })}
              onChange={(e) =>
                props.onPickedChange?.(
                  togglePicked(picked, { path: entry.path, type: entry.type }, e.currentTarget.checked),
                )
              }
              data-testid="tree-check"
            />
          ) : (
            <Radio
              size="xs"
              checked={props.folder === entry.path}
              aria-label={t('tree.choose', { name })}
              onChange={() => props.onFolderChange?.(entry.path)}
              data-testid="tree-radio"
            />
          )}
          {isFolder ? (
            <IconFolder size={16} color="var(--mantine-color-yellow-7)" aria-hidden style={{ flex: 'none' }} />
          ) : (
            <IconFile size={16} aria-hidden style={{ flex: 'none' }} />
          )}
          <UnstyledButton
            onClick={() => (isFolder ? toggleExpand(entry.path) : undefined)}
            tabIndex={-1}
            style={{ minWidth: 0, flex: 1 }}
          >
            <Text size="sm" truncate title={plainName(entry.path)}>
              <Name value={name} />
            </Text>
          </UnstyledButton>
          {!isFolder && (
            <Text size="xs" c="dimmed" style={{ flex: 'none' }}>
              {formatBytes(entry.size)}
            </Text>
          )}
          {entry.path === '/' && (
            <Tooltip label={t('tree.refresh')} withArrow>
              <ActionIcon
                variant="subtle"
                color="gray"
                size="sm"
                aria-label={t('tree.refresh')}
                onClick={() => refreshAll()}
                data-testid="tree-refresh"
              >
                <IconRefresh size={14} aria-hidden />
              </ActionIcon>
            </Tooltip>
          )}
        </Group>
        {isFolder && open && renderChildren(entry.path, depth + 1)}
      </Box>
    );
  };

  const renderChildren = (path: string, depth: number) => {
    const l = loads[path];
    if (!l || l.status === 'loading') {
      return (
        <Group pl={depth * 18 + 28} py={2} gap="xs">
          <Loader size={12} aria-hidden />
          <Text size="xs" c="dimmed">
            {t('tree.loading')}
          </Text>
        </Group>
      );
    }
    if (l.status === 'error') {
      return (
        <Group pl={depth * 18 + 28} py={2} gap="xs">
          <Text size="xs" c="red.9" data-testid="tree-error">
            {l.message}
          </Text>
          <Button size="compact-xs" variant="subtle" onClick={() => void load(path, true)}>
            {t('tree.retry')}
          </Button>
        </Group>
      );
    }
    const items = mode === 'multi' ? l.items : l.items.filter((i) => i.type === RemoteFileType.folder);
    if (items.length === 0) {
      return (
        <Text size="xs" c="dimmed" pl={depth * 18 + 28} py={2}>
          {mode === 'multi' ? t('tree.empty') : t('tree.noFolders')}
        </Text>
      );
    }
    return (
      <Box component="ul" p={0} m={0}>
        {items.slice(0, l.shown).map((item) => renderRow(item, depth))}
        {items.length > l.shown && (
          <Box component="li" style={{ listStyle: 'none' }} pl={depth * 18 + 28}>
            <Button
              size="compact-xs"
              variant="subtle"
              onClick={() => setLoads((all) => ({ ...all, [path]: { ...l, shown: l.shown + TREE_PAGE } }))}
            >
              {t('tree.showMore', { count: items.length - l.shown })}
            </Button>
          </Box>
        )}
      </Box>
    );
  };

  return (
    <Box
      component="ul"
      p="xs"
      m={0}
      aria-label={props.label}
      data-testid={props.testId}
      style={{
        maxHeight: 320,
        overflowY: 'auto',
        border: '1px solid var(--mantine-color-default-border)',
        borderRadius: 'var(--mantine-radius-sm)',
      }}
    >
      {renderRow({ path: '/', name: '/', type: 0, size: 0 }, 0)}
    </Box>
  );
}
