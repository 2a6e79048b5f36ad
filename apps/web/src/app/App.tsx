import { DirectionProvider, MantineProvider, useDirection } from '@mantine/core';
import { useMediaQuery } from '@mantine/hooks';
import { useEffect, useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { BrowserRouter } from 'react-router';
import { isRtl, toLanguage } from '@skyferry/contract';
import { configureSessionClient } from '../features/session/client-setup.ts';
import { patchSettings } from '../features/session/store.ts';
import { ErrorBoundary } from './ErrorBoundary.tsx';
import { AppRoutes } from './routes.tsx';
import { PHONE_SCREEN } from '../lib/media.ts';
import { cssVariablesResolver, localizedTheme } from './theme.ts';
import './global.css';

configureSessionClient();

/** Keeps Mantine's direction and the settings' language in step with i18next (Arabic is right-to-left). */
function LanguageSync() {
  const { i18n } = useTranslation();
  const { setDirection } = useDirection();
  const lang = toLanguage(i18n.language) ?? 'en';
  useEffect(() => {
    setDirection(isRtl(lang) ? 'rtl' : 'ltr');
    patchSettings({ language: lang });
  }, [lang, setDirection]);
  return null;
}

export function App() {
  const { t } = useTranslation();
  const fullScreenDialogs = useMediaQuery(PHONE_SCREEN, false, { getInitialValueInEffect: false });
  const theme = useMemo(() => localizedTheme(t('common:close'), fullScreenDialogs), [t, fullScreenDialogs]);
  return (
    <DirectionProvider>
      <LanguageSync />
      <MantineProvider theme={theme} defaultColorScheme="light" cssVariablesResolver={cssVariablesResolver}>
        <ErrorBoundary>
          <BrowserRouter>
            <AppRoutes />
          </BrowserRouter>
        </ErrorBoundary>
      </MantineProvider>
    </DirectionProvider>
  );
}
