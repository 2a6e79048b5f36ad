import {
  Alert,
  Badge,
  Button,
  Center,
  Group,
  Loader,
  Modal,
  Pagination,
  ScrollArea,
  SegmentedControl,
  Stack,
  Table,
  Text,
} from '@mantine/core';
import { IconAlertTriangle } from '@tabler/icons-react';
import {
  formatBytes,
  type CreateTaskBody,
  type PlanAction,
  type PlanItemView,
  type PlanQuery,
  type TaskPlan,
} from '@skyferry/contract';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { tasksApi } from '../tasks/api.ts';
import { Name } from '../../lib/Name.tsx';

/** Plan rows browsed per page. */
export const PREVIEW_PAGE = 50;
/** Deletions listed in the confirmation. */
export const DELETIONS_LISTED = 1000;

export const SUMMARY_ACTIONS = ['copy', 'update', 'delete', 'skip', 'conflict'] as const;
type Filter = PlanAction | 'all';

/** Asks the server for a page of the plan (a dry run with plan_query); default: POST /api/tasks. */
export type PlanAsk = (query: PlanQuery) => Promise<TaskPlan | null>;

/** Whether the first answer holds every item, so pages can be cut locally. */
export function planComplete(plan: TaskPlan): boolean {
  return plan.items.length >= plan.total_items;
}

/**
 * A page of a plan's items: cut from the items already here when the plan came whole, else asked
 * of the server (a dry run with plan_query).
 */
export async function planItemsPage(
  plan: TaskPlan,
  body: CreateTaskBody | null,
  filter: Filter,
  page: number,
  pageSize: number = PREVIEW_PAGE,
  ask?: PlanAsk,
): Promise<{ items: PlanItemView[]; total: number }> {
  // The first items are here already: the unfiltered view starts without asking again.
  if (planComplete(plan) || (filter === 'all' && (page + 1) * pageSize <= plan.items.length)) {
    const all = filter === 'all' ? plan.items : plan.items.filter((i) => i.action === filter);
    return { items: all.slice(page * pageSize, (page + 1) * pageSize), total: all.length };
  }
  const query = { actions: filter === 'all' ? undefined : [filter], offset: page * pageSize, limit: pageSize };
  const next = ask
    ? await ask(query)
    : body
      ? (await tasksApi.create({ ...body, dry_run: true, plan_query: query })).plan
      : null;
  return { items: next?.items ?? [], total: next?.total_items ?? 0 };
}

export interface PreviewDialogProps {
  opened: boolean;
  plan: TaskPlan | null;
  /** The task body the plan was made for (paging asks the server again with it). */
  body: CreateTaskBody | null;
  /** Pages of a plan made otherwise (the edit of an existing task); instead of `body`. */
  ask?: PlanAsk;
  /** The start button's words (default Start, or Set task for a schedule). */
  startLabel?: string;
  /** The button that confirms the deletions (default Delete and sync, or Delete and set task). */
  confirmLabel?: string;
  /** Mirror and two-way syncs confirm their deletions with the list of what goes. */
  confirmDeletions: boolean;
  twoWay: boolean;
  sourceLabel: string;
  targetLabel: string;
  scheduled: boolean;
  starting: boolean;
  onClose: () => void;
  /** Start (or Set task for a schedule); `deletionsConfirmed` when the deletion list was confirmed. */
  onStart: (deletionsConfirmed: boolean) => void;
}

/**
 * The preview of a dry run: how many files and bytes will be copied, updated, deleted and
 * skipped, and the conflicts, with the list browsable by action; a sync that deletes asks first,
 * listing what will be deleted.
 */
