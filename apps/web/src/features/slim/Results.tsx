import {
  ActionIcon,
  Alert,
  Anchor,
  Badge,
  Button,
  Card,
  Checkbox,
  Group,
  Loader,
  Menu,
  Pagination,
  SegmentedControl,
  Stack,
  Table,
  Tabs,
  Text,
  Tooltip,
} from '@mantine/core';
import { IconFilter, IconSortAscending, IconSortDescending, IconTrash } from '@tabler/icons-react';
import {
  LIMITS,
  PAGE_SIZES,
  formatBytes,
  formatDateTime,
  plainName,
  type CleanupCategory,
  type CleanupItem,
  type CleanupKind,
  type CleanupTask,
  type DuplicateFilesPage,
  type EmptyFoldersPage,
  type LargeFilesPage,
} from '@skyferry/contract';
import { useEffect, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { askUpgrade } from '../tasks/errors.ts';
import { confirm } from '../messages/store.ts';
import { slimApi } from './api.ts';
import { CATEGORY_TABS, countOf, modesOf, selectedBytes, smartSelect, wholeGroups } from './model.ts';
import { deleteResults } from './store.ts';
import { Name } from '../../lib/Name.tsx';

type AnyPage = DuplicateFilesPage | LargeFilesPage | EmptyFoldersPage;

/** The folder an item is in ("/" for the top). */
export function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

function date(ms: number | null): string {
  return ms ? formatDateTime(ms) : '';
}

/** The items of a page as flat rows (duplicate groups unfolded). */
function itemsOf(kind: CleanupKind, page: AnyPage | null): CleanupItem[] {
  if (!page) return [];
  if (kind === 'duplicate_files') return (page as DuplicateFilesPage).items.flatMap((g) => g.files);
  return (page as LargeFilesPage).items;
}

/** A result row: the name with its category (files), the folder, size and modified date. */
function ItemRow({
  item,
  checked,
  onToggle,
  extra,
  folder = false,
}: {
  item: CleanupItem;
  checked: boolean;
  onToggle: () => void;
  extra?: string;
  /** An empty folder: no category to show. */
  folder?: boolean;
}) {
  const { t } = useTranslation('slim');
  return (
    <Table.Tr data-testid="slim-row" data-path={item.path}>
      <Table.Td w={36}>
        <Checkbox checked={checked} onChange={onToggle} aria-label={plainName(item.path)} />
      </Table.Td>
      <Table.Td>
        <Group gap={6} wrap="nowrap">
          <Text size="sm" fw={500} truncate="end" title={plainName(item.path)}>
            <Name value={item.name} />
          </Text>
          {!folder && (
            <Badge
              size="xs"
              variant="outline"
              color="gray.7"
              style={{ flex: 'none' }}
              data-testid="slim-row-category"
              visibleFrom="xs"
            >
              {t(`categories.${item.category}`)}
            </Badge>
          )}
        </Group>
        <Text size="xs" c="dimmed" truncate="end" title={plainName(item.path)}>
          <Name value={extra ?? parentOf(item.path)} />
        </Text>
      </Table.Td>
      <Table.Td w={110} style={{ whiteSpace: 'nowrap' }}>
        <Text size="sm">{formatBytes(item.size)}</Text>
      </Table.Td>
      {/* Phones: the name and size only. */}
      <Table.Td w={170} visibleFrom="xs">
        <Text size="sm">{date(item.modified)}</Text>
      </Table.Td>
    </Table.Tr>
  );
}

/** One result list: category tabs, sort, smart filter, selection, paging and deletion. */
function ResultList({ task, kind }: { task: CleanupTask; kind: CleanupKind }) {
  const { t } = useTranslation('slim');
  const [category, setCategory] = useState<CleanupCategory>('all');
  const [sortBy, setSortBy] = useState<'size' | 'date'>('size');
  const [order, setOrder] = useState<'asc' | 'desc'>('desc');
  const [page, setPage] = useState(1);
  const [data, setData] = useState<AnyPage | null>(null);
  const [loading, setLoading] = useState(true);
  const [failure, setFailure] = useState<string | null>(null);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  /**
   * The smart filter over the whole result: every copy but the newest (or oldest) of each group on
   * every page, not only those loaded. Set only while the result spans more than this page.
   */
  const [smart, setSmart] = useState<'newest' | 'oldest' | null>(null);

  useEffect(() => {
    let live = true;
    setLoading(true);
    slimApi
      .list(kind, {
        task_id: task.task_id,
        page,
        page_size: PAGE_SIZES.cleanup,
        ...(kind === 'empty_folders' ? {} : { category }),
        sort_by: sortBy,
        order,
      })
      .then(
        (res) => {
          if (!live) return;
          setData(res);
          setFailure(null);
        },
        (err: unknown) => {
          if (live) setFailure(err instanceof Error ? err.message : String(err));
        },
      )
      .finally(() => {
        if (live) setLoading(false);
      });
    return () => {
      live = false;
    };
    // The task object changes after every deletion: reload then too.
  }, [kind, task, category, sortBy, order, page]);

  const items = useMemo(() => itemsOf(kind, data), [kind, data]);
  const groups = useMemo(
    () => (kind === 'duplicate_files' && data ? (data as DuplicateFilesPage).items : []),
    [kind, data],
  );
  const dupes = kind === 'duplicate_files' && data ? (data as DuplicateFilesPage) : null;
  const pages = data ? Math.max(1, Math.ceil((data.limited ? data.visible_total : data.total) / data.page_size)) : 1;
  // In smart mode this page shows the filter's picks; the selection itself is the whole result.
  const checked = useMemo(() => (smart ? new Set(smartSelect(groups, smart)) : selected), [smart, groups, selected]);
  const toggle = (id: string) => {
    // Changing one pick by hand leaves the whole-result filter for a selection on this page.
    const next = new Set(checked);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setSmart(null);
    setSelected(next);
  };
  const select = (ids: Iterable<string>) => {
    setSmart(null);
    setSelected(new Set(ids));
  };
  const visibleSelected = items.filter((i) => checked.has(i.id));

  /**
   * The smart filter: when the whole result is on this page (or all the caller may see is), it
   * picks the copies here; otherwise it selects every surplus copy of the whole result, whose
   * total the selection line shows before anything is deleted.
   */
  const applySmart = (keep: 'newest' | 'oldest') => {
    if (!dupes || dupes.limited || pages === 1) {
      select(smartSelect(groups, keep));
      return;
    }
    setSelected(new Set());
    setSmart(keep);
  };
  const smartKeeps = (keep: 'newest' | 'oldest') => t(keep === 'newest' ? 'smartKeepsNewest' : 'smartKeepsOldest');
  // Where deletions go to the cloud's trash, the spec's restore window (30 days) is said before they happen.
  const restoreNote = task.has_trash ? t('common:restoreWithin', { days: LIMITS.restoreDeletedDays }) : '';

  const removeSmart = async (keep: 'newest' | 'oldest') => {
    if (!dupes) return;
    const n = dupes.surplus_count;
    const message = [
      task.has_trash ? t('confirmTrash', { count: n }) : t('confirmPermanent', { count: n }),
      smartKeeps(keep),
      restoreNote,
    ]
      .filter(Boolean)
      .join(' ');
    if ((await confirm({ title: t('confirmTitle'), message, danger: true })) !== 'yes') return;
    setSmart(null);
    await deleteResults(
      kind,
      { task_id: task.task_id, all: true, keep, ...(category !== 'all' ? { category } : {}) },
      n,
    ).catch(() => undefined);
  };

  const removeSelected = async () => {
    if (smart) return removeSmart(smart);
    const ids = visibleSelected.map((i) => i.id);
    if (ids.length === 0) return;
    const whole = kind === 'duplicate_files' ? wholeGroups(groups, selected) : [];
    const message = [
      task.has_trash ? t('confirmTrash', { count: ids.length }) : t('confirmPermanent', { count: ids.length }),
      whole.length > 0 ? t('confirmAllCopies', { count: whole.length }) : '',
      restoreNote,
    ]
      .filter(Boolean)
      .join(' ');
    if ((await confirm({ title: t('confirmTitle'), message, danger: true })) !== 'yes') return;
    setSelected(new Set());
    await deleteResults(
      kind,
      { task_id: task.task_id, ids, ...(whole.length > 0 ? { delete_all_copies: true } : {}) },
      ids.length,
    ).catch(() => undefined);
  };

  const removeAll = async () => {
    if (!data) return;
    const n = data.total;
    const message = [
      kind === 'duplicate_files' ? t('confirmAllDuplicates', { count: n }) : t('confirmAll', { count: n }),
      restoreNote,
    ]
      .filter(Boolean)
      .join(' ');
    if ((await confirm({ title: t('confirmTitle'), message, danger: true })) !== 'yes') return;
    select([]);
    await deleteResults(
      kind,
      {
        task_id: task.task_id,
        all: true,
        ...(kind !== 'empty_folders' && category !== 'all' ? { category } : {}),
        ...(kind === 'duplicate_files' ? { keep: 'newest' as const } : {}),
      },
      dupes ? dupes.surplus_count : n,
    ).catch(() => undefined);
  };

  return (
    <Stack gap="sm" data-testid={`slim-list-${kind}`}>
      {kind !== 'empty_folders' && (
        <Tabs
          value={category}
          onChange={(v) => (setCategory((v ?? 'all') as CleanupCategory), setPage(1), setSmart(null))}
        >
          <Tabs.List>
            {CATEGORY_TABS.map((c) => (
              <Tabs.Tab key={c} value={c}>
                {t(`categories.${c}`)}
              </Tabs.Tab>
            ))}
          </Tabs.List>
        </Tabs>
      )}
      <Group justify="space-between" wrap="wrap" gap="xs">
        <Group gap="xs">
          <SegmentedControl
            size="xs"
            value={sortBy}
            onChange={(v) => (setSortBy(v as 'size' | 'date'), setPage(1))}
            data={[
              { value: 'size', label: t('sortSize') },
              { value: 'date', label: t('sortDate') },
            ]}
            aria-label={t('sortBy')}
          />
          <Tooltip label={order === 'asc' ? t('ascending') : t('descending')}>
            <ActionIcon
              variant="default"
              onClick={() => (setOrder(order === 'asc' ? 'desc' : 'asc'), setPage(1))}
              aria-label={order === 'asc' ? t('ascending') : t('descending')}
              data-testid="slim-order"
              data-order={order}
            >
              {order === 'asc' ? <IconSortAscending size={16} /> : <IconSortDescending size={16} />}
            </ActionIcon>
          </Tooltip>
          {kind === 'duplicate_files' && (
            <Menu position="bottom-start">
              <Menu.Target>
                <Button size="xs" variant="light" leftSection={<IconFilter size={14} aria-hidden />}>
                  {t('smartFilter')}
                </Button>
              </Menu.Target>
              <Menu.Dropdown>
                <Menu.Item onClick={() => applySmart('newest')}>{t('keepNewest')}</Menu.Item>
                <Menu.Item onClick={() => applySmart('oldest')}>{t('keepOldest')}</Menu.Item>
              </Menu.Dropdown>
            </Menu>
          )}
          <Button size="xs" variant="subtle" onClick={() => select(items.map((i) => i.id))}>
            {t('selectPage')}
          </Button>
          {(smart !== null || selected.size > 0) && (
            <Button size="xs" variant="subtle" onClick={() => select([])}>
              {t('clearSelection')}
            </Button>
          )}
        </Group>
        <Group gap="xs">
          <Text size="sm" c="dimmed" data-testid="slim-selected" data-scope={smart ? 'all-pages' : 'page'}>
            {smart && dupes
              ? `${t('selectedAll', { count: dupes.surplus_count, size: formatBytes(dupes.surplus_size) })} ${smartKeeps(smart)}`
              : t('selected', { n: visibleSelected.length, size: formatBytes(selectedBytes(items, checked)) })}
          </Text>
          <Button
            size="xs"
            color="red"
            leftSection={<IconTrash size={14} aria-hidden />}
            disabled={smart ? !dupes || dupes.surplus_count === 0 : visibleSelected.length === 0}
            onClick={() => void removeSelected()}
          >
            {t('deleteSelected')}
          </Button>
          <Button
            size="xs"
            color="red"
            variant="outline"
            disabled={!data || data.total === 0}
            // Deleting all is a paid feature: a free user gets the Upgrade modal.
            onClick={() => void (data?.limited ? askUpgrade() : removeAll())}
          >
            {kind === 'duplicate_files' ? t('deleteAllKeepNewest') : t('deleteAll')}
          </Button>
        </Group>
      </Group>
      {data?.limited && (
        <Alert variant="light" color="yellow" data-testid="slim-limited">
          {t('limited', { visible: data.visible_total, total: data.total })}{' '}
          <Anchor component={Link} to="/buy">
            {t('upgrade')}
          </Anchor>
        </Alert>
      )}
      {failure && (
        <Alert color="red" variant="light">
          {failure}
        </Alert>
      )}
      {loading && !data ? (
        <Loader size="sm" />
      ) : items.length === 0 ? (
        <Text c="dimmed" size="sm" data-testid="slim-nothing">
          {t('empty')}
        </Text>
      ) : kind === 'duplicate_files' ? (
        <Stack gap="sm">
          {groups.map((g) => (
            <Card key={g.group_id} withBorder padding="xs" data-testid="slim-group">
              <Group gap="xs" mb={4}>
                <Badge variant="light">{t(`categories.${g.category}`)}</Badge>
                <Text size="sm" c="dimmed">
                  {t('group', { count: g.files.length, size: formatBytes(g.size) })}
                </Text>
              </Group>
              <Table verticalSpacing={4}>
                <Table.Tbody>
                  {g.files.map((f) => (
                    <ItemRow key={f.id} item={f} checked={checked.has(f.id)} onToggle={() => toggle(f.id)} />
                  ))}
                </Table.Tbody>
              </Table>
            </Card>
          ))}
        </Stack>
      ) : (
        <Table verticalSpacing={4} highlightOnHover>
          <Table.Thead>
            <Table.Tr>
              <Table.Th />
              <Table.Th>{t('columns.name')}</Table.Th>
              <Table.Th>{t('columns.size')}</Table.Th>
              <Table.Th visibleFrom="xs">{t('columns.modified')}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {kind === 'empty_folders'
              ? (data as EmptyFoldersPage).items.map((f) => (
                  <ItemRow
                    key={f.id}
                    item={f}
                    checked={checked.has(f.id)}
                    onToggle={() => toggle(f.id)}
                    folder
                    extra={
                      f.nested_count > 0
                        ? `${parentOf(f.path)} · ${t('nested', { count: f.nested_count })}`
                        : parentOf(f.path)
                    }
                  />
                ))
              : items.map((f) => (
                  <ItemRow key={f.id} item={f} checked={checked.has(f.id)} onToggle={() => toggle(f.id)} />
                ))}
          </Table.Tbody>
        </Table>
      )}
      {pages > 1 && <Pagination value={page} onChange={setPage} total={pages} size="sm" />}
    </Stack>
  );
}

/** The results of a finished scan: one tab per scan mode with its counts, and its list. */
export function Results({ task }: { task: CleanupTask }) {
  const { t } = useTranslation('slim');
  const modes = modesOf(task.imode);
  const [kind, setKind] = useState<CleanupKind>(modes[0] ?? 'duplicate_files');
  const summary: Record<CleanupKind, string> = {
    duplicate_files: t('summary.duplicate', {
      count: task.duplicate.count,
      groups: task.duplicate.group_count,
      size: formatBytes(task.duplicate.size),
    }),
    large_files: t('summary.large', { count: task.large.count, size: formatBytes(task.large.size) }),
    empty_folders: t('summary.empty', { count: task.empty.count }),
  };
  return (
    <Stack gap="sm" data-testid="slim-results">
      <Tabs value={kind} onChange={(v) => v && setKind(v as CleanupKind)} variant="pills">
        <Tabs.List>
          {modes.map((m) => (
            <Tabs.Tab
              key={m}
              value={m}
              rightSection={
                <Badge size="sm" variant="light">
                  {countOf(task, m)}
                </Badge>
              }
            >
              {t(`modes.${m}`)}
            </Tabs.Tab>
          ))}
        </Tabs.List>
      </Tabs>
      <Text size="sm" data-testid="slim-summary">
        {summary[kind]}
      </Text>
      <ResultList key={`${task.task_id}:${kind}`} task={task} kind={kind} />
    </Stack>
  );
}
