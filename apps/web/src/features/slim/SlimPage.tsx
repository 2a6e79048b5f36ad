import { Alert, Box, Button, Checkbox, Group, Radio, Select, Stack, Text, TextInput, Title } from '@mantine/core';
import { IconEraser } from '@tabler/icons-react';
import {
  LARGE_FILE_THRESHOLD_DEFAULT,
  canSlim,
  formatBytes,
  formatDateTime,
  type CleanupKind,
  type CleanupTask,
} from '@skyferry/contract';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { useGuideSteps } from '../guide/steps.ts';
import { confirm } from '../messages/store.ts';
import { selectVisibleClouds, useSession } from '../session/store.ts';
import type { Cloud } from '../session/types.ts';
import { CloudIcon } from '../shell/CloudIcon.tsx';
import { cloudLabel, kindName } from '../shell/clouds.ts';
import { slimApi } from './api.ts';
import { MODES, THRESHOLDS, imodeOf } from './model.ts';
import { resetSlim, startScan, useSlim } from './store.ts';
import { Name } from '../../lib/Name.tsx';

/** The folder as the API wants it: absolute, without a trailing slash ("Photos/" -> "/Photos"). */
export function folderPath(input: string): string {
  const parts = input
    .trim()
    .split('/')
    .filter((p) => p !== '');
  return `/${parts.join('/')}`;
}

/** Whether a cloud can be scanned, or why not. */
export function slimAvailability(cloud: Cloud): 'ok' | 'not_supported' | 'expired' {
  if (!canSlim(cloud.flags)) return 'not_supported';
  if (cloud.status !== 'authorized') return 'expired';
  return 'ok';
}

/**
 * Free up storage (/slim): choose a cloud drive, a folder and the scan modes (empty folders,
 * duplicate files, large files with a threshold), then scan; or open the cloud's last results.
 */
export function SlimPage() {
  const { t } = useTranslation('slim');
  const navigate = useNavigate();
  const clouds = useSession(selectVisibleClouds);
  const error = useSlim((s) => s.error);
  const firstOk = clouds.find((c) => slimAvailability(c) === 'ok');
  const [cloudId, setCloudId] = useState<string | null>(firstOk?.id ?? null);
  const [path, setPath] = useState('/');
  const [modes, setModes] = useState<CleanupKind[]>(MODES.map((m) => m.kind));
  const [threshold, setThreshold] = useState(LARGE_FILE_THRESHOLD_DEFAULT);
  const [latest, setLatest] = useState<CleanupTask | null>(null);
  const [busy, setBusy] = useState(false);

  // The clean-up state resets whenever the screen is entered (spec section 4).
  useEffect(() => resetSlim(), []);
  useGuideSteps(['menu-slimming']);

  useEffect(() => {
    if (!cloudId && firstOk) setCloudId(firstOk.id);
  }, [cloudId, firstOk]);

  useEffect(() => {
    setLatest(null);
    if (!cloudId) return;
    let live = true;
    slimApi.latest(cloudId).then(
      (task) => {
        if (live) setLatest(task);
      },
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [cloudId]);

  const cloud = clouds.find((c) => c.id === cloudId);
  const canStart = cloud !== undefined && slimAvailability(cloud) === 'ok' && modes.length > 0 && !busy;

  const start = async () => {
    if (!cloud) return;
    if (latest && (await confirm({ message: t('rescanConfirm') })) !== 'yes') return;
    setBusy(true);
    try {
      const taskId = await startScan({
        cloud_id: cloud.id,
        path: folderPath(path),
        imode: imodeOf(modes),
        large_threshold: threshold,
      });
      navigate(`/slim/explore?task_id=${encodeURIComponent(taskId)}`);
    } catch {
      // the error shows below the form
    } finally {
      setBusy(false);
    }
  };

  return (
    <Stack gap="lg" maw={760} data-testid="slim-page">
      <Box>
        <Title order={2}>{t('title')}</Title>
        <Text c="dimmed" size="sm">
          {t('subtitle')}
        </Text>
      </Box>
      {clouds.length === 0 ? (
        <Alert variant="light">{t('noClouds')}</Alert>
      ) : (
        <Radio.Group label={t('chooseCloud')} value={cloudId} onChange={setCloudId}>
          <Stack gap="xs" mt="xs">
            {clouds.map((c) => {
              const why = slimAvailability(c);
              return (
                <Radio
                  key={c.id}
                  value={c.id}
                  disabled={why !== 'ok'}
                  label={
                    <Group gap="xs" wrap="nowrap">
                      <CloudIcon kind={c.cloud_name} size={18} />
                      <Name value={cloudLabel(c)} />
                      <Text span size="xs" c="dimmed">
                        {kindName(c.cloud_name)}
                      </Text>
                    </Group>
                  }
                  description={why === 'ok' ? undefined : t(why === 'expired' ? 'expired' : 'notSupported')}
                />
              );
            })}
          </Stack>
        </Radio.Group>
      )}
      <TextInput
        label={t('folder')}
        value={path}
        onChange={(e) => setPath(e.currentTarget.value)}
        maw={420}
        spellCheck={false}
      />
      <Checkbox.Group
        label={t('modesLabel')}
        value={modes}
        onChange={(v) => setModes(v as CleanupKind[])}
        error={modes.length === 0 ? t('pickMode') : undefined}
      >
        <Stack gap="xs" mt="xs">
          {MODES.map((m) => (
            <Checkbox key={m.kind} value={m.kind} label={t(`modes.${m.kind}`)} description={t(`modeHints.${m.kind}`)} />
          ))}
        </Stack>
      </Checkbox.Group>
      {modes.includes('large_files') && (
        <Select
          label={t('threshold')}
          maw={220}
          value={String(threshold)}
          onChange={(v) => v && setThreshold(Number(v))}
          data={THRESHOLDS.map((n) => ({ value: String(n), label: formatBytes(n) }))}
          allowDeselect={false}
        />
      )}
      {error && (
        <Alert color="red" variant="light">
          {error}
        </Alert>
      )}
      <Group>
        <Button
          leftSection={<IconEraser size={18} aria-hidden />}
          onClick={() => void start()}
          disabled={!canStart}
          loading={busy}
        >
          {latest ? t('rescan') : t('start')}
        </Button>
        {latest && (
          <Button
            variant="default"
            onClick={() => navigate(`/slim/explore?task_id=${encodeURIComponent(latest.task_id)}`)}
          >
            {t('viewResults')}
          </Button>
        )}
      </Group>
      {latest && (
        <Text size="sm" c="dimmed" data-testid="slim-last-scan">
          {t('lastScan', { date: formatDateTime(latest.created_at) })}
        </Text>
      )}
    </Stack>
  );
}
