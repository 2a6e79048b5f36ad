import { Code, INTERVALS } from '@skyferry/contract';
import { ApiRequestError, NetworkError } from '../../api/client.ts';
import {
  applyAuth,
  applyMe,
  clearSession,
  grantUsername,
  refreshCloudLists,
  refreshTokens,
  tokenRefresher,
} from '../session/actions.ts';
import { sessionApi } from '../session/api.ts';
import { emitSessionEvent } from '../session/events.ts';
import { DEFAULT_ROUTE, navigateTo } from '../session/navigation.ts';
import { patchSettings, selectLoggedIn, sessionStore } from '../session/store.ts';

/** Reasons the error page shows (its `src` query). */
export const ERROR_REASONS = {
  offline: 'offline',
  settingInit: 'setting init error',
  network: 'Network Error',
} as const;

export function errorPath(reason: string): string {
  return `/error?src=${encodeURIComponent(reason)}`;
}

export type StartupOutcome = 'ready' | 'offline' | 'error';

let running: Promise<StartupOutcome> | null = null;

/**
 * Start-up (spec section 4): offline goes to the error page and stays; a failed settings init goes
 * to the error page with "setting init error"; a stored session is checked (refreshed when its
 * access token expired); with no token, auto-login is tried, and otherwise the visitor's temporary
 * clouds are loaded. Runs once at a time.
 */
export function runStartup(): Promise<StartupOutcome> {
  running ??= startup().finally(() => {
    running = null;
  });
  return running;
}

async function startup(): Promise<StartupOutcome> {
  sessionStore.setState({ started: false });
  if (!navigator.onLine) {
    sessionStore.setState({ online: false, started: true });
    navigateTo(errorPath(ERROR_REASONS.offline), { replace: true });
    return 'offline';
  }
  try {
    const init = await sessionApi.init();
    const { settings } = sessionStore.getState();
    sessionStore.setState({ init });
    patchSettings({
      licenses: init.licenses ?? [],
      wopi_url: init.wopi_url ?? '',
      temp_token: settings.temp_token || init.temp_token || '',
    });
  } catch (err) {
    console.error('settings init failed', err);
    sessionStore.setState({ started: true });
    const offline = err instanceof NetworkError && !navigator.onLine;
    navigateTo(errorPath(offline ? ERROR_REASONS.offline : ERROR_REASONS.settingInit), { replace: true });
    return offline ? 'offline' : 'error';
  }

  try {
    await restoreSession();
  } catch (err) {
    sessionStore.setState({ started: true });
    if (err instanceof NetworkError) {
      // A network error on an account request while online goes to the error page.
      navigateTo(errorPath(ERROR_REASONS.network), { replace: true });
      return 'error';
    }
    throw err;
  }

  if (selectLoggedIn(sessionStore.getState())) {
    tokenRefresher.start();
    emitSessionEvent('login');
  } else if (!sessionStore.getState().settings.temp_token) {
    const visitor = await sessionApi.visitorToken().catch((err: unknown) => {
      console.warn('visitor token failed', err);
      return null;
    });
    if (visitor) patchSettings({ temp_token: visitor.access_token });
  }
  await refreshCloudLists();
  sessionStore.setState({ started: true, online: true });
  return 'ready';
}

async function restoreSession(): Promise<void> {
  const { user } = sessionStore.getState();
  if (user.access_token) {
    try {
      applyMe(await sessionApi.me());
      return;
    } catch (err) {
      if (!(err instanceof ApiRequestError)) throw err;
      if (err.code === Code.UNAUTHENTICATED && user.refresh_token) {
        try {
          await refreshTokens();
          applyMe(await sessionApi.me());
          return;
        } catch (refreshErr) {
          if (refreshErr instanceof NetworkError) throw refreshErr;
        }
      }
      clearSession(true);
    }
  }
  const after = sessionStore.getState().user;
  if (!after.access_token && after.auto_login && after.auto_login_token) {
    try {
      applyAuth(await sessionApi.autoLogin(grantUsername(after), after.auto_login_token));
    } catch (err) {
      if (err instanceof NetworkError) throw err;
      // The auto-login credential was refused: carry on as a visitor.
      clearSession(false);
    }
  }
}

export interface NetworkWatcherOptions {
  /** Called when the connection came back and the app went to the default route. */
  onBackOnline?: () => void;
}

/**
 * Going offline raises the offline error (the error page) after 800 ms; going online again
 * routes to the default route after 750 ms when the app is on the error page.
 */
export function watchNetwork(options: NetworkWatcherOptions = {}): () => void {
  let offlineTimer: ReturnType<typeof setTimeout> | undefined;
  let onlineTimer: ReturnType<typeof setTimeout> | undefined;
  const clear = () => {
    clearTimeout(offlineTimer);
    clearTimeout(onlineTimer);
  };
  const onOffline = () => {
    clear();
    sessionStore.setState({ online: false });
    offlineTimer = setTimeout(() => {
      navigateTo(errorPath(ERROR_REASONS.offline));
    }, INTERVALS.offlineErrorDelay);
  };
  const onOnline = () => {
    clear();
    sessionStore.setState({ online: true });
    onlineTimer = setTimeout(() => {
      if (window.location.pathname !== '/error') return;
      navigateTo(DEFAULT_ROUTE, { replace: true });
      options.onBackOnline?.();
    }, INTERVALS.onlineRedirectDelay);
  };
  window.addEventListener('offline', onOffline);
  window.addEventListener('online', onOnline);
  return () => {
    clear();
    window.removeEventListener('offline', onOffline);
    window.removeEventListener('online', onOnline);
  };
}
