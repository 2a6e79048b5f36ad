import { Button, Checkbox, Group, Modal, Progress, Radio, Stack, Text } from '@mantine/core';
import { EXPORT_FOLDER_NAME, ExportStatus, type ExportStatusValue } from '@skyferry/contract';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Name } from '../../lib/Name.tsx';
import { saveExportSettings, usePreferences } from '../settings/preferences.ts';
import { selectVisibleClouds, useSession } from '../session/store.ts';
import { cloudLabel, kindName } from '../shell/clouds.ts';
import { desktopBridge } from '../shell/desktop.ts';
import { exportTargets, groupByAccount } from './model.ts';
import { performExport } from './perform.ts';
import { exportStore, useExportDialog, type ExportRequest } from './store.ts';

/** The Export to dialog (spec section 2), shown while an export request waits for a target. */
export function ExportDialog({ opened }: { opened: boolean }) {
  const request = useExportDialog((s) => s.request);
  return (
    <Modal
      opened={opened && request !== null}
      onClose={() => closeDialog()}
      title={<ExportTitle />}
      centered
      data-testid="export-dialog"
    >
      {request && <ExportBody key={request.files.map((f) => f.filename).join('\n')} request={request} />}
    </Modal>
  );
}

function ExportTitle() {
  const { t } = useTranslation('export');
  return <>{t('title')}</>;
}

/** Closes the dialog: a request not yet exported is cancelled; one under way goes on and resolves when done. */
function closeDialog(): void {
  const { request, results } = exportStore.getState();
  if (request && !results) request.resolve({ outcome: 'cancelled' });
  exportStore.setState({ request: null, results: null });
}

function ExportBody({ request }: { request: ExportRequest }) {
  const { t } = useTranslation('export');
  const stored = usePreferences((s) => s.exportSettings);
  const clouds = exportTargets(useSession(selectVisibleClouds), request.files);
  const desktop = useSession((s) => s.settings.runtime) !== 'web';
  const results = useExportDialog((s) => s.results);
  const [local, setLocal] = useState(stored.saveToLocal);
  const [cloudId, setCloudId] = useState(
    clouds.some((c) => c.id === stored.defaultCloudId) ? stored.defaultCloudId : '',
  );
  const [remember, setRemember] = useState(false);

  const chooseFolder = async () => {
    const path = await desktopBridge()?.chooseDirectory?.({ defaultPath: stored.localPath || undefined });
    if (path) saveExportSettings({ ...stored, localPath: path });
  };

  const start = () => {
    const target = { local, cloudId: cloudId || null };
    if (remember) {
      saveExportSettings({ ...stored, closeExportPanel: true, saveToLocal: local, defaultCloudId: cloudId });
    }
    const cloud = clouds.find((c) => c.id === cloudId);
    void performExport(request.files, target, cloud, (next) => {
      if (exportStore.getState().request === request) exportStore.setState({ results: next });
    }).then((final) => request.resolve({ outcome: 'exported', target, results: final }));
  };

  if (results) {
    const target = clouds.find((c) => c.id === cloudId);
    const done = results.every((r) => r.local !== ExportStatus.waiting && r.cloud !== ExportStatus.waiting);
    return (
      <Stack gap="sm" data-testid="export-progress">
        {results.map((r, i) => (
          <Stack key={`${i}:${r.filename}`} gap={4} data-testid="export-row">
            <Text size="sm" fw={500}>
              <Name value={r.filename} />
            </Text>
            {r.local !== undefined && (
              <Text size="xs" c="dimmed">
                {t('thisComputer')}: <StatusText status={r.local} />
              </Text>
            )}
            {r.cloud !== undefined && (
              <>
                <Text size="xs" c="dimmed">
                  <Name value={target ? cloudLabel(target) : ''} />: <StatusText status={r.cloud} />
                </Text>
                <Progress value={r.percent} size="sm" aria-label={r.filename} />
              </>
            )}
          </Stack>
        ))}
        <Group justify="flex-end">
          <Button variant={done ? 'filled' : 'default'} onClick={() => closeDialog()} data-testid="export-close">
            {t('close')}
          </Button>
        </Group>
      </Stack>
    );
  }

  return (
    <Stack gap="md">
      <Stack gap={6}>
        <Checkbox label={t('toLocal')} checked={local} onChange={(e) => setLocal(e.currentTarget.checked)} />
        {desktop && (
          <Group gap="sm" ms={30}>
            <Text size="sm" c="dimmed" data-testid="export-download-path">
              {t('downloadPath')}: {stored.localPath || t('defaultFolder')}
            </Text>
            <Button size="xs" variant="light" onClick={() => void chooseFolder()}>
              {t('chooseFolder')}
            </Button>
          </Group>
        )}
      </Stack>
      <Radio.Group label={t('clouds')} value={cloudId} onChange={setCloudId}>
        <Stack gap="xs" mt="xs">
          {clouds.length === 0 ? (
            <Text size="sm" c="dimmed" data-testid="export-no-cloud">
              {t('noCloud')}
            </Text>
          ) : (
            groupByAccount(clouds).map((g) => (
              <Stack key={g.kind} gap={4}>
                <Text size="xs" c="dimmed" fw={600}>
                  {kindName(g.kind)}
                </Text>
                {g.clouds.map((c) => (
                  <Radio
                    key={c.id}
                    value={c.id}
                    ms="sm"
                    label={
                      <>
                        <Name value={cloudLabel(c)} />
                        {c.cloud_account && c.cloud_account !== cloudLabel(c) ? (
                          <Text span size="xs" c="dimmed">
                            {' '}
                            (<Name value={c.cloud_account} />)
                          </Text>
                        ) : null}
                      </>
                    }
                  />
                ))}
              </Stack>
            ))
          )}
        </Stack>
      </Radio.Group>
      {cloudId && (
        <Text size="xs" c="dimmed">
          {t('folderNote', { folder: `/${EXPORT_FOLDER_NAME}` })}
        </Text>
      )}
      <Checkbox label={t('dontRemind')} checked={remember} onChange={(e) => setRemember(e.currentTarget.checked)} />
      <Group justify="flex-end">
        <Button variant="default" onClick={() => closeDialog()}>
          {t('cancel')}
        </Button>
        <Button disabled={!local && !cloudId} onClick={start} data-testid="export-submit">
          {t('export')}
        </Button>
      </Group>
    </Stack>
  );
}

function StatusText({ status }: { status: ExportStatusValue }) {
  const { t } = useTranslation('export');
  if (status === ExportStatus.success) return <>{t('completed')}</>;
  if (status === ExportStatus.failed) return <>{t('failed')}</>;
  return <>{t('waiting')}</>;
}
