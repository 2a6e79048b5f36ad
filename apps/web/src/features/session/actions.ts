import { Code, INTERVALS, type Language } from '@skyferry/contract';
import { ApiRequestError } from '../../api/client.ts';
import { STORAGE_KEYS, removeKey } from '../../lib/storage.ts';
import { authUiStore } from '../auth/store.ts';
import { sessionApi } from './api.ts';
import { emitSessionEvent } from './events.ts';
import { DEFAULT_ROUTE, navigateTo, reloadTo } from './navigation.ts';
import { createTokenRefresher, isRefreshRejected } from './refresher.ts';
import { EMPTY_USER, patchSettings, patchUser, selectLoggedIn, sessionStore, type UserState } from './store.ts';
import type { AuthData, Cloud, MeData, SystemCloud } from './types.ts';

/** Stores what a login or refresh returned: tokens, uid, info, packets, subscription and licences. */
export function applyAuth(data: AuthData): void {
  const prev = sessionStore.getState().user;
  sessionStore.setState((s) => ({
    user: {
      uid: String(data.uid ?? prev.uid),
      email: data.user_info?.email ?? prev.email,
      access_token: data.access_token,
      token_type: data.token_type || 'Bearer',
      refresh_token: data.refresh_token ?? prev.refresh_token,
      auto_login_token: data.auto_login_token || prev.auto_login_token,
      auto_login: Boolean(data.auto_login_token || prev.auto_login_token),
      info: data.user_info ?? prev.info,
      data_packet: data.my_data_packet ?? prev.data_packet,
      subscribe: data.my_subscribe ?? prev.subscribe,
    },
    settings: data.licenses ? { ...s.settings, licenses: data.licenses } : s.settings,
  }));
}

export function applyMe(me: MeData): void {
  patchUser({
    info: me.user_info,
    email: me.user_info.email,
    data_packet: me.my_data_packet,
    subscribe: me.my_subscribe,
  });
}

export async function refreshMe(): Promise<void> {
  applyMe(await sessionApi.me());
}

export async function loadClouds(): Promise<void> {
  const { clouds, temp_clouds } = await sessionApi.myClouds();
  sessionStore.setState({ clouds: clouds ?? [], tempClouds: temp_clouds ?? [], cloudsLoaded: true });
}

export async function loadSystemClouds(): Promise<void> {
  const list: SystemCloud[] = await sessionApi.systemClouds();
  sessionStore.setState({ systemClouds: list });
}

/** Loads the cloud lists without failing the caller (a failure leaves the lists as they were). */
export async function refreshCloudLists(): Promise<void> {
  await Promise.all([
    loadClouds().catch((err) => console.warn('loading clouds failed', err)),
    loadSystemClouds().catch((err) => console.warn('loading cloud kinds failed', err)),
  ]);
}

/**
 * Who a grant names: the account id when known (it stays when the email changes, maybe on another
 * device), else the email.
 */
export function grantUsername(user: { uid: string; email: string }): string {
  return user.uid || user.email;
}

/** Exchanges the refresh token for new tokens (refresh tokens rotate). */
export async function refreshTokens(): Promise<void> {
  const { user } = sessionStore.getState();
  if (!user.refresh_token) throw new ApiRequestError(Code.REFRESH_REJECTED, 'no refresh token', 401, null);
  applyAuth(await sessionApi.refresh(grantUsername(user), user.refresh_token));
}

/** Clears the signed-in session. A light logout keeps the auto-login data (and the id and email it names). */
export function clearSession(keepAutoLogin: boolean): void {
  sessionStore.setState((s) => ({
    user: keepAutoLogin
      ? {
          ...EMPTY_USER,
          uid: s.user.uid,
          email: s.user.email,
          auto_login_token: s.user.auto_login_token,
          auto_login: s.user.auto_login,
        }
      : { ...EMPTY_USER },
    clouds: [],
    tempClouds: [],
    cloudsLoaded: false,
  }));
}

export function lightLogout(): void {
  tokenRefresher.stop();
  clearSession(true);
  emitSessionEvent('light-logout');
  navigateTo('/loading', { replace: true });
}

export const tokenRefresher = createTokenRefresher({ refresh: refreshTokens, lightLogout });

/**
 * A call answered 140013 (the access token expired early, e.g. after sleep): refresh once.
 * Resolves true when the call may be retried; a rejected refresh is a light logout.
 */
let pendingRefresh: Promise<boolean> | null = null;
export function refreshAfterUnauthenticated(): Promise<boolean> {
  if (!selectLoggedIn(sessionStore.getState())) return Promise.resolve(false);
  pendingRefresh ??= refreshTokens()
    .then(() => true)
    .catch((err: unknown) => {
      if (isRefreshRejected(err)) lightLogout();
      return false;
    })
    .finally(() => {
      pendingRefresh = null;
    });
  return pendingRefresh;
}

/** The most recently used temporary clouds first, at most `limit`. */
export function cloudsToBind(temp: Cloud[], limit: number): Cloud[] {
  return [...temp]
    .map((cloud, index) => ({ cloud, index }))
    .sort((a, b) => (b.cloud.last_used_at ?? 0) - (a.cloud.last_used_at ?? 0) || a.index - b.index)
    .slice(0, limit)
    .map((x) => x.cloud);
}

