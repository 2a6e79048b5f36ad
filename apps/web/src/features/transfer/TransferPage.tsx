import {
  Alert,
  Anchor,
  Box,
  Button,
  Checkbox,
  Group,
  Paper,
  Radio,
  SegmentedControl,
  NativeSelect,
  SimpleGrid,
  Stack,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core';
import { IconArrowsExchange, IconCalendarTime, IconTransfer } from '@tabler/icons-react';
import {
  Code,
  FILTER_CATEGORIES,
  GOOGLE_DOCS_MODES,
  canRead,
  canWrite,
  formatBytes,
  normalizePath,
  plainName,
  scheduleFromDialog,
  type CreateTaskBody,
  type FilterCategory,
  type GoogleDocsMode,
  type InsufficientSpaceData,
  type TaskPlan,
} from '@skyferry/contract';
import { useCallback, useEffect, useState } from 'react';
import { ApiRequestError } from '../../api/client.ts';
import { useTranslation } from 'react-i18next';
import { openLogin } from '../auth/login.ts';
import { useGuideSteps } from '../guide/steps.ts';
import { confirm, showReauthorize, withLoading } from '../messages/store.ts';
import { toast } from '../messages/toast.ts';
import { ScheduleDialog } from '../schedule/ScheduleDialog.tsx';
import { describeSchedule } from '../schedule/model.ts';
import { loadClouds } from '../session/actions.ts';
import { selectBillingOn, selectLoggedIn, selectPaid, selectVisibleClouds, useSession } from '../session/store.ts';
import type { Cloud } from '../session/types.ts';
import { cloudLabel, isPhotosCloud, kindName } from '../shell/clouds.ts';
import { openConnectCloud, openTransmissionList } from '../shell/store.ts';
import { tasksApi } from '../tasks/api.ts';
import { askRenew, askUpgrade, reportTaskError, taskErrorKind } from '../tasks/errors.ts';
import { noteTransferUsed } from '../buy/close-survey.ts';
import { transmission } from '../tasks/store.ts';
import { CloudTree } from './CloudTree.tsx';
import { SameNamePolicyField, SyncModeField } from './fields.tsx';
import {
  MEDIA_CATEGORIES,
  chosenFilter,
  createWithPrompts,
  formProblem,
  isSameCloud,
  mayDelete,
  offersGoogleDocs,
  taskBody,
  usesSameNamePolicy,
  type FilterChoice,
  type TransferKind,
} from './model.ts';
import { PreviewDialog } from './PreviewDialog.tsx';
import { patchForm, useTransferForm } from './store.ts';

interface Preview {
  plan: TaskPlan;
  body: CreateTaskBody;
}

/** The filter's sizes and ages: rclone's values, typed as rclone takes them. */
const FILTER_VALUES = [
  { field: 'minSize', label: 'filterMinSize', placeholder: '100k', testId: 'filter-min-size' },
  { field: 'maxSize', label: 'filterMaxSize', placeholder: '1G', testId: 'filter-max-size' },
  { field: 'minAge', label: 'filterMinAge', placeholder: '7d', testId: 'filter-min-age' },
  { field: 'maxAge', label: 'filterMaxAge', placeholder: '2024-01-31', testId: 'filter-max-age' },
] as const;

/** What the filter section's live count shows: counting, the files that match, or why it cannot tell. */
type FilterCount = { state: 'counting' } | { state: 'done'; files: number } | { state: 'error'; message: string };

/**
 * The files the chosen filter lets through, from a dry run of the task as the form stands (asked
 * again a moment after the form changes; an answer to an older form is dropped). Null while the
 * form has no filter or cannot be planned yet.
 */
function useFilterCount(body: CreateTaskBody | null): FilterCount | null {
  const key = body ? JSON.stringify(body) : null;
  const [count, setCount] = useState<{ key: string; value: FilterCount } | null>(null);
  useEffect(() => {
    if (!key) return;
    let live = true;
    const timer = setTimeout(() => {
      setCount({ key, value: { state: 'counting' } });
      const planned = JSON.parse(key) as CreateTaskBody;
      tasksApi.create({ ...planned, dry_run: true, plan_query: { limit: 1 } }).then(
        (data) => {
          if (live) setCount({ key, value: { state: 'done', files: data.plan?.files_matched ?? 0 } });
        },
        (err: unknown) => {
          if (live)
            setCount({ key, value: { state: 'error', message: err instanceof ApiRequestError ? err.message : '' } });
        },
      );
    }, 500);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [key]);
  if (!key) return null;
  return count?.key === key ? count.value : { state: 'counting' };
}

/** The clouds of a chooser, with a "Choose a cloud drive" line while none is chosen. */
function cloudOptions(clouds: readonly Cloud[], chosen: string | null, prompt: string) {
  const options = clouds.map((c) => ({
    value: c.id,
    label: `${plainName(cloudLabel(c))} · ${kindName(c.cloud_name)}`,
  }));
  return chosen ? options : [{ value: '', label: prompt, disabled: true }, ...options];
}

/**
 * The Transfer (/transfer, migrate) and Sync (/sync) screens: the source cloud and what to take
 * from it, the target cloud and folder, the sync mode, the same-name policy, the file filter and
 * the schedule; then a preview of the server's dry run, and the task.
 */
export function TransferPage({ kind }: { kind: TransferKind }) {
  const { t } = useTranslation('transfer');
  const form = useTransferForm(kind);
  const clouds = useSession(selectVisibleClouds);
  const cloudsLoaded = useSession((s) => s.cloudsLoaded);
  const loggedIn = useSession(selectLoggedIn);
  const paid = useSession(selectPaid);
  const billingOn = useSession(selectBillingOn);
  const licenceEnded = useSession((s) => s.user.info?.type === 1);
  const [scheduleOpen, setScheduleOpen] = useState(false);
  const [preview, setPreview] = useState<Preview | null>(null);
  const [starting, setStarting] = useState(false);
  const patch = useCallback((p: Parameters<typeof patchForm>[1]) => patchForm(kind, p), [kind]);

  // The tips point at the cloud choosers, so they wait until there is a cloud to choose (a first
  // visit shows the shell's add-a-drive chain instead).
  useGuideSteps(
    kind === 'migrate' ? ['migrate-1', 'migrate-2'] : ['sync-1', 'sync-2'],
    cloudsLoaded && clouds.length > 0,
  );

  const readable = clouds.filter((c) => canRead(c.flags));
  const writable = clouds.filter((c) => canWrite(c.flags));
  const source = clouds.find((c) => c.id === form.sourceCloudId) ?? null;
  const target = clouds.find((c) => c.id === form.targetCloudId) ?? null;
  const photosTarget = target !== null && isPhotosCloud(target);

  // Clouds that went away are dropped; a first visit starts from the first two clouds.
  useEffect(() => {
    if (!cloudsLoaded) return;
    const p: Parameters<typeof patchForm>[1] = {};
    if (form.sourceCloudId && !clouds.some((c) => c.id === form.sourceCloudId)) {
      p.sourceCloudId = null;
      p.source = [];
    }
    if (form.targetCloudId && !clouds.some((c) => c.id === form.targetCloudId)) {
      p.targetCloudId = null;
      p.targetPath = '/';
    }
    const sourceId = p.sourceCloudId === null ? null : form.sourceCloudId;
    const targetId = p.targetCloudId === null ? null : form.targetCloudId;
    if (!sourceId && readable[0]) p.sourceCloudId = readable[0].id;
    const chosenSource = p.sourceCloudId ?? sourceId;
    if (!targetId) {
      const other = writable.find((c) => c.id !== chosenSource);
      if (other) p.targetCloudId = other.id;
    }
    if (Object.keys(p).length > 0) patch(p);
  }, [cloudsLoaded, clouds, form.sourceCloudId, form.targetCloudId, readable, writable, patch]);

  const onTreeError = useCallback(
    (cloud: Cloud | null) => async (code: number) => {
      if (code !== Code.CLOUD_AUTH_EXPIRED || !cloud) return;
      void loadClouds().catch(() => undefined);
      if (await showReauthorize({ cloudName: cloudLabel(cloud) })) openConnectCloud(cloud.cloud_name);
    },
    [],
  );

  const start = async () => {
    if (!loggedIn) {
      toast.info(t('loginFirst'));
      await openLogin();
      return;
    }
    if (billingOn && !paid) {
      // A licence that has ended is answered as the server's 4011001 would be (Renew); none at all goes to /buy.
      if (licenceEnded) {
        await askRenew();
        return;
      }
      await askUpgrade();
      return;
    }
    const problem = formProblem(form, kind, clouds);
    if (problem) {
      toast.warning(t(`problems.${problem}`));
      return;
    }
    if (isSameCloud(form) && (await confirm({ message: t('confirmSameCloud') })) !== 'yes') return;
    const body = taskBody(form, kind, clouds);
    try {
      const data = await withLoading(tasksApi.create({ ...body, dry_run: true }));
      if (data.plan) setPreview({ plan: data.plan, body });
    } catch (err) {
      await reportTaskError(err, form.sourceCloudId ?? undefined);
    }
  };

  const create = async (deletionsConfirmed: boolean) => {
    if (!preview) return;
    setStarting(true);
    try {
      const body = deletionsConfirmed ? { ...preview.body, confirm_deletions: true } : preview.body;
      const created = await createWithPrompts(
        body,
        {
          sameCloud: async () => (await confirm({ message: t('confirmSameCloud') })) === 'yes',
          insufficientSpace: async (data: InsufficientSpaceData | null) =>
            (await confirm({
              message: t(kind === 'migrate' ? 'insufficientSpaceMigrate' : 'insufficientSpaceSync', {
                cloud: data?.cloud_name ?? '',
                needed: formatBytes(data?.needed ?? 0),
                available: formatBytes(data?.available ?? 0),
              }),
              yesLabel: t('continue'),
              noLabel: t('preview.cancel'),
            })) === 'yes',
          deletions: async (data) =>
            (await confirm({
              message: t(data?.side === 'source' ? 'confirmManyDeletionsSource' : 'confirmManyDeletions', {
                count: data?.count ?? 0,
                total: data?.total ?? 0,
              }),
              danger: true,
            })) === 'yes',
        },
        tasksApi.create,
      );
      if (!created?.task) return;
      if (!form.schedule) transmission.watch(created.task.id);
      setPreview(null);
      noteTransferUsed();
      toast.success(form.schedule ? t('scheduledCreated') : t('created'));
      openTransmissionList();
    } catch (err) {
      // Paywall answers close the transfer modal before showing their message.
      const why = taskErrorKind(err);
      if (why === 'license_expired' || why === 'traffic_insufficient' || why === 'premium_required') setPreview(null);
      await reportTaskError(err, form.targetCloudId ?? undefined);
    } finally {
      setStarting(false);
    }
  };

  const filterChoice: FilterChoice = form.filterMode;
  const categoryAllowed = (c: FilterCategory) => !photosTarget || MEDIA_CATEGORIES.includes(c);
  const filterCount = useFilterCount(
    loggedIn && chosenFilter(form) !== null && formProblem(form, kind, clouds) === null
      ? taskBody(form, kind, clouds)
      : null,
  );

  return (
    <Stack gap="lg" maw={1100} data-testid={`${kind}-page`}>
      <Box>
        <Title order={2}>{kind === 'migrate' ? t('titleMigrate') : t('titleSync')}</Title>
        <Text c="dimmed" size="sm">
          {kind === 'migrate' ? t('subtitleMigrate') : t('subtitleSync')}
        </Text>
      </Box>
      {cloudsLoaded && clouds.length === 0 && (
        <Alert variant="light" data-testid="transfer-no-clouds">
          <Group justify="space-between">
            <Text size="sm">{t('noClouds')}</Text>
            <Button size="xs" onClick={() => openConnectCloud()}>
              {t('addCloud')}
            </Button>
          </Group>
        </Alert>
      )}
      <SimpleGrid cols={{ base: 1, md: 2 }} spacing="md" data-guide={kind === 'sync' ? 'sync-1' : undefined}>
        <Paper withBorder p="md" radius="md" data-guide={kind === 'migrate' ? 'migrate-1' : undefined}>
          <Stack gap="sm">
            <Title order={3} size="h5">
              {kind === 'migrate' ? t('sourceMigrate') : t('sourceSync')}
            </Title>
            <NativeSelect
              label={t('sourceCloud')}
              data={cloudOptions(readable, form.sourceCloudId, t('chooseCloud'))}
              value={form.sourceCloudId ?? ''}
              onChange={(e) => patch({ sourceCloudId: e.currentTarget.value || null, source: [] })}
              data-testid="source-cloud"
            />
            {source && (
              <CloudTree
                key={source.id}
                cloudId={source.id}
                rootLabel={t('tree.root', { name: cloudLabel(source) })}
                mode={kind === 'migrate' ? 'multi' : 'folder'}
                picked={form.source}
                onPickedChange={(next) => patch({ source: next })}
                folder={form.source[0]?.path}
                onFolderChange={(path) => patch({ source: [{ path, type: 0 }] })}
                onError={(code) => void onTreeError(source)(code)}
                label={t('sourceTree')}
                testId="source-tree"
              />
            )}
            <Group justify="space-between" gap="xs">
              <Text size="sm" data-testid="source-summary">
                {form.source.length === 0
                  ? t('nothingSelected')
                  : kind === 'migrate'
                    ? t('selectedCount', { count: form.source.length })
                    : t('syncFolder', { path: form.source[0]?.path ?? '/' })}
              </Text>
              {form.source.length > 0 && (
                <Anchor component="button" type="button" size="sm" onClick={() => patch({ source: [] })}>
                  {t('clearSelection')}
                </Anchor>
              )}
            </Group>
          </Stack>
        </Paper>
        <Paper withBorder p="md" radius="md" data-guide={kind === 'migrate' ? 'migrate-2' : undefined}>
          <Stack gap="sm">
            <Title order={3} size="h5">
              {t('target')}
            </Title>
            <NativeSelect
              label={t('targetCloud')}
              data={cloudOptions(writable, form.targetCloudId, t('chooseCloud'))}
              value={form.targetCloudId ?? ''}
              onChange={(e) => patch({ targetCloudId: e.currentTarget.value || null, targetPath: '/' })}
              data-testid="target-cloud"
            />
            <TextInput
              label={t('targetPath')}
              description={t('targetPathHint')}
              value={form.targetPath}
              onChange={(e) => patch({ targetPath: e.currentTarget.value })}
              onBlur={() => patch({ targetPath: normalizePath(form.targetPath.trim() || '/') })}
              spellCheck={false}
              data-testid="target-path"
            />
            {target && (
              <CloudTree
                key={target.id}
                cloudId={target.id}
                rootLabel={t('tree.root', { name: cloudLabel(target) })}
                mode="folder"
                folder={normalizePath(form.targetPath || '/')}
                onFolderChange={(path) => patch({ targetPath: path })}
                onError={(code) => void onTreeError(target)(code)}
                label={t('targetTree')}
                testId="target-tree"
              />
            )}
            {photosTarget && (
              <Alert variant="light" color="blue" data-testid="photos-note">
                {t('photosOnly')}
              </Alert>
            )}
          </Stack>
        </Paper>
      </SimpleGrid>

      <Paper withBorder p="md" radius="md">
        <Stack gap="md">
          {kind === 'sync' && (
            <SyncModeField
              value={form.syncMode}
              onChange={(syncMode) => patch({ syncMode })}
              testIdPrefix="sync-mode"
              guide="sync-2"
            />
          )}
          {usesSameNamePolicy(kind, form.syncMode) ? (
            <SameNamePolicyField
              value={form.sameNamePolicy}
              onChange={(sameNamePolicy) => patch({ sameNamePolicy })}
              testIdPrefix="policy"
            />
          ) : (
            <Text size="sm" c="dimmed" data-testid="policy-not-used">
              {form.syncMode === 'mirror' ? t('mirrorIgnoresPolicy') : t('twoWayConflicts')}
            </Text>
          )}
          {offersGoogleDocs(source) && (
            <Radio.Group
              label={t('googleDocs.label')}
              description={t('googleDocs.hint')}
              value={form.googleDocs}
              onChange={(v) => patch({ googleDocs: v as GoogleDocsMode })}
              data-testid="google-docs"
            >
              <Group gap="md" mt="xs">
                {GOOGLE_DOCS_MODES.map((m) => (
                  <Radio key={m} value={m} label={t(`googleDocs.${m}`)} data-testid={`google-docs-${m}`} />
                ))}
              </Group>
            </Radio.Group>
          )}
          <Stack gap="xs">
            <Text size="sm" fw={500} id={`${kind}-filter-label`}>
              {t('filter')}
            </Text>
            <SegmentedControl
              value={filterChoice}
              onChange={(v) => patch({ filterMode: v as FilterChoice })}
              aria-labelledby={`${kind}-filter-label`}
              data={[
                { value: 'none', label: t('settings:defaults.filterNone') },
                { value: 'include', label: t('settings:defaults.filterInclude') },
                { value: 'exclude', label: t('settings:defaults.filterExclude') },
              ]}
              style={{ alignSelf: 'flex-start' }}
              data-testid="filter-mode"
            />
            <Checkbox.Group
              value={form.filterCategories}
              onChange={(v) => patch({ filterCategories: v as FilterCategory[] })}
              aria-labelledby={`${kind}-filter-label`}
            >
              <Group gap="md">
                {FILTER_CATEGORIES.map((c) => (
                  <Checkbox
                    key={c}
                    value={c}
                    label={t(`settings:defaults.categories.${c}`)}
                    disabled={filterChoice === 'none' || !categoryAllowed(c)}
                    data-testid={`filter-${c}`}
                  />
                ))}
              </Group>
            </Checkbox.Group>
            {filterChoice !== 'none' && form.filterCategories.length === 0 && (
              <Text size="xs" c="dimmed">
                {t('filterPickHint')}
              </Text>
            )}
            <Textarea
              label={t('filterRules')}
              description={t('filterRulesHint')}
              placeholder={'- *.tmp\n- /cache/\n+ *.jpg'}
              value={form.filterRules}
              onChange={(e) => patch({ filterRules: e.currentTarget.value })}
              minRows={3}
              spellCheck={false}
              styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
              data-testid="filter-rules"
            />
            <SimpleGrid cols={{ base: 2, sm: 4 }} spacing="sm">
              {FILTER_VALUES.map(({ field, label, placeholder, testId }) => (
                <TextInput
                  key={field}
                  label={t(label)}
                  placeholder={placeholder}
                  value={form[field]}
                  onChange={(e) => patch({ [field]: e.currentTarget.value })}
                  data-testid={testId}
                />
              ))}
            </SimpleGrid>
            <Text size="xs" c="dimmed">
              {t('filterUnitsHint')}
            </Text>
            {filterCount && (
              <Text
                size="sm"
                c={filterCount.state === 'error' ? 'red' : undefined}
                aria-live="polite"
                data-testid="filter-count"
              >
                {filterCount.state === 'counting'
                  ? t('filterCounting')
                  : filterCount.state === 'done'
                    ? t('filterMatches', { count: filterCount.files })
                    : filterCount.message || t('filterCountFailed')}
              </Text>
            )}
          </Stack>
          <Stack gap="xs">
            <Text size="sm" fw={500} id={`${kind}-schedule-label`}>
              {t('schedule')}
            </Text>
            <Group gap="sm">
              <SegmentedControl
                value={form.schedule ? 'scheduled' : 'now'}
                onChange={(v) => {
                  if (v === 'now') patch({ schedule: null });
                  else setScheduleOpen(true);
                }}
                aria-labelledby={`${kind}-schedule-label`}
                data={[
                  { value: 'now', label: t('scheduleNow') },
                  { value: 'scheduled', label: t('scheduleLater') },
                ]}
                data-testid="schedule-mode"
              />
              {form.schedule && (
                <>
                  <Text size="sm" data-testid="schedule-chosen">
                    {describeSchedule(scheduleFromDialog(form.schedule), t)}
                  </Text>
                  <Button
                    size="compact-sm"
                    variant="subtle"
                    leftSection={<IconCalendarTime size={14} aria-hidden />}
                    onClick={() => setScheduleOpen(true)}
                  >
                    {t('scheduleChange')}
                  </Button>
                </>
              )}
            </Group>
          </Stack>
        </Stack>
      </Paper>

      <Group>
        <Button
          size="md"
          leftSection={
            kind === 'migrate' ? <IconTransfer size={18} aria-hidden /> : <IconArrowsExchange size={18} aria-hidden />
          }
          onClick={() => void start()}
          data-testid="transfer-start"
        >
          {kind === 'migrate' ? t('startMigrate') : t('startSync')}
        </Button>
      </Group>

      <ScheduleDialog
        opened={scheduleOpen}
        onClose={() => setScheduleOpen(false)}
        onSubmit={(value) => patch({ schedule: value })}
        initial={form.schedule}
      />
      <PreviewDialog
        opened={preview !== null}
        plan={preview?.plan ?? null}
        body={preview?.body ?? null}
        confirmDeletions={mayDelete(kind, form.syncMode)}
        twoWay={kind === 'sync' && form.syncMode === 'two_way'}
        sourceLabel={source ? cloudLabel(source) : ''}
        targetLabel={target ? cloudLabel(target) : ''}
        scheduled={form.schedule !== null}
        starting={starting}
        onClose={() => setPreview(null)}
        onStart={(confirmed) => void create(confirmed)}
      />
    </Stack>
  );
}
