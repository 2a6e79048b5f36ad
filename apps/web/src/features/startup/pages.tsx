import { Button, Center, Loader, Stack, Text, Title } from '@mantine/core';
import { IconAlertTriangle, IconWifiOff } from '@tabler/icons-react';
import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { Outlet, useLocation, useSearchParams } from 'react-router';
import { noticeForeignSignIn } from '../auth/login.ts';
import { clearSession, endServerSession, login } from '../session/actions.ts';
import { takeSignInNonce } from '../session/sign-in-nonce.ts';
import { DEFAULT_ROUTE, navigateTo, reloadTo } from '../session/navigation.ts';
import { useSession } from '../session/store.ts';
import type { AuthData } from '../session/types.ts';
import { ERROR_REASONS, runStartup } from './startup.ts';

function FullScreenLoader({ label }: { label: string }) {
  return (
    <Center h="100vh" role="status" aria-live="polite">
      <Stack align="center" gap="sm">
        <Loader aria-hidden />
        <Text size="sm" c="dimmed">
          {label}
        </Text>
      </Stack>
    </Center>
  );
}

/**
 * Runs start-up once per page load. What it holds renders at once: the sidebar layout shows its
 * header and menu while start-up runs and waits only with the screen (see AppLayout), the other
 * routes wait inside WhenStarted.
 */
export function StartupGate() {
  const started = useSession((s) => s.started);
  useEffect(() => {
    if (!started) void runStartup();
    // Only on mount: later start-ups are run by /loading and the network watcher.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  return <Outlet />;
}

/** The screens that need a session, full screen: a loader until start-up has finished. */
export function WhenStarted() {
  const { t } = useTranslation('startup');
  const started = useSession((s) => s.started);
  if (!started) return <FullScreenLoader label={t('starting')} />;
  return <Outlet />;
}

/** Where a screen appears inside the layout while start-up runs or its chunk loads. */
export function ScreenLoader() {
  const { t } = useTranslation('startup');
  return (
    <Center mih={200} role="status" aria-live="polite" data-testid="screen-loader">
      <Stack align="center" gap="sm">
        <Loader aria-hidden />
        <Text size="sm" c="dimmed">
          {t('loading')}
        </Text>
      </Stack>
    </Center>
  );
}

/** /loading: runs start-up again (after a light logout) and goes to the default route. */
export function LoadingPage() {
  const { t } = useTranslation('startup');
  useEffect(() => {
    let live = true;
    void runStartup().then((outcome) => {
      if (live && outcome === 'ready') navigateTo(DEFAULT_ROUTE, { replace: true });
    });
    return () => {
      live = false;
    };
  }, []);
  return <FullScreenLoader label={t('loading')} />;
}

/** /error: the reason comes from the `src` query. Offline shows "No internet" and waits for the network. */
export function ErrorPage() {
  const { t } = useTranslation('startup');
  const { t: tm } = useTranslation('messages');
  const [params] = useSearchParams();
  const online = useSession((s) => s.online);
  const reason = params.get('src') ?? '';
  const offline = reason === ERROR_REASONS.offline;
  useEffect(() => {
    document.title = `${offline ? t('offline.title') : t('error.title')} · Skyferry`;
    return () => {
      document.title = 'Skyferry';
    };
  }, [offline, t]);
  return (
    <Center mih="100vh" p="md" component="main">
      <Stack align="center" gap="sm" maw={440} ta="center">
        {offline ? (
          <IconWifiOff size={48} color="var(--mantine-color-gray-6)" aria-hidden />
        ) : (
          <IconAlertTriangle size={48} color="var(--mantine-color-orange-7)" aria-hidden />
        )}
        <Title order={1} size="h2">
          {offline ? t('offline.title') : t('error.title')}
        </Title>
        {offline ? (
          <Text c="dimmed">{t('offline.subtitle')}</Text>
        ) : (
          <>
            <Text c="dimmed" data-testid="error-message">
              {reason === ERROR_REASONS.network ? tm('request.network') : knownReason(reason, t)}
            </Text>
            {reason && reason !== ERROR_REASONS.network && (
              <Text size="xs" c="dimmed" data-testid="error-reason">
                {t('error.reason', { reason })}
              </Text>
            )}
          </>
        )}
        {(!offline || online) && (
          <Button mt="sm" onClick={() => reloadTo('/')}>
            {t('error.retry')}
          </Button>
        )}
      </Stack>
    </Center>
  );
}

function knownReason(reason: string, t: (key: string) => string): string {
  if (reason === ERROR_REASONS.settingInit) return t('error.settingInit');
  return t('error.generic');
}

/**
 * Reads what the no-cookie sign-in page hands back in the fragment: the login data
 * (`#data=<json>`) and the sign-in nonce it was opened with (`&nonce=...`).
 */
export function loginFromHash(hash: string): { data: AuthData | null; nonce: string } {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const nonce = params.get('nonce') ?? '';
  const raw = params.get('data');
  if (!raw) return { data: null, nonce };
  try {
    const data = JSON.parse(raw) as AuthData;
    return { data: typeof data?.access_token === 'string' ? data : null, nonce };
  } catch {
    return { data: null, nonce };
  }
}

/**
 * /callback-login (no start-up checks): completes a no-cookie sign-in this tab started and goes to
 * the default route. Login data without this tab's sign-in nonce (a link someone else made) is
 * ignored with a notice; the current session stays.
 */
export function CallbackLoginPage() {
  const { t } = useTranslation('startup');
  const { hash } = useLocation();
  useEffect(() => {
    const { data, nonce } = loginFromHash(hash);
    // The fragment holds tokens: drop it from the address bar and history at once.
    window.history.replaceState(window.history.state, '', window.location.pathname);
    void (async () => {
      if (data && takeSignInNonce(nonce)) {
        await login(data, { signInNonce: nonce }).catch((err) => console.error('login failed', err));
      } else if (data) {
        noticeForeignSignIn();
      }
      navigateTo(DEFAULT_ROUTE, { replace: true });
    })();
    // Once, on arrival.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  return <FullScreenLoader label={t('signingIn')} />;
}

/**
 * /callback-logout (no start-up checks): ends the session on the server, forgets it here and
 * starts over at the home route.
 */
export function CallbackLogoutPage() {
  const { t } = useTranslation('startup');
  useEffect(() => {
    void endServerSession().finally(() => {
      clearSession(false);
      reloadTo('/');
    });
  }, []);
  return <FullScreenLoader label={t('signingOut')} />;
}
