import { Button, Group, LoadingOverlay, Modal, Portal, Text } from '@mantine/core';
import { IconAlertCircle } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { closeDialog, useMessages, type DialogRequest } from './store.ts';

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

function MessageDialog({ request }: { request: DialogRequest }) {
  const { t } = useTranslation('messages');
  const finish = (run: () => void) => {
    closeDialog(request.id);
    run();
  };
  if (request.kind === 'confirm') {
    const o = request.options;
    const cancel = () => finish(() => request.resolve('no'));
    return (
      <Modal opened onClose={cancel} title={o.title ?? t('confirm.title')} centered size="sm">
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
            color={o.danger ? 'red' : undefined}
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
        opened
        onClose={close}
        centered
        size="sm"
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
      opened
      onClose={cancel}
      centered
      size="sm"
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
