import {
  Alert,
  Badge,
  Box,
  Button,
  Center,
  Group,
  Loader,
  Modal,
  Radio,
  SimpleGrid,
  Stack,
  Text,
  TextInput,
  Title,
  UnstyledButton,
} from '@mantine/core';
import { IconAlbum, IconFolderFilled, IconPhoto, IconUpload } from '@tabler/icons-react';
import { Code, Permission, RemoteFileType, hasFlag, plainName, type Album, type FileItem } from '@skyferry/contract';
import { useEffect, useMemo, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useSearchParams } from 'react-router';
import { ApiRequestError } from '../../api/client.ts';
import { listAll } from '../explorer/api.ts';
import { pickedFromInput } from '../explorer/dropped.ts';
import { cloudOfIndex } from '../explorer/ExplorerPage.tsx';
import { isImage } from '../explorer/model.ts';
import { PathBar } from '../explorer/PathBar.tsx';
import { toast } from '../messages/toast.ts';
import { selectVisibleClouds, useSession } from '../session/store.ts';
import { cloudLabel } from '../shell/clouds.ts';
import { onUploaded, startUploads } from '../task-panel/runner.ts';
import { TaskPanel } from '../task-panel/TaskPanel.tsx';
import { photosApi, previewUrl } from './api.ts';
import { Name } from '../../lib/Name.tsx';

/** How many photos the grid shows before "Show more". */
export const PHOTOS_PAGE = 300;

type AlbumsState =
  { state: 'loading' } | { state: 'ready'; albums: Album[] } | { state: 'unavailable'; message: string };

/**
 * /manage/photos: a photos-type cloud as a grid of previews (made and cached by the server, scaled
 * by the browser), its albums, and "add to album" for the selected photos.
 */