export function PreviewDialog(props: PreviewDialogProps) {
  const { t } = useTranslation('transfer');
  const { plan, body, ask } = props;
  const [filter, setFilter] = useState<Filter>('all');
  const [page, setPage] = useState(0);
  const [rows, setRows] = useState<{ items: PlanItemView[]; total: number } | null>(null);
  const [rowsError, setRowsError] = useState<string | null>(null);
  const [step, setStep] = useState<'plan' | 'deletions'>('plan');
  const [deletions, setDeletions] = useState<{ items: PlanItemView[]; total: number } | null>(null);

  useEffect(() => {
    setFilter('all');
    setPage(0);
    setStep('plan');
    setDeletions(null);
  }, [plan]);

  useEffect(() => {
    if (!plan || (!body && !ask)) return;
    let live = true;
    setRows(null);
    setRowsError(null);
    planItemsPage(plan, body, filter, page, PREVIEW_PAGE, ask).then(
      (r) => live && setRows(r),
      (err: unknown) => live && setRowsError(err instanceof Error ? err.message : String(err)),
    );
    return () => {
      live = false;
    };
  }, [plan, body, ask, filter, page]);

  if (!plan || (!body && !ask)) return null;
  const s = plan.summary;
  const deletes = s.delete.count;

  const start = async () => {
    if (props.confirmDeletions && deletes > 0) {
      setStep('deletions');
      if (!deletions) {
        try {
          setDeletions(await planItemsPage(plan, body, 'delete', 0, DELETIONS_LISTED, ask));
        } catch (err) {
          setRowsError(err instanceof Error ? err.message : String(err));
        }
      }
      return;
    }
    props.onStart(false);
  };

  const filters: Filter[] = ['all', ...SUMMARY_ACTIONS.filter((a) => s[a].count > 0)];
  // The sides files are written to that keep no modification time (a plain WebDAV server, say).
  const timesLost = [
    ...(plan.times_kept.target ? [] : [props.targetLabel]),
    ...(props.twoWay && !plan.times_kept.source ? [props.sourceLabel] : []),
  ];
  const pages = rows ? Math.max(1, Math.ceil(rows.total / PREVIEW_PAGE)) : 1;
  const startLabel = props.startLabel ?? (props.scheduled ? t('preview.setTask') : t('preview.start'));

  return (
    <Modal opened={props.opened} onClose={props.onClose} title={t('preview.title')} size="xl" centered>
      {step === 'plan' ? (
        <Stack gap="md" data-testid="plan-preview">
          <Text size="sm" c="dimmed">
            {t('preview.route', { source: props.sourceLabel, target: props.targetLabel })}
          </Text>
          <Table withTableBorder fz="sm" data-testid="plan-summary">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('preview.action')}</Table.Th>
                <Table.Th ta="end">{t('preview.files')}</Table.Th>
                <Table.Th ta="end">{t('preview.bytes')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {SUMMARY_ACTIONS.map((a) => (
                <Table.Tr key={a} data-testid={`summary-${a}`} data-count={s[a].count} data-bytes={s[a].bytes}>
                  <Table.Td>{t(`actions.${a}`)}</Table.Td>
                  <Table.Td ta="end">{s[a].count}</Table.Td>
                  <Table.Td ta="end">{formatBytes(s[a].bytes)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          <Text size="sm" data-testid="plan-totals">
            {props.twoWay
              ? t('preview.totalsTwoWay', {
                  files: plan.files_to_transfer,
                  toTarget: formatBytes(plan.bytes_to_target),
                  toSource: formatBytes(plan.bytes_to_source),
                })
              : t('preview.totals', { files: plan.files_to_transfer, size: formatBytes(plan.bytes_to_target) })}
          </Text>
          {deletes > 0 && props.confirmDeletions && (
            <Alert color="orange" variant="light" icon={<IconAlertTriangle size={18} aria-hidden />}>
              {t('preview.deletesWarning', { count: deletes, size: formatBytes(s.delete.bytes) })}
            </Alert>
          )}
          {timesLost.map((cloud) => (
            <Alert key={cloud} color="blue" variant="light" data-testid="plan-times-not-kept">
              {t('preview.timesNotKept', { cloud })}
            </Alert>
          ))}
          {plan.errors.length > 0 && (
            <Alert color="red" variant="light" title={t('preview.errorsTitle')} data-testid="plan-errors">
              {plan.errors.slice(0, 5).map((e) => (
                <Text size="xs" key={`${e.side}:${e.path}`}>
                  <Name value={e.path} />: <Name value={e.message} />
                </Text>
              ))}
            </Alert>
          )}
          <SegmentedControl
            size="xs"
            value={filter}
            onChange={(v) => {
              setFilter(v as Filter);
              setPage(0);
            }}
            data={filters.map((f) => ({
              value: f,
              label:
                f === 'all' ? t('preview.all', { count: plan.total_items }) : `${t(`actions.${f}`)} (${s[f].count})`,
            }))}
            data-testid="plan-filter"
          />
          {rowsError && (
            <Alert color="red" variant="light">
              {rowsError}
            </Alert>
          )}
          {!rows && !rowsError && (
            <Center py="md">
              <Loader size="sm" role="status" aria-label={t('preview.loading')} />
            </Center>
          )}
          {rows && (
            <PlanItems items={rows.items} twoWay={props.twoWay} empty={t('preview.noItems')} testId="plan-items" />
          )}
          {pages > 1 && (
            <Group justify="center">
              <Pagination
                size="sm"
                total={pages}
                value={page + 1}
                onChange={(p) => setPage(p - 1)}
                data-testid="plan-pages"
              />
            </Group>
          )}
          <Group justify="flex-end" gap="sm">
            <Button variant="default" onClick={props.onClose}>
              {t('preview.cancel')}
            </Button>
            <Button onClick={() => void start()} loading={props.starting} data-testid="preview-start">
              {startLabel}
            </Button>
          </Group>
        </Stack>
      ) : (
        <Stack gap="md" data-testid="deletions-confirm">
          <Alert color="red" variant="light" icon={<IconAlertTriangle size={18} aria-hidden />}>
            {t('preview.deletionsQuestion', {
              count: deletes,
              size: formatBytes(s.delete.bytes),
              cloud: props.twoWay ? t('preview.bothSides') : props.targetLabel,
            })}
          </Alert>
          {!deletions ? (
            <Center py="md">
              <Loader size="sm" role="status" aria-label={t('preview.loading')} />
            </Center>
          ) : (
            <>
              <PlanItems items={deletions.items} twoWay={props.twoWay} empty="" testId="deletion-items" />
              {deletions.total > deletions.items.length && (
                <Text size="xs" c="dimmed">
                  {t('preview.andMore', { count: deletions.total - deletions.items.length })}
                </Text>
              )}
            </>
          )}
          <Group justify="flex-end" gap="sm">
            <Button variant="default" onClick={() => setStep('plan')}>
              {t('preview.back')}
            </Button>
            <Button
              color="red.9"
              onClick={() => props.onStart(true)}
              loading={props.starting}
              disabled={!deletions}
              data-testid="confirm-deletions"
            >
              {props.confirmLabel ?? (props.scheduled ? t('preview.deleteAndSetTask') : t('preview.deleteAndSync'))}
            </Button>
          </Group>
        </Stack>
      )}
    </Modal>
  );
}

function PlanItems({
  items,
  twoWay,
  empty,
  testId,
}: {
  items: PlanItemView[];
  twoWay: boolean;
  empty: string;
  testId: string;
}) {
  const { t } = useTranslation('transfer');
  if (items.length === 0) {
    return (
      <Text size="sm" c="dimmed">
        {empty}
      </Text>
    );
  }
  return (
    <ScrollArea.Autosize
      mah={300}
      type="auto"
      viewportProps={{
        tabIndex: 0,
        role: 'region',
        'aria-label': testId === 'deletion-items' ? t('actions.delete') : t('preview.title'),
      }}
    >
      <Table striped fz="xs" data-testid={testId}>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>{t('preview.action')}</Table.Th>
            <Table.Th>{t('preview.path')}</Table.Th>
            <Table.Th ta="end">{t('preview.size')}</Table.Th>
            <Table.Th>{t('preview.why')}</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {items.map((item, i) => {
            const path = item.side === 'source' ? item.source_path : item.target_path;
            return (
              <Table.Tr key={`${item.action}:${path}:${i}`} data-testid="plan-item" data-action={item.action}>
                <Table.Td>
                  <Badge size="xs" variant="outline" color={ACTION_COLOURS[item.action]}>
                    {t(`actions.${item.action}`)}
                  </Badge>
                  {twoWay && (
                    <Text span size="xs" c="dimmed" ms={4}>
                      {t(item.side === 'source' ? 'preview.onSource' : 'preview.onTarget')}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td style={{ wordBreak: 'break-all' }} className="sf-value" data-testid="plan-item-path">
                  <Name value={path} />
                </Table.Td>
                <Table.Td ta="end">{item.kind === 'file' ? formatBytes(item.size) : ''}</Table.Td>
                <Table.Td>{t(`reasons.${item.reason}`, { defaultValue: item.reason })}</Table.Td>
              </Table.Tr>
            );
          })}
        </Table.Tbody>
      </Table>
    </ScrollArea.Autosize>
  );
}

/** Outlined in shade 9 (7 for gray) so the small text keeps AA contrast on white. */
const ACTION_COLOURS: Record<PlanAction, string> = {
  copy: 'teal.9',
  update: 'blue.9',
  delete: 'red.9',
  skip: 'gray.7',
  conflict: 'grape.9',
  mkdir: 'gray.7',
};
