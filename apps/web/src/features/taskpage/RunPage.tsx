import {
  Alert,
  Badge,
  Button,
  Center,
  Group,
  Loader,
  Menu,
  Paper,
  SimpleGrid,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { IconDownload, IconRefresh, IconSearch } from '@tabler/icons-react';
import {
  formatBytes,
  type RunFile,
  type RunFileOutcome,
  type RunFilesData,
  type RunLogFormat,
  type ServerTask,
  type TaskRun,
} from '@skyferry/contract';
import type { TFunction } from 'i18next';
import { useCallback, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate, useParams } from 'react-router';
import { showError } from '../messages/store.ts';
import { formatDuration } from '../tasks/format.ts';
import { retryFailed } from './actions.ts';
import { downloadRunLog, taskPageApi } from './api.ts';
import { isNotFound, messageOf, useRepeat } from './hooks.ts';
import { OUTCOME_COLOURS, canRetry, notListed, runTabs } from './model.ts';
import { BackLink, OutcomeBadge, when } from './parts.tsx';

/** Files a page of the details shows. */
export const FILES_PAGE = 100;
/** How long the search waits after the last key before it asks. */
const SEARCH_DELAY_MS = 300;
const RUN_REFRESH_MS = 2500;

type Tab = RunFileOutcome | 'all';

/** Why a file was skipped, failed or conflicted, in words where the app has them. */
function reasonText(file: RunFile, t: TFunction): string | null {
  if (!file.reason) return null;
  if (file.outcome === 'conflict') return t(`taskpage:conflictRules.${file.reason}`, { defaultValue: file.reason });
  if (file.outcome === 'size_differs') return t('taskpage:run.targetSize', { size: formatBytes(Number(file.reason)) });
  if (file.outcome === 'content_differs') return t('taskpage:run.byHash', { hash: file.reason });
  return t(`transfer:reasons.${file.reason}`, {
    defaultValue: t(`transmission:reasons.${file.reason}`, { defaultValue: file.reason }),
  });
}

/**
 * A run's details (/tasks/:id/runs/:runId): its figures, and its files by outcome (added,
 * updated, deleted, conflicts with both names, skipped and failed with the reason; a
 * verification's differences), paged and searchable by name; Retry failed for the task's latest
 * run; the log to download as text or JSON lines.
 */
export function RunPage() {
  const { t } = useTranslation('taskpage');
  const navigate = useNavigate();
  const { id = '', runId = '' } = useParams();
  const [task, setTask] = useState<ServerTask | null>(null);
  const [run, setRun] = useState<TaskRun | null>(null);
  const [missing, setMissing] = useState(false);
  const [tab, setTab] = useState<Tab | null>(null);
  const [search, setSearch] = useState('');
  const [query, setQuery] = useState('');
  /** Cursors of the pages before this one (the first page has none). */
  const [cursors, setCursors] = useState<Array<number | undefined>>([undefined]);
  const [files, setFiles] = useState<RunFilesData | null>(null);
  const [filesError, setFilesError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const loadRun = useCallback(async () => {
    try {
      const [tk, r] = await Promise.all([taskPageApi.task(id), taskPageApi.run(id, runId)]);
      setTask(tk);
      setRun(r);
    } catch (err) {
      if (isNotFound(err)) setMissing(true);
      else setFilesError(messageOf(err));
    }
  }, [id, runId]);

  useEffect(() => {
    setMissing(false);
    setTab(null);
    void loadRun();
  }, [loadRun]);

  useRepeat(run?.outcome === null, loadRun, RUN_REFRESH_MS);

  // The first tab: the first outcome the run has files of (conflicts and failures come first).
  const tabs = run ? runTabs(run) : [];
  const current: Tab = tab ?? tabs[0] ?? 'all';

  useEffect(() => {
    const timer = setTimeout(() => setQuery(search.trim()), SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
  }, [search]);
  useEffect(() => setCursors([undefined]), [current, query, runId]);

  const cursor = cursors[cursors.length - 1];
  // The run's figures change while it goes; its rows are read again on a page change or when it ends.
  const runLoaded = run !== null;
  const runOutcome = run?.outcome;
  useEffect(() => {
    if (!runLoaded) return;
    let live = true;
    setFiles(null);
    setFilesError(null);
    taskPageApi
      .files(id, runId, { outcome: current === 'all' ? undefined : current, q: query, cursor, limit: FILES_PAGE })
      .then(
        (data) => live && setFiles(data),
        (err: unknown) => live && setFilesError(messageOf(err)),
      );
    return () => {
      live = false;
    };
  }, [id, runId, current, query, cursor, runLoaded, runOutcome]);

  const back = <BackLink to={`/tasks/${encodeURIComponent(id)}`} label={t('backToTask')} testId="back-to-task" />;
  if (missing) {
    return (
      <Stack gap="md">
        {back}
        <Alert color="orange" variant="light" data-testid="run-missing">
          {t('run.notFound')}
        </Alert>
      </Stack>
    );
  }
  if (!run || !task) {
    return (
      <Stack gap="md">
        {back}
        <Center py="xl">
          <Loader size="sm" role="status" aria-label={t('loading')} />
        </Center>
      </Stack>
    );
  }

  // A run stopped for space or traffic (states 6 and 10) left its files not done: Retry runs them.
  const left = (run.counts.failed ?? 0) + (run.counts.not_done ?? 0);
  const retryable = run.kind === 'transfer' && run.is_latest && left > 0 && canRetry(task.state);
  const retry = async () => {
    setBusy(true);
    try {
      if (await retryFailed(task)) navigate(`/tasks/${encodeURIComponent(task.id)}`);
    } finally {
      setBusy(false);
    }
  };
  const download = (format: RunLogFormat) =>
    downloadRunLog(task.id, run.id, format).catch((err: unknown) => showError({ message: messageOf(err) }));
  const pageStart = (cursors.length - 1) * FILES_PAGE;
  const hidden = notListed(run, current);

  return (
    <Stack gap="md" data-testid="run-page" data-run-id={run.id}>
      {back}
      <Stack gap={6}>
        <Title order={2} data-testid="run-title" style={{ overflowWrap: 'anywhere' }}>
          {t(run.kind === 'verify' ? 'run.verifyTitle' : 'run.title', { time: when(run.started_at) })}
        </Title>
        <Text size="sm" c="dimmed" style={{ overflowWrap: 'anywhere' }}>
          {task.task_name}
        </Text>
        <Group gap={6} wrap="wrap">
          <OutcomeBadge run={run} />
          <Badge size="sm" variant="outline" color="gray.7" data-testid="run-trigger">
            {run.kind === 'verify' ? t('history.verify') : t(`triggers.${run.trigger}`)}
          </Badge>
        </Group>
      </Stack>
      <Paper withBorder p="md" radius="md">
        <SimpleGrid cols={{ base: 1, xs: 2, md: 4 }} spacing="sm" verticalSpacing="xs">
          <Figure label={t('history.started')} value={when(run.started_at)} />
          <Figure label={t('history.ended')} value={when(run.finished_at)} />
          <Figure label={t('history.duration')} value={formatDuration(run.duration)} />
          {run.kind === 'verify' ? (
            <Figure label={t('history.comparedLabel')} value={String(run.compared)} testId="run-compared" />
          ) : (
            <Figure
              label={t('history.moved')}
              value={`${formatBytes(run.bytes)} · ${formatBytes(run.speed)}/s`}
              testId="run-moved"
            />
          )}
        </SimpleGrid>
      </Paper>
      {run.outcome === null && (
        <Alert color="blue" variant="light">
          {t('run.running')}
        </Alert>
      )}
      {run.error && (
        <Alert color="red" variant="light" data-testid="run-error">
          {t('run.error', { message: run.error.message })}
        </Alert>
      )}
      <Group gap="xs" wrap="wrap">
        {retryable && (
          <Button
            size="compact-sm"
            leftSection={<IconRefresh size={14} aria-hidden />}
            loading={busy}
            onClick={() => void retry()}
            data-testid="retry-failed"
          >
            {t('run.retryFailed')}
          </Button>
        )}
        <Menu position="bottom-start">
          <Menu.Target>
            <Button
              size="compact-sm"
              variant="light"
              leftSection={<IconDownload size={14} aria-hidden />}
              data-testid="download-log"
            >
              {t('run.download')}
            </Button>
          </Menu.Target>
          <Menu.Dropdown>
            <Menu.Item onClick={() => void download('text')} data-testid="download-text">
              {t('run.text')}
            </Menu.Item>
            <Menu.Item onClick={() => void download('jsonl')} data-testid="download-jsonl">
              {t('run.jsonl')}
            </Menu.Item>
          </Menu.Dropdown>
        </Menu>
      </Group>
      <Group gap={6} wrap="wrap" role="tablist" aria-label={t('run.outcomes')} data-testid="run-tabs">
        {(['all', ...tabs] as Tab[]).map((o) => (
          <Button
            key={o}
            size="compact-sm"
            variant={o === current ? 'filled' : 'default'}
            color={o === 'failed' || o === 'not_done' ? 'red.9' : undefined}
            role="tab"
            aria-selected={o === current}
            onClick={() => setTab(o)}
            data-testid={`tab-${o}`}
          >
            {o === 'all'
              ? t('run.all', { count: Object.values(run.counts).reduce((s, n) => s + (n ?? 0), 0) })
              : `${t(`fileOutcomes.${o}`)} (${run.counts[o] ?? 0})`}
          </Button>
        ))}
      </Group>
      <TextInput
        leftSection={<IconSearch size={14} aria-hidden />}
        placeholder={t('run.search')}
        aria-label={t('run.search')}
        value={search}
        onChange={(e) => setSearch(e.currentTarget.value)}
        maxLength={200}
        data-testid="run-search"
      />
      {filesError && (
        <Alert color="red" variant="light">
          {filesError}
        </Alert>
      )}
      {!files && !filesError && (
        <Center py="md">
          <Loader size="sm" role="status" aria-label={t('loading')} />
        </Center>
      )}
      {files && files.items.length === 0 && (
        <Text size="sm" c="dimmed" data-testid="no-files">
          {t('run.noFiles')}
        </Text>
      )}
      {files && files.items.length > 0 && (
        <Stack gap={4} component="ul" style={{ listStyle: 'none', margin: 0, padding: 0 }} data-testid="run-files">
          {files.items.map((f, i) => (
            <li key={`${pageStart + i}:${f.path}`}>
              <FileLine file={f} showOutcome={current === 'all'} />
            </li>
          ))}
        </Stack>
      )}
      {files && (cursors.length > 1 || files.next_cursor !== null) && (
        <Group justify="space-between" wrap="wrap" gap="xs">
          <Button
            size="compact-sm"
            variant="default"
            disabled={cursors.length === 1}
            onClick={() => setCursors(cursors.slice(0, -1))}
            data-testid="files-previous"
          >
            {t('run.previous')}
          </Button>
          <Text size="xs" c="dimmed" data-testid="files-range">
            {files.total !== null
              ? t('run.range', { from: pageStart + 1, to: pageStart + files.items.length, total: files.total })
              : t('run.rangeOpen', { from: pageStart + 1, to: pageStart + files.items.length })}
          </Text>
          <Button
            size="compact-sm"
            variant="default"
            disabled={files.next_cursor === null}
            onClick={() => files.next_cursor !== null && setCursors([...cursors, files.next_cursor])}
            data-testid="files-next"
          >
            {t('run.next')}
          </Button>
        </Group>
      )}
      {hidden > 0 && !query && (
        <Text size="xs" c="dimmed" data-testid="files-not-listed">
          {t('run.notListed', { count: hidden })}
        </Text>
      )}
    </Stack>
  );
}

function Figure({ label, value, testId }: { label: string; value: string; testId?: string }) {
  return (
    <Stack gap={0}>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text size="sm" data-testid={testId}>
        {value}
      </Text>
    </Stack>
  );
}

/** One file of a run: its path (a conflict also names the other version), size and why. */
function FileLine({ file, showOutcome }: { file: RunFile; showOutcome: boolean }) {
  const { t } = useTranslation('taskpage');
  const reason = reasonText(file, t);
  return (
    <Paper
      withBorder
      px="sm"
      py={6}
      radius="sm"
      data-testid="run-file"
      data-outcome={file.outcome}
      data-path={file.path}
    >
      <Stack gap={2}>
        <Group gap={6} wrap="nowrap" align="baseline" style={{ minWidth: 0 }}>
          {showOutcome && (
            <Badge
              size="xs"
              variant="outline"
              color={OUTCOME_BY_FILE[file.outcome] ?? 'gray.7'}
              style={{ flex: 'none' }}
            >
              {t(`fileOutcomes.${file.outcome}`)}
            </Badge>
          )}
          <Text size="sm" style={{ overflowWrap: 'anywhere', minWidth: 0 }} data-testid="run-file-path">
            {file.path}
          </Text>
        </Group>
        {file.other_path && (
          <Text size="xs" c="dimmed" style={{ overflowWrap: 'anywhere' }} data-testid="run-file-other">
            {file.outcome === 'conflict'
              ? t('run.otherVersion', { path: file.other_path })
              : t('run.onTarget', { path: file.other_path })}
          </Text>
        )}
        <Group gap="sm" wrap="wrap">
          {file.outcome !== 'conflict' && (
            <Text size="xs" c="dimmed">
              {t(file.side === 'source' ? 'run.onSourceSide' : 'run.onTargetSide')}
            </Text>
          )}
          {file.size !== null && file.kind === 'file' && (
            <Text size="xs" c="dimmed">
              {formatBytes(file.size)}
            </Text>
          )}
          {reason && (
            <Text size="xs" data-testid="run-file-reason">
              {reason}
            </Text>
          )}
          {file.message && (
            <Text size="xs" c="red.9" style={{ overflowWrap: 'anywhere' }}>
              {file.message}
            </Text>
          )}
        </Group>
      </Stack>
    </Paper>
  );
}

const OUTCOME_BY_FILE: Partial<Record<RunFileOutcome, string>> = {
  added: OUTCOME_COLOURS.success,
  updated: 'blue.9',
  deleted: 'orange.9',
  conflict: 'grape.9',
  skipped: 'gray.7',
  failed: 'red.9',
  not_done: 'red.9',
};
