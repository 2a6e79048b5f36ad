import { Button, Group, LoadingOverlay, Modal, Portal, Text } from '@mantine/core';
import { IconAlertCircle } from '@tabler/icons-react';
import { useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { closeDialog, messagesStore, useMessages, type DialogRequest } from './store.ts';

/** Renders the confirm, error and re-authorisation dialogs (one at a time) and the loading overlay. */
export function MessageHost() {
  const dialogs = useMessages((s) => s.dialogs);
  const loading = useMessages((s) => s.loading);
  const current = dialogs[0];
  return (
    <>
      {current && <MessageDialog key={current.id} request={current} />}
      {loading > 0 && (
        <Portal>
          <LoadingOverlay
            visible
            pos="fixed"
            zIndex={1000}
            overlayProps={{ blur: 1 }}
            loaderProps={{ 'aria-label': 'loading', role: 'progressbar' } as Record<string, string>}
            data-testid="global-loading"
          />
        </Portal>
      )}
    </>
  );
}

const EXIT_FALLBACK_MS = 400;

/**
 * One dialog. Closing first plays Mantine's close (which returns focus to where it was), then the
 * request leaves the queue so the next one can show.
 */
function MessageDialog({ request }: { request: DialogRequest }) {
  const { t } = useTranslation('messages');
  const [opened, setOpened] = useState(true);
  const settled = useRef(false);
  // Taken while rendering, before the dialog moves focus inside itself.
  const [returnTo] = useState(() => document.activeElement);
  const remove = () => {
    const wasQueued = messagesStore.getState().dialogs.some((d) => d.id === request.id);
    closeDialog(request.id);
    if (wasQueued && returnTo instanceof HTMLElement && returnTo.isConnected) returnTo.focus();
  };
  const finish = (run: () => void) => {
    if (settled.current) return;
    settled.current = true;
    setOpened(false);
    run();
    // Should the exit transition not report its end, the queue still moves on.
    setTimeout(remove, EXIT_FALLBACK_MS);
  };
  const common = {
    opened,
    onExitTransitionEnd: remove,
    returnFocus: false,
    centered: true,
    size: 'sm' as const,
  };
  if (request.kind === 'confirm') {
    const o = request.options;
    const cancel = () => finish(() => request.resolve('no'));
    return (
      <Modal {...common} onClose={cancel} title={o.title ?? t('confirm.title')}>
        <Text size="sm">{o.message}</Text>
        <Group justify="flex-end" mt="lg" gap="sm">
          {o.thirdLabel && (
            <Button variant="subtle" onClick={() => finish(() => request.resolve('third'))}>
              {o.thirdLabel}
            </Button>
          )}
          <Button variant="default" onClick={cancel}>
            {o.noLabel ?? t('confirm.no')}
          </Button>
          <Button
            color={o.danger ? 'red.9' : undefined}
            onClick={() => finish(() => request.resolve('yes'))}
            data-autofocus
          >
            {o.yesLabel ?? t('confirm.yes')}
          </Button>
        </Group>
      </Modal>
    );
  }
  if (request.kind === 'error') {
    const o = request.options;
    const close = () => finish(() => request.resolve());
    return (
      <Modal
        {...common}
        onClose={close}
        title={
          <Group gap={6}>
            <IconAlertCircle size={18} color="var(--mantine-color-red-6)" aria-hidden />
            {o.title ?? t('error.title')}
          </Group>
        }
      >
        <Text size="sm">{o.message}</Text>
        <Group justify="flex-end" mt="lg">
          <Button onClick={close} data-autofocus>
            {o.buttonLabel ?? t('error.ok')}
          </Button>
        </Group>
      </Modal>
    );
  }
  const o = request.options;
  const cancel = () => finish(() => request.resolve(false));
  return (
    <Modal
      {...common}
      onClose={cancel}
      title={o.cloudName ? t('reauth.titleNamed', { name: o.cloudName }) : t('reauth.title')}
    >
      <Text size="sm">{o.message ?? t('reauth.message')}</Text>
      <Group justify="flex-end" mt="lg" gap="sm">
        <Button variant="default" onClick={cancel}>
          {t('reauth.later')}
        </Button>
        <Button onClick={() => finish(() => request.resolve(true))} data-autofocus>
          {t('reauth.button')}
        </Button>
      </Group>
    </Modal>
  );
}
