import { Alert, Box, Center, Group, Loader, NativeSelect, Stack, Text } from '@mantine/core';
import { RemoteFileType, parentOf, type FileItem } from '@skyferry/contract';
import { useEffect, useMemo, useRef, useState, type DragEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { selectVisibleClouds, useSession } from '../session/store.ts';
import { cloudLabel } from '../shell/clouds.ts';
import { listAll } from './api.ts';
import { FileList } from './FileList.tsx';
import { EMPTY_SELECTION, nextSort, sortItems, type Selection, type Sort } from './model.ts';
import { PANE_DRAG_TYPE, carriesPaneDrag, decodePaneDrag, encodePaneDrag, type PaneDrag } from './pane-drag.ts';
import { PathBar } from './PathBar.tsx';
import classes from './Explorer.module.css';

type PaneLoad = { state: 'loading' } | { state: 'ready'; items: FileItem[] } | { state: 'error'; message: string };

export interface SidePaneProps {
  /** The cloud it opens first (another one than the main pane's, where there is one). */
  initialCloudId: string;
  height: number | string;
  /** Rows dragged from the other pane were dropped here, into this pane's folder. */
  onDrop: (from: PaneDrag, to: { cloudId: string; path: string }) => void;
  /** Bumped when a transfer may have changed what this pane shows. */
  refreshKey?: number;
}

/**
 * The second pane of the two-pane view: any connected cloud, browsed on its own; rows dragged from
 * one pane and dropped on the other are copied or moved there (a server task).
 */
export function SidePane({ initialCloudId, height, onDrop, refreshKey = 0 }: SidePaneProps) {
  const { t } = useTranslation('explorer');
  const clouds = useSession(selectVisibleClouds);
  const [cloudId, setCloudId] = useState(initialCloudId);
  const [path, setPath] = useState('/');
  const [load, setLoad] = useState<PaneLoad>({ state: 'loading' });
  const [sort, setSort] = useState<Sort>({ key: 'name', dir: 'asc' });
  const [selection, setSelection] = useState<Selection>(EMPTY_SELECTION);
  const [over, setOver] = useState(false);
  const request = useRef(0);
  const cloud = clouds.find((c) => c.id === cloudId);

  useEffect(() => {
    const id = ++request.current;
    setLoad({ state: 'loading' });
    setSelection(EMPTY_SELECTION);
    // Read from the service (not the server's short-lived cache): it is often the target of a transfer just made.
    listAll(cloudId, path, true).then(
      (items) => id === request.current && setLoad({ state: 'ready', items }),
      (err: unknown) =>
        id === request.current &&
        setLoad({ state: 'error', message: err instanceof Error ? err.message : String(err) }),
    );
  }, [cloudId, path, refreshKey]);

  const items = useMemo(() => (load.state === 'ready' ? sortItems(load.items, sort) : []), [load, sort]);

  const drop = (e: DragEvent) => {
    setOver(false);
    if (!carriesPaneDrag(Array.from(e.dataTransfer.types))) return;
    const from = decodePaneDrag(e.dataTransfer.getData(PANE_DRAG_TYPE));
    if (!from) return;
    e.preventDefault();
    if (from.cloudId !== cloudId || from.folder !== path) onDrop(from, { cloudId, path });
  };

  return (
    <Stack gap="xs" data-testid="side-pane" aria-label={t('panes.second')} role="region">
      <Group gap="xs" wrap="nowrap">
        <NativeSelect
          size="xs"
          aria-label={t('panes.cloud')}
          data={clouds.map((c) => ({ value: c.id, label: cloudLabel(c) }))}
          value={cloudId}
          onChange={(e) => {
            setCloudId(e.currentTarget.value);
            setPath('/');
          }}
          style={{ flex: 1, minWidth: 0 }}
          data-testid="side-pane-cloud"
        />
      </Group>
      <PathBar path={path} rootLabel={cloud ? cloudLabel(cloud) : ''} onOpen={setPath} />
      <Box
        className={classes.dropZone}
        data-dragging={over || undefined}
        data-drop-label={t('panes.dropHere')}
        data-testid="side-pane-drop"
        onDragOver={(e: DragEvent) => {
          if (!carriesPaneDrag(Array.from(e.dataTransfer.types))) return;
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={(e: DragEvent) => {
          if (e.currentTarget === e.target) setOver(false);
        }}
        onDrop={drop}
      >
        {load.state === 'loading' && (
          <Center h={160}>
            <Loader size="sm" role="status" aria-label={t('loading')} />
          </Center>
        )}
        {load.state === 'error' && <Alert color="red">{load.message}</Alert>}
        {load.state === 'ready' && items.length === 0 && (
          <Center h={160}>
            <Text c="dimmed">{t('empty')}</Text>
          </Center>
        )}
        {load.state === 'ready' && items.length > 0 && (
          <FileList
            items={items}
            sort={sort}
            onSort={(key) => setSort((s) => nextSort(s, key))}
            selection={selection}
            onSelection={setSelection}
            onOpen={(item) => setPath(item.type === RemoteFileType.folder ? item.path : parentOf(item.path))}
            height={height}
            onDragItems={(dragged) => ({
              type: PANE_DRAG_TYPE,
              data: encodePaneDrag({ cloudId, folder: path, items: dragged }),
            })}
          />
        )}
      </Box>
    </Stack>
  );
}