/**
 * A login (from the sign-in frame or the no-cookie callback, with the sign-in nonce this tab sent):
 * stores the session, refreshes available clouds, the cloud list and (through the `login` event)
 * the app list, starts the 30-minute token refresh, and offers to bind the visitor's temporary
 * clouds. Binding is offered only for a sign-in this tab started (it has its nonce): clouds never
 * go to an account the user did not just sign in to here.
 */
export async function login(data: AuthData, options: { signInNonce?: string } = {}): Promise<void> {
  const visitorClouds = sessionStore.getState().tempClouds;
  applyAuth(data);
  tokenRefresher.start();
  emitSessionEvent('login');
  await refreshCloudLists();
  const temp = sessionStore.getState().tempClouds.length ? sessionStore.getState().tempClouds : visitorClouds;
  if (options.signInNonce && temp.length > 0) {
    authUiStore.setState({ bindPrompt: temp, bindNonce: options.signInNonce });
  }
}

/**
 * Binds the chosen temporary clouds to the account, or discards them all (an empty list); the
 * server discards every temporary cloud not bound. Then the visitor identity is forgotten.
 */
export async function finishBind(bind: Cloud[]): Promise<void> {
  const visitorOrder = sessionStore.getState().tempClouds.map((c) => c.id);
  const accountBefore = sessionStore.getState().clouds.map((c) => c.id);
  const nonce = authUiStore.getState().bindNonce ?? '';
  try {
    await sessionApi.bindClouds(
      bind.map((c) => c.id),
      nonce,
    );
  } catch (err) {
    console.warn('binding temporary clouds failed', err);
    throw err;
  } finally {
    authUiStore.setState({ bindPrompt: null, bindNonce: null });
    patchSettings({ temp_token: '' });
    sessionStore.setState({ tempClouds: [] });
    await loadClouds().catch((err) => console.warn('loading clouds failed', err));
  }
  await keepOrder(accountBefore, visitorOrder);
}

/** The account's clouds keep their order; newly bound ones follow in the order the visitor gave them. */
async function keepOrder(accountBefore: string[], visitorOrder: string[]): Promise<void> {
  const clouds = sessionStore.getState().clouds;
  const rank = (id: string) => {
    const a = accountBefore.indexOf(id);
    if (a >= 0) return a;
    const v = visitorOrder.indexOf(id);
    return v >= 0 ? accountBefore.length + v : Number.MAX_SAFE_INTEGER;
  };
  const wanted = [...clouds].sort((x, y) => rank(x.id) - rank(y.id));
  if (wanted.every((c, i) => c.id === clouds[i]?.id)) return;
  sessionStore.setState({ clouds: wanted });
  await sessionApi.sortClouds(wanted.map((c) => c.id)).catch((err) => console.warn('saving the order failed', err));
}

let logoutRunning = false;

/** Ends the session on the server (its access, refresh and auto-login tokens), whatever started the logout. */
export async function endServerSession(): Promise<void> {
  const { user } = sessionStore.getState();
  if (!user.access_token && !user.refresh_token && !user.auto_login_token) return;
  await sessionApi
    .logout({
      ...(user.refresh_token ? { refresh_token: user.refresh_token } : {}),
      ...(user.auto_login_token ? { auto_login_token: user.auto_login_token } : {}),
    })
    .catch((err) => console.warn('logout call failed', err));
}

/**
 * Logout (spec section 4): revoke the tokens on the server, clear tokens, auto-login data, clouds
 * and (through the `logout` event) migrate and sync selections and login-required apps, stop the
 * refresh, load the sign-out page in the hidden frame, and reload at the home route 0.8 s later.
 * A logout the sign-out page started (`fromFrame`) revokes the tokens too; it only skips the frame.
 */
export async function logout(options: { fromFrame?: boolean } = {}): Promise<void> {
  if (logoutRunning) return;
  logoutRunning = true;
  const { init } = sessionStore.getState();
  tokenRefresher.stop();
  await endServerSession();
  clearSession(false);
  patchSettings({ temp_token: '' });
  removeKey(STORAGE_KEYS.recentClouds);
  emitSessionEvent('logout');
  if (!options.fromFrame && init?.sign_out_url) authUiStore.setState({ logoutFrameSrc: init.sign_out_url });
  setTimeout(() => {
    logoutRunning = false;
    reloadTo('/');
  }, INTERVALS.logoutReloadDelay);
}

export function isLogoutRunning(): boolean {
  return logoutRunning;
}

/**
 * Keeps tabs of the same browser on one session: refresh tokens rotate, so a tab must use the
 * token another tab just received; a logout in one tab starts every other tab over at `/`.
 */
export function syncSessionAcrossTabs(): () => void {
  const onStorage = (event: StorageEvent) => {
    if (event.storageArea !== localStorage || event.key !== STORAGE_KEYS.user) return;
    const wasLoggedIn = selectLoggedIn(sessionStore.getState());
    let next: Partial<UserState>;
    try {
      next = event.newValue ? (JSON.parse(event.newValue) as Partial<UserState>) : {};
    } catch {
      return;
    }
    if (wasLoggedIn && !next.access_token) {
      tokenRefresher.stop();
      reloadTo('/');
      return;
    }
    if (next.access_token) sessionStore.setState({ user: { ...EMPTY_USER, ...next } });
  };
  window.addEventListener('storage', onStorage);
  return () => window.removeEventListener('storage', onStorage);
}

export function setLanguageSetting(language: Language): void {
  patchSettings({ language });
}

export { DEFAULT_ROUTE };
