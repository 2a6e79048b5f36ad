import { Alert, Button, Stack, Text } from '@mantine/core';
import { Component, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';

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
 * Catches what a part of the page throws while rendering (a screen's chunk that no longer exists
 * after an update, a bug), so the rest of the page stays. Give it a `key` that changes when the
 * user goes elsewhere, so that the next screen gets a fresh try.
 */
export class ErrorBoundary extends Component<{ children: ReactNode }, { failed: boolean }> {
  override state = { failed: false };

  static getDerivedStateFromError(): { failed: boolean } {
    return { failed: true };
  }

  override componentDidCatch(error: unknown): void {
    console.error('render failed', error);
  }

  override render(): ReactNode {
    return this.state.failed ? <Failed /> : this.props.children;
  }
}
