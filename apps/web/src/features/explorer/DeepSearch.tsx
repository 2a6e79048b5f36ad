import { Alert, Box, Button, Group, Loader, ScrollArea, Stack, Text, UnstyledButton } from '@mantine/core';
import { IconFile, IconFolder } from '@tabler/icons-react';
import { RemoteFileType, formatBytes, type FileItem } from '@skyferry/contract';
import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Name } from '../../lib/Name.tsx';
import { searchCloud } from './api.ts';

type SearchState =
  | { state: 'running'; items: FileItem[]; scanned: number }
  | { state: 'done'; items: FileItem[]; scanned: number; truncated: boolean; stopped: boolean }
  | { state: 'error'; items: FileItem[]; message: string };

export interface DeepSearchProps {
  cloudId: string;
  path: string;
  query: string;
  height: number | string;
  onOpen: (item: FileItem) => void;
  onClose: () => void;
}

/**
 * The search of every folder below the current one: finds appear as the server's walk goes, with
 * how many folders it read; Stop ends it (the finds so far stay). A find opens its folder.
 */
export function DeepSearch({ cloudId, path, query, height, onOpen, onClose }: DeepSearchProps) {
  const { t } = useTranslation('explorer');
  const [search, setSearch] = useState<SearchState>({ state: 'running', items: [], scanned: 0 });
  const abort = useRef<AbortController | null>(null);

  useEffect(() => {
    const controller = new AbortController();
    abort.current = controller;
    let items: FileItem[] = [];
    let scanned = 0;
    setSearch({ state: 'running', items, scanned });
    searchCloud(
      cloudId,
      path,
      query,
      (found, n) => {
        items = [...items, ...found];
        scanned = n;
        setSearch({ state: 'running', items, scanned });
      },
      controller.signal,
    ).then(
      ({ truncated, stopped }) => setSearch({ state: 'done', items, scanned, truncated, stopped }),
      (err: unknown) => {
        if (!controller.signal.aborted)
          setSearch({ state: 'error', items, message: err instanceof Error ? err.message : String(err) });
      },
    );
    return () => controller.abort();
  }, [cloudId, path, query]);

  const stop = () => {
    abort.current?.abort();
    setSearch((s) => (s.state === 'running' ? { ...s, state: 'done', truncated: false, stopped: true } : s));
  };

  return (
    <Stack gap="xs" p="xs" data-testid="deep-search-results">
      <Group justify="space-between" wrap="nowrap">
        <Group gap="xs" wrap="nowrap" role="status" data-testid="deep-search-progress">
          {search.state === 'running' && <Loader size={12} />}
          <Text size="sm" c="dimmed">
            {search.state === 'running' && t('search.progress', { count: search.scanned })}
            {search.state === 'done' &&
              (search.stopped
                ? t('search.stopped', { count: search.items.length })
                : t('search.finished', { count: search.items.length }))}
          </Text>
        </Group>
        <Group gap="xs" wrap="nowrap">
          {search.state === 'running' && (
            <Button size="xs" variant="default" onClick={stop}>
              {t('search.stop')}
            </Button>
          )}
          <Button size="xs" variant="subtle" onClick={onClose}>
            {t('search.close')}
          </Button>
        </Group>
      </Group>
      {search.state === 'error' && <Alert color="red">{search.message}</Alert>}
      {search.state === 'done' && search.truncated && (
        <Alert color="yellow" data-testid="deep-search-truncated">
          {t('search.truncated')}
        </Alert>
      )}
      <ScrollArea.Autosize mah={height}>
        <Stack gap={2} data-testid="deep-search-list">
          {search.items.map((item) => (
            <UnstyledButton
              key={item.path}
              onClick={() => onOpen(item)}
              data-testid="deep-search-item"
              style={{ padding: '4px 8px', borderRadius: 4 }}
            >
              <Group gap="xs" wrap="nowrap">
                {item.type === RemoteFileType.folder ? (
                  <IconFolder size={16} aria-hidden />
                ) : (
                  <IconFile size={16} aria-hidden />
                )}
                <Box style={{ minWidth: 0 }}>
                  <Text size="sm" truncate>
                    <Name value={item.name} />
                  </Text>
                  <Text size="xs" c="dimmed" truncate>
                    <bdi dir="ltr">{item.path}</bdi>
                    {item.type === RemoteFileType.file ? ` · ${formatBytes(item.size)}` : ''}
                  </Text>
                </Box>
              </Group>
            </UnstyledButton>
          ))}
        </Stack>
      </ScrollArea.Autosize>
    </Stack>
  );
}