export function PhotosPage() {
  const { t } = useTranslation('photos');
  const [params, setParams] = useSearchParams();
  const clouds = useSession(selectVisibleClouds);
  const found = cloudOfIndex(clouds, params.get('cloud_index'));
  const cloud = found?.cloud ?? null;
  const cloudId = cloud?.id ?? '';
  const path = params.get('path') || '/';
  const stamp = params.get('_') ?? '';
  const [items, setItems] = useState<FileItem[] | null>(null);
  const [error, setError] = useState('');
  const [shown, setShown] = useState(PHOTOS_PAGE);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [albums, setAlbums] = useState<AlbumsState>({ state: 'loading' });
  const [adding, setAdding] = useState(false);
  const input = useRef<HTMLInputElement>(null);

  const load = async () => {
    if (!cloudId) return;
    setError('');
    try {
      setItems(await listAll(cloudId, path, true));
    } catch (err) {
      setItems([]);
      setError(err instanceof Error ? err.message : String(err));
    }
  };
  const loadAlbums = async () => {
    if (!cloudId) return;
    try {
      setAlbums({ state: 'ready', albums: (await photosApi.albums(cloudId)).albums });
    } catch (err) {
      const message =
        err instanceof ApiRequestError && err.code === Code.FORBIDDEN
          ? t('albumsUnavailable')
          : String((err as Error).message ?? err);
      setAlbums({ state: 'unavailable', message });
    }
  };

  useEffect(() => {
    setItems(null);
    setSelected(new Set());
    setShown(PHOTOS_PAGE);
    void load();
    void loadAlbums();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [cloudId, path, stamp]);
  useEffect(
    () =>
      onUploaded((cid, folder) => {
        if (cid === cloudId && folder === path) void load();
      }),
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [cloudId, path],
  );

  const folders = useMemo(() => (items ?? []).filter((i) => i.type === RemoteFileType.folder), [items]);
  const photos = useMemo(() => (items ?? []).filter((i) => isImage(i)), [items]);

  if (!cloud) {
    return (
      <Stack>
        <Title order={2}>{t('common:page.photos')}</Title>
        <Alert color="gray">{t('noCloud')}</Alert>
      </Stack>
    );
  }

  const openPath = (next: string) => {
    const p = new URLSearchParams(params);
    if (next === '/') p.delete('path');
    else p.set('path', next);
    setParams(p);
  };
  const toggle = (p: string) =>
    setSelected((s) => {
      const next = new Set(s);
      if (next.has(p)) next.delete(p);
      else next.add(p);
      return next;
    });

  return (
    <Stack gap="sm" data-testid="photos">
      <Group justify="space-between">
        <Title order={2} size="h3">
          <Name value={cloudLabel(cloud)} />
        </Title>
        <Group gap="xs">
          <Button
            size="xs"
            leftSection={<IconUpload size={16} aria-hidden />}
            disabled={!hasFlag(cloud.flags, Permission.write)}
            onClick={() => input.current?.click()}
          >
            {t('upload')}
          </Button>
          <Button
            size="xs"
            variant="light"
            leftSection={<IconAlbum size={16} aria-hidden />}
            disabled={selected.size === 0 || albums.state !== 'ready'}
            onClick={() => setAdding(true)}
            data-testid="add-to-album"
          >
            {t('addToAlbum')}
          </Button>
          {selected.size > 0 && <Badge variant="light">{t('selected', { count: selected.size })}</Badge>}
        </Group>
        <input
          ref={input}
          type="file"
          accept="image/*,video/*"
          multiple
          hidden
          onChange={(e) => {
            const files = e.currentTarget.files;
            if (files) void startUploads(cloudId, path, pickedFromInput(files));
            e.currentTarget.value = '';
          }}
        />
      </Group>
      {cloud.cloud_name === 'google_photos' && (
        <Alert variant="light" color="blue" title={t('appOnly.title')} data-testid="photos-app-only">
          {t('appOnly.body')}
        </Alert>
      )}
      <PathBar path={path} rootLabel={cloudLabel(cloud)} onOpen={openPath} />
      <AlbumsBar albums={albums} />
      {folders.length > 0 && (
        <Group gap="xs">
          {folders.map((f) => (
            <Button
              key={f.path}
              size="compact-sm"
              variant="default"
              leftSection={<IconFolderFilled size={14} aria-hidden />}
              onClick={() => openPath(f.path)}
            >
              <Name value={f.name} />
            </Button>
          ))}
        </Group>
      )}
      {error && <Alert color="red">{error}</Alert>}
      {items === null ? (
        <Center h={200}>
          <Loader size="sm" />
        </Center>
      ) : photos.length === 0 ? (
        <Center h={200}>
          <Text c="dimmed">{t('empty')}</Text>
        </Center>
      ) : (
        <>
          <SimpleGrid cols={{ base: 3, sm: 4, md: 6, lg: 8 }} spacing={6} data-testid="photo-grid">
            {photos.slice(0, shown).map((p) => (
              <PhotoTile
                key={p.path}
                cloudId={cloudId}
                item={p}
                selected={selected.has(p.path)}
                onToggle={() => toggle(p.path)}
              />
            ))}
          </SimpleGrid>
          {photos.length > shown && (
            <Center>
              <Button variant="subtle" onClick={() => setShown((n) => n + PHOTOS_PAGE)}>
                {t('showMore', { count: photos.length - shown })}
              </Button>
            </Center>
          )}
        </>
      )}
      <AddToAlbumDialog
        opened={adding}
        onClose={() => setAdding(false)}
        cloudId={cloudId}
        albums={albums.state === 'ready' ? albums.albums : []}
        files={[...selected]}
        onDone={() => {
          setSelected(new Set());
          void loadAlbums();
        }}
      />
      <TaskPanel />
    </Stack>
  );
}

function AlbumsBar({ albums }: { albums: AlbumsState }) {
  const { t } = useTranslation('photos');
  if (albums.state === 'loading') return null;
  if (albums.state === 'unavailable') {
    return (
      <Text size="xs" c="dimmed" data-testid="albums-unavailable">
        {albums.message}
      </Text>
    );
  }
  return (
    <Group gap="xs" data-testid="albums">
      <Text size="sm" fw={600}>
        {t('albums')}
      </Text>
      {albums.albums.length === 0 ? (
        <Text size="sm" c="dimmed">
          {t('noAlbums')}
        </Text>
      ) : (
        albums.albums.map((a) => (
          <Badge key={a.id} variant="light" leftSection={<IconAlbum size={12} aria-hidden />}>
            <Name value={a.count !== null ? `${a.title} (${a.count})` : a.title} />
          </Badge>
        ))
      )}
    </Group>
  );
}

/** One photo: its preview loads when it scrolls into view; a click selects it. */
function PhotoTile({
  cloudId,
  item,
  selected,
  onToggle,
}: {
  cloudId: string;
  item: FileItem;
  selected: boolean;
  onToggle: () => void;
}) {
  const ref = useRef<HTMLButtonElement>(null);
  const [src, setSrc] = useState<string | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const controller = new AbortController();
    let url: string | null = null;
    const observer = new IntersectionObserver((entries) => {
      if (!entries.some((e) => e.isIntersecting)) return;
      observer.disconnect();
      previewUrl(cloudId, item.path, controller.signal)
        .then((u) => {
          url = u;
          setSrc(u);
        })
        .catch(() => {
          if (!controller.signal.aborted) setFailed(true);
        });
    });
    observer.observe(el);
    return () => {
      observer.disconnect();
      controller.abort();
      if (url) URL.revokeObjectURL(url);
    };
  }, [cloudId, item.path]);
  return (
    <UnstyledButton
      ref={ref}
      onClick={onToggle}
      aria-pressed={selected}
      aria-label={plainName(item.name)}
      title={plainName(item.name)}
      data-testid="photo-tile"
      style={{
        aspectRatio: '1 / 1',
        borderRadius: 6,
        overflow: 'hidden',
        outline: selected ? '3px solid var(--mantine-color-blue-5)' : '1px solid var(--mantine-color-gray-3)',
        background: 'var(--mantine-color-gray-1)',
      }}
    >
      {src ? (
        <img
          src={src}
          alt=""
          loading="lazy"
          style={{ width: '100%', height: '100%', objectFit: 'cover', display: 'block' }}
        />
      ) : (
        <Center h="100%">
          {failed ? <IconPhoto size={28} color="var(--mantine-color-gray-5)" aria-hidden /> : <Loader size="xs" />}
        </Center>
      )}
    </UnstyledButton>
  );
}

