import { Alert, Button, Group, Loader, Modal, Progress, ScrollArea, Stack, Text, Title } from '@mantine/core';
import { formatBytes, formatDate, type DesktopUpdateState } from '@skyferry/contract';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { desktopBridge } from './desktop.ts';
import { openUpgrade } from './store.ts';

/**
 * The Upgrade modal of the desktop client (spec sections 2 and 4): opening it starts the check;
 * it shows loading, latest, info (version, size, release date, notes), downloading, downloaded and
 * retry as the desktop client reports them. Update Now downloads, and the client installs the
 * downloaded version at once (on Mac the modal closes then). Cancel hides it; under a mandatory
 * upgrade the download goes on.
 */
export function UpgradeDialog({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const { t } = useTranslation('shell');
  const [state, setState] = useState<DesktopUpdateState>({ step: 'loading' });
  const bridge = desktopBridge();

  useEffect(() => {
    if (!opened || !bridge) return;
    const off = bridge.onUpdateState?.(setState);
    void Promise.resolve(bridge.checkForUpdates?.())
      .then((s) => s && setState(s))
      .catch(() => setState({ step: 'latest', version: bridge.version ?? '' }));
    return off;
  }, [opened, bridge]);

  useEffect(() => {
    if (opened && state.step === 'downloaded' && bridge?.platform === 'darwin') onClose();
  }, [opened, state.step, bridge, onClose]);

  const download = () => void bridge?.downloadUpdate?.().catch(() => undefined);
  const cancel = () => {
    if (state.step === 'info' && state.mandatory) download();
    onClose();
  };

  return (
    <Modal opened={opened} onClose={cancel} title={t('user.checkUpdates')} centered data-testid="upgrade-dialog">
      <Stack gap="sm" data-step={state.step} data-testid="upgrade-step">
        {(state.step === 'loading' || state.step === 'idle') && (
          <Group gap="sm">
            <Loader size="sm" />
            <Text size="sm">{t('upgrade.loading')}</Text>
          </Group>
        )}
        {state.step === 'latest' && <Text size="sm">{t('upgrade.latest', { version: state.version })}</Text>}
        {state.step === 'info' && (
          <>
            <Title order={3} size="h5">
              {t('upgrade.available', { version: state.version })}
            </Title>
            {state.mandatory && (
              <Alert color="orange" variant="light" data-testid="upgrade-mandatory">
                {t('upgrade.mandatory')}
              </Alert>
            )}
            <Group gap="lg">
              {state.size !== null && <Text size="sm">{t('upgrade.size', { size: formatBytes(state.size) })}</Text>}
              {state.releaseDate && (
                <Text size="sm">{t('upgrade.released', { date: formatDate(new Date(state.releaseDate)) })}</Text>
              )}
            </Group>
            {state.notes && (
              <>
                <Text size="sm" fw={600}>
                  {t('upgrade.notes')}
                </Text>
                {/* Release notes are shown as text: the feed is not trusted with markup. */}
                <ScrollArea.Autosize mah={200}>
                  <Text size="sm" style={{ whiteSpace: 'pre-wrap' }} data-testid="upgrade-notes">
                    {state.notes}
                  </Text>
                </ScrollArea.Autosize>
              </>
            )}
          </>
        )}
        {state.step === 'downloading' && (
          <>
            <Text size="sm">{t('upgrade.downloading', { version: state.version })}</Text>
            <Progress value={state.percent} aria-label={t('upgrade.downloading', { version: state.version })} />
            <Text size="xs" c="dimmed">
              {state.percent}%
            </Text>
          </>
        )}
        {state.step === 'downloaded' && <Text size="sm">{t('upgrade.downloaded', { version: state.version })}</Text>}
        {state.step === 'retry' && (
          <Text size="sm" c="red.9" role="alert">
            {t('upgrade.failed')}
          </Text>
        )}
        <Group justify="flex-end" gap="xs">
          {(state.step === 'info' || state.step === 'retry' || state.step === 'downloading') && (
            <Button variant="default" onClick={cancel}>
              {t('upgrade.cancel')}
            </Button>
          )}
          {state.step === 'info' && <Button onClick={download}>{t('upgrade.updateNow')}</Button>}
          {state.step === 'retry' && <Button onClick={download}>{t('upgrade.retry')}</Button>}
          {(state.step === 'latest' || state.step === 'downloaded') && (
            <Button variant="default" onClick={onClose}>
              {t('upgrade.close')}
            </Button>
          )}
        </Group>
      </Stack>
    </Modal>
  );
}

/** A mandatory upgrade the desktop client found (its check at start) opens the modal. */
export function useMandatoryUpgrade(): void {
  useEffect(() => {
    const bridge = desktopBridge();
    return bridge?.onUpdateState?.((s) => {
      if (s.step === 'info' && s.mandatory) openUpgrade();
    });
  }, []);
}
