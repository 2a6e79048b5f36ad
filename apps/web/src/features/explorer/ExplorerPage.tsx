import { Alert, Box, Button, Center, Group, Loader, Menu, Stack, Text, TextInput, Title, Tooltip } from '@mantine/core';
import {
  IconApps,
  IconArrowsMove,
  IconColumns2,
  IconCopy,
  IconDownload,
  IconFileExport,
  IconFolderPlus,
  IconFolderUp,
  IconPencil,
  IconRefresh,
  IconRestore,
  IconSearch,
  IconTrash,
  IconUpload,
} from '@tabler/icons-react';
import {
  Code,
  LIMITS,
  Permission,
  RemoteFileType,
  baseName,
  formatBytes,
  hasFlag,
  parentOf,
  type EcologyApp,
  type FileItem,
} from '@skyferry/contract';
import { useEffect, useMemo, useRef, useState, type DragEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { useSearchParams } from 'react-router';
import { ApiRequestError } from '../../api/client.ts';
import { appCatalog, appsFor, openFileWith } from '../ecology/catalog.ts';
import { openExportDialog } from '../export/index.ts';
import { confirm, showReauthorize } from '../messages/store.ts';
import { toast } from '../messages/toast.ts';
import { loadClouds } from '../session/actions.ts';
import { selectVisibleClouds, useSession } from '../session/store.ts';
import type { Cloud } from '../session/types.ts';
import { CloudIcon } from '../shell/CloudIcon.tsx';
import { cloudLabel, kindName } from '../shell/clouds.ts';
import { openConnectCloud } from '../shell/store.ts';
import { onTaskFailed, onUploaded, startDownload, startUploads } from '../task-panel/runner.ts';
import { TaskPanel } from '../task-panel/TaskPanel.tsx';
import { filesApi, foldName, listAll } from './api.ts';
import { CopyMoveDialog, DropDialog, type CopyMoveMode, type DropDialogProps } from './CopyMoveDialog.tsx';
import { DeepSearch } from './DeepSearch.tsx';
import { PANE_DRAG_TYPE, carriesPaneDrag, decodePaneDrag, encodePaneDrag, type PaneDrag } from './pane-drag.ts';
import { SidePane } from './SidePane.tsx';
import { TrashDialog } from './TrashDialog.tsx';
import { pickedFromDataTransfer, pickedFromInput, type Picked } from './dropped.ts';
import { FileList } from './FileList.tsx';
import {
  EMPTY_SELECTION,
  nextSort,
  pruneSelection,
  sortItems,
  uniqueName,
  type Selection,
  type Sort,
} from './model.ts';
import { NameDialog } from './NameDialog.tsx';
import { PathBar } from './PathBar.tsx';
import classes from './Explorer.module.css';
import { Name } from '../../lib/Name.tsx';

type Load =
  | { state: 'loading' }
  | { state: 'ready'; items: FileItem[]; complete: boolean }
  | { state: 'error'; code: number; message: string };

/** While a large folder is still arriving, the list is redrawn after pages 1, 2, 4, 8, 16... (each redraw sorts it). */
export function shouldShowPage(page: number): boolean {
  return (page & (page - 1)) === 0;
}

/** The cloud the query's cloud_index names among the visible clouds. */
export function cloudOfIndex(clouds: readonly Cloud[], raw: string | null): { cloud: Cloud; index: number } | null {
  const index = Number(raw ?? NaN);
  if (!Number.isInteger(index) || index < 0) return null;
  const cloud = clouds[index];
  return cloud ? { cloud, index } : null;
}

/**
 * The file browser (/manage/explorer?cloud_index=&is_open=&_=): path bar, a virtualized sortable
 * list with multi-select, upload by button or drag and drop (folders too), download, rename,
 * delete, new folder and refresh, with empty and error states.
 */
export function ExplorerPage() {
  const { t } = useTranslation('explorer');
  const { t: tExport } = useTranslation('export');
  const [params, setParams] = useSearchParams();
  const clouds = useSession(selectVisibleClouds);
  const loaded = useSession((s) => s.cloudsLoaded);
  const found = cloudOfIndex(clouds, params.get('cloud_index'));
  const cloud = found?.cloud ?? null;
  const stamp = params.get('_') ?? '';
  const path = params.get('path') || '/';

  const [load, setLoad] = useState<Load>({ state: 'loading' });
  const [sort, setSort] = useState<Sort>({ key: 'name', dir: 'asc' });
  const [selection, setSelection] = useState<Selection>(EMPTY_SELECTION);
  const [dialog, setDialog] = useState<null | 'mkdir' | 'rename'>(null);
  const [dragging, setDragging] = useState(false);
  const [copyMove, setCopyMove] = useState<CopyMoveMode | null>(null);
  const [trashOpen, setTrashOpen] = useState(false);
  // The name filter of this folder (instant); `deepQuery` searches the whole tree below it.
  const [filter, setFilter] = useState('');
  const [deepQuery, setDeepQuery] = useState<string | null>(null);
  const [menuAt, setMenuAt] = useState<{ x: number; y: number } | null>(null);
  const [twoPanes, setTwoPanes] = useState(false);
  const [drop, setDrop] = useState<DropDialogProps['drop']>(null);
  const fileInput = useRef<HTMLInputElement>(null);
  const folderInput = useRef<HTMLInputElement>(null);
  const requestId = useRef(0);

  const cloudId = cloud?.id ?? '';
  const flags = cloud?.flags ?? 0;

  const refresh = async (force: boolean) => {
    if (!cloudId) return;
    const id = ++requestId.current;
    // A refresh in place keeps the rows on screen until the new ones arrive; another folder starts empty.
    setLoad((l) => (l.state === 'ready' && force ? l : { state: 'loading' }));
    try {
      let page = 0;
      const all = await listAll(cloudId, path, force, (sofar, done) => {
        page += 1;
        if (id !== requestId.current || (!done && !shouldShowPage(page))) return;
        setLoad({ state: 'ready', items: [...sofar], complete: done });
      });
      if (id !== requestId.current) return;
      const present = all.map((i) => i.path);
      setSelection((s) => pruneSelection(s, present));
    } catch (err) {
      if (id !== requestId.current) return;
      const code = err instanceof ApiRequestError ? err.code : Code.INTERNAL;
      setLoad({ state: 'error', code, message: err instanceof Error ? err.message : String(err) });
      if (code === Code.CLOUD_AUTH_EXPIRED && cloud) {
        void loadClouds().catch(() => undefined);
        if (await showReauthorize({ cloudName: cloudLabel(cloud) })) openConnectCloud(cloud.cloud_name);
      }
    }
  };

  // A new cloud, folder or click in the sidebar (its `_` changes) loads afresh.
  useEffect(() => {
    setSelection(EMPTY_SELECTION);
    setFilter('');
    setDeepQuery(null);
    void refresh(false);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [cloudId, path, stamp]);

  useEffect(
    () =>
      onUploaded((cid, folder) => {
        if (cid === cloudId && folder === path) void refresh(true);
      }),
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [cloudId, path],
  );
  useEffect(
    () =>
      onTaskFailed((task) => {
        toast.error(
          task.type === 0 ? t('uploadFailed', { name: task.name }) : t('downloadFailed', { name: task.name }),
        );
      }),
    [t],
  );

  const items = useMemo(() => {
    if (load.state !== 'ready') return [];
    const needle = foldName(filter.trim());
    const shown = needle ? load.items.filter((i) => foldName(i.name).includes(needle)) : load.items;
    return sortItems(shown, sort);
  }, [load, sort, filter]);
  const selectedItems = useMemo(() => items.filter((i) => selection.selected.has(i.path)), [items, selection]);
  const selectedBytes = selectedItems.reduce((sum, i) => sum + i.size, 0);

  const openPath = (next: string) => {
    const p = new URLSearchParams(params);
    if (next === '/') p.delete('path');
    else p.set('path', next);
    setParams(p);
  };
  // The apps that open files (double-click and "Open with"); a file no app takes is downloaded.
  const [apps, setApps] = useState<EcologyApp[]>([]);
  useEffect(() => {
    let live = true;
    appCatalog().then(
      (list) => live && setApps(list),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, []);
  const open = (item: FileItem) => {
    if (item.type === RemoteFileType.folder) {
      openPath(item.path);
      return;
    }
    const choice = appsFor(apps, item.name)[0];
    if (choice) openFileWith(choice, cloudId, item, items);
    else void startDownload(cloudId, path, [item]);
  };
  const openWith =
    selectedItems.length === 1 && selectedItems[0]?.type === RemoteFileType.file
      ? appsFor(apps, selectedItems[0].name)
      : [];

  const upload = async (picked: Picked) => {
    if (!cloud) return;
    if (picked.files.length === 0 && picked.emptyFolders.length === 0) return;
    try {
      await startUploads(cloudId, path, picked);
    } catch (err) {
      toast.error(err instanceof Error ? err.message : String(err));
    }
  };

  const onDrop = async (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    // Rows from the other pane: copy or move them here.
    const rows = carriesPaneDrag(Array.from(e.dataTransfer.types))
      ? decodePaneDrag(e.dataTransfer.getData(PANE_DRAG_TYPE))
      : null;
    if (rows) {
      // Rows dropped back where they are: nothing to do.
      if (rows.cloudId !== cloudId || rows.folder !== path) setDrop({ from: rows, to: { cloudId, path } });
      return;
    }
    if (!hasFlag(flags, Permission.write)) return;
    await upload(await pickedFromDataTransfer(e.dataTransfer));
  };
  const dropOnPane = (from: PaneDrag, to: { cloudId: string; path: string }) => setDrop({ from, to });

  const download = () => {
    if (selectedItems.length === 0) {
      toast.warning(t('selectFirst'));
      return;
    }
    const zipName = selectedItems.length > 1 ? (path === '/' ? cloudLabel(cloud as Cloud) : baseName(path)) : undefined;
    void startDownload(cloudId, path, selectedItems, zipName);
  };

  /** "Export to": the selected files to this computer or another cloud (folders are left out). */
  const exportSelected = () => {
    const chosen = selectedItems.filter((i) => i.type === 1);
    if (chosen.length === 0) {
      toast.warning(tExport('noFiles'));
      return;
    }
    void openExportDialog(
      chosen.map((i) => ({ filename: i.name, size: i.size, source: { cloud_id: cloudId, path: i.path } })),
    );
  };

  const remove = async () => {
    if (selectedItems.length === 0) return;
    const restore = t('common:restoreWithin', { days: LIMITS.restoreDeletedDays });
    const answer = await confirm({
      message: `${
        selectedItems.length === 1
          ? t('deleteOne', { name: selectedItems[0]?.name })
          : t('deleteMany', { count: selectedItems.length })
      } ${restore}`,
      danger: true,
    });
    if (answer !== 'yes') return;
    try {
      const result = await filesApi.delete(
        cloudId,
        selectedItems.map((i) => i.path),
      );
      if (result.failed.length > 0) {
        console.warn('delete failed', result.failed);
        toast.error(t('deletePartly', { count: result.failed.length, msg: result.failed[0]?.msg ?? '' }));
      } else {
        toast.success(
          result.trashed
            ? `${t('deletedToTrash', { count: result.deleted.length })} ${restore}`
            : t('deleted', { count: result.deleted.length }),
        );
      }
    } catch (err) {
      console.warn('delete failed', err);
      toast.error(err instanceof Error ? err.message : String(err));
    }
    setSelection(EMPTY_SELECTION);
    void refresh(true);
  };

  if (!cloud) {
    return (
      <Stack gap="md" data-testid="explorer">
        <Title order={2}>{t('common:page.explorer')}</Title>
        {loaded ? <Alert color="gray">{t('noCloud')}</Alert> : <Loader size="sm" />}
      </Stack>
    );
  }

  const canWrite = hasFlag(flags, Permission.write);
  const canMkdir = hasFlag(flags, Permission.mkdir);
  const canRename = hasFlag(flags, Permission.rename);
  const canDelete = hasFlag(flags, Permission.delete);
  const renaming = selectedItems.length === 1 ? selectedItems[0] : undefined;
  const listHeight = 'calc(100vh - 260px)';

  return (
    <Stack gap="sm" data-testid="explorer">
      <Group justify="space-between" wrap="nowrap">
        <Group gap="xs" wrap="nowrap" style={{ minWidth: 0 }}>
          <CloudIcon kind={cloud.cloud_name} size={26} />
          <Box style={{ minWidth: 0 }}>
            <Title order={2} size="h3" style={{ overflow: 'hidden', textOverflow: 'ellipsis', whiteSpace: 'nowrap' }}>
              <Name value={cloudLabel(cloud)} />
            </Title>
            <Text size="xs" c="dimmed">
              {kindName(cloud.cloud_name)} · <Name value={cloud.cloud_account} />
            </Text>
          </Box>
        </Group>
      </Group>
      <Group gap="xs" wrap="wrap" role="toolbar" aria-label={t('toolbar')}>
        <Button
          size="xs"
          leftSection={<IconUpload size={16} aria-hidden />}
          disabled={!canWrite}
          onClick={() => fileInput.current?.click()}
        >
          {t('upload')}
        </Button>
        <Button
          size="xs"
          variant="light"
          leftSection={<IconFolderUp size={16} aria-hidden />}
          disabled={!canWrite}
          onClick={() => folderInput.current?.click()}
        >
          {t('uploadFolder')}
        </Button>
        <Button
          size="xs"
          variant="light"
          leftSection={<IconFolderPlus size={16} aria-hidden />}
          disabled={!canMkdir}
          onClick={() => setDialog('mkdir')}
        >
          {t('newFolder')}
        </Button>
        <Button
          size="xs"
          variant="default"
          leftSection={<IconDownload size={16} aria-hidden />}
          disabled={selectedItems.length === 0}
          onClick={download}
        >
          {t('download')}
        </Button>
        <Button
          size="xs"
          variant="default"
          leftSection={<IconPencil size={16} aria-hidden />}
          disabled={!canRename || !renaming}
          onClick={() => setDialog('rename')}
        >
          {t('rename')}
        </Button>
        <Button
          size="xs"
          variant="default"
          color="red"
          leftSection={<IconTrash size={16} aria-hidden />}
          disabled={!canDelete || selectedItems.length === 0}
          onClick={() => void remove()}
        >
          {t('delete')}
        </Button>
        <Button
          size="xs"
          variant="default"
          leftSection={<IconCopy size={16} aria-hidden />}
          disabled={selectedItems.length === 0}
          onClick={() => setCopyMove('copy')}
        >
          {t('copyMove.copyTo')}
        </Button>
        <Button
          size="xs"
          variant="default"
          leftSection={<IconFileExport size={16} aria-hidden />}
          disabled={selectedItems.length === 0}
          onClick={exportSelected}
          data-testid="explorer-export"
        >
          {tExport('exportTo')}
        </Button>
        <Button
          size="xs"
          variant="default"
          leftSection={<IconArrowsMove size={16} aria-hidden />}
          disabled={!canDelete || selectedItems.length === 0}
          onClick={() => setCopyMove('move')}
        >
          {t('copyMove.moveTo')}
        </Button>
        <Button
          size="xs"
          variant="subtle"
          leftSection={<IconRestore size={16} aria-hidden />}
          onClick={() => setTrashOpen(true)}
        >
          {t('trash.open')}
        </Button>
        <Button
          size="xs"
          variant={twoPanes ? 'light' : 'subtle'}
          leftSection={<IconColumns2 size={16} aria-hidden />}
          aria-pressed={twoPanes}
          visibleFrom="md"
          onClick={() => setTwoPanes((v) => !v)}
          data-testid="two-panes"
        >
          {t('panes.toggle')}
        </Button>
        <Tooltip label={t('refresh')} withArrow>
          <Button size="xs" variant="subtle" aria-label={t('refresh')} onClick={() => void refresh(true)}>
            <IconRefresh size={16} aria-hidden />
          </Button>
        </Tooltip>
        {load.state === 'ready' && !load.complete && (
          <Group gap={6} data-testid="explorer-loading-more">
            <Loader size={12} />
            <Text size="xs" c="dimmed">
              {t('loadingMore', { count: load.items.length })}
            </Text>
          </Group>
        )}
        {selectedItems.length > 0 && (
          <Text size="xs" c="dimmed" data-testid="selection-count">
            {t('selected', { count: selectedItems.length })}
            {selectedBytes > 0 ? ` · ${formatBytes(selectedBytes)}` : ''}
          </Text>
        )}
        <input
          ref={fileInput}
          type="file"
          multiple
          hidden
          data-testid="upload-input"
          onChange={(e) => {
            const files = e.currentTarget.files;
            if (files) void upload(pickedFromInput(files));
            e.currentTarget.value = '';
          }}
        />
        <input
          ref={folderInput}
          type="file"
          multiple
          hidden
          data-testid="upload-folder-input"
          {...({ webkitdirectory: '' } as Record<string, string>)}
          onChange={(e) => {
            const files = e.currentTarget.files;
            if (files) void upload(pickedFromInput(files));
            e.currentTarget.value = '';
          }}
        />
      </Group>
      <PathBar path={path} rootLabel={cloudLabel(cloud)} onOpen={openPath} />
      <Group gap="xs" wrap="wrap">
        <TextInput
          size="xs"
          leftSection={<IconSearch size={14} aria-hidden />}
          placeholder={t('search.placeholder')}
          aria-label={t('search.placeholder')}
          value={filter}
          onChange={(e) => {
            setFilter(e.currentTarget.value);
            setDeepQuery(null);
          }}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && filter.trim()) setDeepQuery(filter.trim());
            if (e.key === 'Escape') {
              setFilter('');
              setDeepQuery(null);
            }
          }}
          style={{ flex: '1 1 200px', maxWidth: 360 }}
          data-testid="explorer-filter"
        />
        {filter.trim() !== '' && deepQuery === null && (
          <Button size="xs" variant="light" onClick={() => setDeepQuery(filter.trim())} data-testid="deep-search">
            {t('search.deep')}
          </Button>
        )}
      </Group>
      <Box className={twoPanes ? classes.twoPanes : undefined}>
        <Box
          className={classes.dropZone}
          data-dragging={dragging || undefined}
          data-drop-label={t('dropHere')}
          data-testid="drop-zone"
          onDragOver={(e: DragEvent) => {
            const types = Array.from(e.dataTransfer.types);
            if (!carriesPaneDrag(types) && (!canWrite || !types.includes('Files'))) return;
            e.preventDefault();
            e.dataTransfer.dropEffect = 'copy';
            setDragging(true);
          }}
          onDragLeave={(e: DragEvent) => {
            if (e.currentTarget === e.target) setDragging(false);
          }}
          onDrop={(e: DragEvent) => void onDrop(e)}
        >
          {load.state === 'loading' && (
            <Center h={240}>
              <Loader size="sm" role="status" aria-label={t('loading')} />
            </Center>
          )}
          {load.state === 'error' && (
            <Alert
              color={load.code === Code.NOT_FOUND ? 'yellow' : 'red'}
              title={t('errorTitle')}
              data-testid="explorer-error"
            >
              <Stack gap="xs" align="flex-start">
                <Text size="sm">{load.message}</Text>
                <Group gap="xs">
                  <Button size="xs" variant="light" onClick={() => void refresh(true)}>
                    {t('retry')}
                  </Button>
                  {path !== '/' && (
                    <Button size="xs" variant="subtle" onClick={() => openPath(parentOf(path))}>
                      {t('up')}
                    </Button>
                  )}
                </Group>
              </Stack>
            </Alert>
          )}
          {deepQuery !== null && (
            <DeepSearch
              cloudId={cloudId}
              path={path}
              query={deepQuery}
              height={listHeight}
              onClose={() => setDeepQuery(null)}
              onOpen={(item) => {
                setDeepQuery(null);
                setFilter('');
                if (item.type === RemoteFileType.folder) openPath(item.path);
                else openPath(parentOf(item.path));
              }}
            />
          )}
          {deepQuery === null && load.state === 'ready' && items.length === 0 && filter.trim() !== '' && (
            <Center h={120} data-testid="explorer-no-match">
              <Text c="dimmed">{t('search.noMatch')}</Text>
            </Center>
          )}
          {deepQuery === null && load.state === 'ready' && items.length === 0 && filter.trim() === '' && (
            <Center h={240} data-testid="explorer-empty">
              <Stack align="center" gap={4}>
                <Text c="dimmed">{t('empty')}</Text>
                {canWrite && (
                  <Text size="sm" c="dimmed">
                    {t('emptyHint')}
                  </Text>
                )}
              </Stack>
            </Center>
          )}
          {deepQuery === null && load.state === 'ready' && items.length > 0 && (
            <FileList
              items={items}
              sort={sort}
              onSort={(key) => setSort((s) => nextSort(s, key))}
              selection={selection}
              onSelection={setSelection}
              onOpen={open}
              height={listHeight}
              onCommand={(command) => {
                if (command === 'rename' && canRename && renaming) setDialog('rename');
                if (command === 'delete' && canDelete) void remove();
              }}
              onContextMenu={setMenuAt}
              onDragItems={(dragged) => ({
                type: PANE_DRAG_TYPE,
                data: encodePaneDrag({ cloudId, folder: path, items: dragged }),
              })}
            />
          )}
        </Box>
        {twoPanes && (
          <SidePane
            initialCloudId={clouds.find((c) => c.id !== cloudId)?.id ?? cloudId}
            height={listHeight}
            onDrop={dropOnPane}
          />
        )}
      </Box>
      {/* The context menu opens at the pointer: its target is a point there (never "hidden" for being empty). */}
      <Menu
        opened={menuAt !== null}
        onChange={(o) => !o && setMenuAt(null)}
        position="bottom-start"
        withinPortal
        hideDetached={false}
      >
        <Menu.Target>
          <div
            aria-hidden
            style={{ position: 'fixed', left: menuAt?.x ?? 0, top: menuAt?.y ?? 0, width: 0, height: 0 }}
          />
        </Menu.Target>
        <Menu.Dropdown data-testid="explorer-context-menu">
          {selectedItems.length === 1 && selectedItems[0] && (
            <Menu.Item onClick={() => selectedItems[0] && open(selectedItems[0])}>{t('menu.open')}</Menu.Item>
          )}
          {openWith.length > 0 && <Menu.Label>{t('apps:openWith')}</Menu.Label>}
          {openWith.map((choice) => (
            <Menu.Item
              key={choice.app.app_id}
              leftSection={<IconApps size={14} aria-hidden />}
              onClick={() => selectedItems[0] && openFileWith(choice, cloudId, selectedItems[0], items)}
              data-testid="open-with"
            >
              {choice.app.first_party ? t(`apps:builtIn.${choice.app.app_id}.name`) : choice.app.name}
            </Menu.Item>
          ))}
          <Menu.Item leftSection={<IconDownload size={14} aria-hidden />} onClick={download}>
            {t('download')}
          </Menu.Item>
          <Menu.Item
            leftSection={<IconPencil size={14} aria-hidden />}
            disabled={!canRename || !renaming}
            onClick={() => setDialog('rename')}
          >
            {t('rename')}
          </Menu.Item>
          <Menu.Item leftSection={<IconCopy size={14} aria-hidden />} onClick={() => setCopyMove('copy')}>
            {t('copyMove.copyTo')}
          </Menu.Item>
          <Menu.Item leftSection={<IconFileExport size={14} aria-hidden />} onClick={exportSelected}>
            {tExport('exportTo')}
          </Menu.Item>
          <Menu.Item
            leftSection={<IconArrowsMove size={14} aria-hidden />}
            disabled={!canDelete}
            onClick={() => setCopyMove('move')}
          >
            {t('copyMove.moveTo')}
          </Menu.Item>
          <Menu.Item
            color="red"
            leftSection={<IconTrash size={14} aria-hidden />}
            disabled={!canDelete}
            onClick={() => void remove()}
          >
            {t('delete')}
          </Menu.Item>
        </Menu.Dropdown>
      </Menu>
      <DropDialog drop={drop} onClose={() => setDrop(null)} />
      <CopyMoveDialog
        mode={copyMove}
        cloudId={cloudId}
        folder={path}
        items={selectedItems}
        onClose={() => setCopyMove(null)}
      />
      <TrashDialog
        opened={trashOpen}
        cloudId={cloudId}
        cloudName={cloudLabel(cloud)}
        canDelete={canDelete}
        onClose={() => setTrashOpen(false)}
        onRestored={() => void refresh(true)}
      />
      <NameDialog
        opened={dialog === 'mkdir'}
        title={t('newFolder')}
        label={t('folderName')}
        initial={uniqueName(
          t('newFolderDefault'),
          items.map((i) => i.name),
        )}
        submitLabel={t('create')}
        onClose={() => setDialog(null)}
        onSubmit={async (name) => {
          await filesApi.mkdir(cloudId, path, name);
          toast.success(t('folderCreated', { name }));
          await refresh(true);
        }}
      />
      <NameDialog
        opened={dialog === 'rename'}
        title={t('rename')}
        label={t('newName')}
        initial={renaming?.name ?? ''}
        submitLabel={t('rename')}
        onClose={() => setDialog(null)}
        onSubmit={async (name) => {
          if (!renaming || name === renaming.name) return;
          const item = await filesApi.rename(cloudId, renaming.path, name);
          await refresh(true);
          setSelection({ selected: new Set([item.path]), anchor: null, focus: null });
        }}
      />
      <TaskPanel />
    </Stack>
  );
}

/** For the task panel and other screens: the explorer's URL of a cloud's folder. */
export function explorerFolderHref(index: number, folder: string, now = Date.now()): string {
  return `/manage/explorer?cloud_index=${index}&is_open=1&_=${now}${folder === '/' ? '' : `&path=${encodeURIComponent(folder)}`}`;
}