function AddToAlbumDialog({
  opened,
  onClose,
  cloudId,
  albums,
  files,
  onDone,
}: {
  opened: boolean;
  onClose: () => void;
  cloudId: string;
  albums: Album[];
  files: string[];
  onDone: () => void;
}) {
  const { t } = useTranslation('photos');
  const [choice, setChoice] = useState<string>('');
  const [title, setTitle] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  useEffect(() => {
    if (opened) {
      setChoice(albums[0]?.id ?? 'new');
      setTitle('');
      setError('');
    }
  }, [opened, albums]);
  const submit = async () => {
    setBusy(true);
    setError('');
    try {
      const albumId = choice === 'new' ? (await photosApi.createAlbum(cloudId, title.trim())).id : choice;
      // The service takes at most 50 items per call.
      let added = 0;
      for (let i = 0; i < files.length; i += 50)
        added += (await photosApi.addToAlbum(cloudId, albumId, files.slice(i, i + 50))).added;
      toast.success(t('added', { count: added }));
      onDone();
      onClose();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal opened={opened} onClose={onClose} title={t('addToAlbum')} centered>
      <Stack gap="sm">
        <Radio.Group value={choice} onChange={setChoice}>
          <Stack gap={6}>
            {albums.map((a) => (
              <Radio key={a.id} value={a.id} label={<Name value={a.title} />} />
            ))}
            <Radio value="new" label={t('newAlbum')} />
          </Stack>
        </Radio.Group>
        {choice === 'new' && (
          <TextInput label={t('albumTitle')} value={title} onChange={(e) => setTitle(e.currentTarget.value)} />
        )}
        {error && <Alert color="red">{error}</Alert>}
        <Box>
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              {t('cancel')}
            </Button>
            <Button loading={busy} disabled={choice === 'new' && title.trim() === ''} onClick={() => void submit()}>
              {t('add')}
            </Button>
          </Group>
        </Box>
      </Stack>
    </Modal>
  );
}
