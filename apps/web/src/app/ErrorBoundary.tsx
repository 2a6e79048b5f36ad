import { Alert, Button, Center, Stack, Text, Title } from '@mantine/core';
import { Component, useEffect, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { DEFAULT_ROUTE } from '../features/session/navigation.ts';
import { ERROR_REASONS, errorPath } from '../features/startup/startup.ts';

/** What a failed part of the page shows instead: the error page's words and a reload. */
function Failed() {
  const { t } = useTranslation('startup');
  return (
    <Alert color="red" variant="light" title={t('error.title')} role="alert" data-testid="render-error">
      <Stack gap="xs" align="flex-start">
        <Text size="sm">{t('error.generic')}</Text>
        <Button size="xs" variant="light" onClick={() => window.location.reload()}>
          {t('error.retry')}
        </Button>
      </Stack>
    </Alert>
  );
}

/**
 * A part of the page that could not load because the connection went (its chunk or styles could not
 * be fetched): the offline page's words at the offline page's address, and a fresh start at the
 * default route once the connection is back (the failed part is fetched again with the page).
 */
function Offline() {
  const { t } = useTranslation('startup');
  useEffect(() => {
    window.history.replaceState(null, '', errorPath(ERROR_REASONS.offline));
    const back = () => window.location.replace(DEFAULT_ROUTE);
    window.addEventListener('online', back);
    return () => window.removeEventListener('online', back);
  }, []);
  return (
    <Center mih="50vh" p="md" data-testid="render-offline">
      <Stack align="center" gap="sm" maw={440} ta="center">
        <Title order={1} size="h2">
          {t('offline.title')}
        </Title>
        <Text c="dimmed">{t('offline.subtitle')}</Text>
      </Stack>
    </Center>
  );
}

/**
 * Catches what a part of the page throws while rendering (a screen's chunk that no longer exists
 * after an update, a bug), so the rest of the page stays. Give it a `key` that changes when the
 * user goes elsewhere, so that the next screen gets a fresh try.
 */
export class ErrorBoundary extends Component<{ children: ReactNode }, { failed: boolean; offline: boolean }> {
  override state = { failed: false, offline: false };

  static getDerivedStateFromError(): { failed: boolean; offline: boolean } {
    // Failing while the browser knows it is offline: a part could not be fetched, not a bug.
    return { failed: true, offline: typeof navigator !== 'undefined' && navigator.onLine === false };
  }

  override componentDidCatch(error: unknown): void {
    console.error('render failed', error);
  }

  override render(): ReactNode {
    if (!this.state.failed) return this.props.children;
    return this.state.offline ? <Offline /> : <Failed />;
  }
}
