import { INTERVALS } from '@skyferry/contract';
import { i18n } from '../../i18n/index.ts';
import { showError } from '../messages/store.ts';
import { login, logout, isLogoutRunning } from '../session/actions.ts';
import { signInNonce, takeSignInNonce } from '../session/sign-in-nonce.ts';
import { selectLoggedIn, sessionStore } from '../session/store.ts';
import type { AuthData, InitData } from '../session/types.ts';
import { authUiStore, LOGIN_PAGES, type CookieCheck, type LoginPage } from './store.ts';

/**
 * The account pages' address with the client's language and origin (the pages post back to it);
 * a sign-in page also gets this tab's sign-in nonce, which must come back with the login data.
 */
export function accountPageUrl(base: string, options: { signIn?: boolean; page?: LoginPage } = {}): string {
  const url = new URL(base, window.location.href);
  if (options.page && options.page !== 'signin') url.pathname = url.pathname.replace(/signin$/, options.page);
  url.searchParams.set('lang', i18n.language || 'en');
  url.searchParams.set('origin', window.location.origin);
  if (options.signIn) url.searchParams.set('nonce', signInNonce());
  return url.toString();
}

/**
 * Login data that did not come back with this tab's sign-in nonce (a forged link or message): it
 * is ignored, the current session stays, and the user is told.
 */
export function noticeForeignSignIn(): void {
  const t = i18n.getFixedT(null, 'auth');
  const { email } = sessionStore.getState().user;
  const loggedIn = selectLoggedIn(sessionStore.getState());
  void showError({
    title: t('foreignSignIn.title'),
    message: loggedIn ? t('foreignSignIn.kept', { email }) : t('foreignSignIn.none'),
  });
}

/** The origins allowed to post login_success / logout_success: those of the account pages. */
export function accountOrigins(init: InitData | null): Set<string> {
  const origins = new Set<string>();
  if (!init) return origins;
  for (const u of [
    init.sign_in_url,
    init.sign_out_url,
    init.sign_in_url_disable_cookies,
    init.sign_out_url_disable_cookies,
  ]) {
    if (!u) continue;
    try {
      origins.add(new URL(u, window.location.href).origin);
    } catch {
      // not a URL: ignored
    }
  }
  return origins;
}

/**
 * Whether the account pages can keep their cookies inside our frame. Same-origin pages are first
 * party; a cross-origin sign-in page is asked through a hidden frame at `/account/cookie-check`,
 * which answers `{ type: 'cookie_check', enabled }`. No answer within the timeout counts as enabled.
 */
export function checkThirdPartyCookies(signInUrl: string, timeoutMs = 5_000): Promise<boolean> {
  if (!navigator.cookieEnabled) return Promise.resolve(false);
  let target: URL;
  try {
    target = new URL(signInUrl, window.location.href);
  } catch {
    return Promise.resolve(true);
  }
  if (target.origin === window.location.origin) return Promise.resolve(true);
  return new Promise((resolve) => {
    const frame = document.createElement('iframe');
    frame.title = 'cookie check';
    frame.hidden = true;
    frame.src = new URL('/account/cookie-check', target.origin).toString();
    const done = (enabled: boolean) => {
      clearTimeout(timer);
      window.removeEventListener('message', onMessage);
      frame.remove();
      resolve(enabled);
    };
    const onMessage = (event: MessageEvent) => {
      const data = event.data as { type?: unknown; enabled?: unknown } | null;
      if (event.origin === target.origin && data?.type === 'cookie_check') done(data.enabled === true);
    };
    const timer = setTimeout(() => done(true), timeoutMs);
    window.addEventListener('message', onMessage);
    document.body.appendChild(frame);
  });
}

let checking: Promise<CookieCheck> | null = null;

/** Runs the third-party cookie check once and remembers the result. */
export function runCookieCheck(): Promise<CookieCheck> {
  const known = authUiStore.getState().cookieCheck;
  if (known === 'enabled' || known === 'blocked') return Promise.resolve(known);
  checking ??= (async () => {
    authUiStore.setState({ cookieCheck: 'checking' });
    const url = sessionStore.getState().init?.sign_in_url ?? '';
    const enabled = url ? await checkThirdPartyCookies(url) : navigator.cookieEnabled;
    const result: CookieCheck = enabled ? 'enabled' : 'blocked';
    authUiStore.setState({ cookieCheck: result });
    checking = null;
    return result;
  })();
  return checking;
}

/** The cookie check starts 8 s after start-up (spec section 4). */
export function scheduleCookieCheck(): () => void {
  const timer = setTimeout(() => void runCookieCheck(), INTERVALS.cookieCheckStart);
  return () => clearTimeout(timer);
}

let navigateAway = (url: string) => window.location.assign(url);
/** For tests: replaces leaving the page for the no-cookie sign-in address. */
export function setNavigateAway(fn: (url: string) => void): void {
  navigateAway = fn;
}

/**
 * Opens the login panel (on the sign-up page with `signUp`) once the cookie check has answered;
 * with third-party cookies blocked and a no-cookie sign-in address, the page goes there instead.
 */
export async function openLogin(options: { signUp?: boolean } = {}): Promise<void> {
  const page: LoginPage = options.signUp ? 'signup' : 'signin';
  const status = await runCookieCheck();
  const init = sessionStore.getState().init;
  if (status === 'blocked' && init?.sign_in_url_disable_cookies) {
    navigateAway(accountPageUrl(init.sign_in_url_disable_cookies, { signIn: true, page }));
    return;
  }
  authUiStore.setState({ loginOpen: true, loginPage: page });
}

export function closeLogin(): void {
  authUiStore.setState({ loginOpen: false });
}

function isAuthData(value: unknown): value is AuthData {
  return typeof value === 'object' && value !== null && typeof (value as AuthData).access_token === 'string';
}

/**
 * Messages from the account pages: login_success with this tab's sign-in nonce logs in and closes
 * the panel; logout_success ends the session; account_page names the page the panel shows (its
 * title follows); pageview is ignored. Anything from another origin,
 * and login data without the nonce, is ignored.
 */
export function handleAccountMessage(event: MessageEvent): boolean {
  const origins = accountOrigins(sessionStore.getState().init);
  if (!origins.has(event.origin)) return false;
  const message = event.data as { type?: unknown; data?: unknown; nonce?: unknown } | null;
  if (!message || typeof message !== 'object') return false;
  if (message.type === 'login_success' && isAuthData(message.data)) {
    if (!takeSignInNonce(message.nonce)) {
      noticeForeignSignIn();
      return false;
    }
    closeLogin();
    void login(message.data, { signInNonce: message.nonce });
    return true;
  }
  if (message.type === 'account_page') {
    const page = (message as { page?: unknown }).page;
    if (LOGIN_PAGES.includes(page as LoginPage)) authUiStore.setState({ loginPage: page as LoginPage });
    return true;
  }
  if (message.type === 'logout_success') {
    if (selectLoggedIn(sessionStore.getState()) && !isLogoutRunning()) void logout({ fromFrame: true });
    return true;
  }
  return false;
}

export function listenAccountMessages(): () => void {
  const onMessage = (event: MessageEvent) => void handleAccountMessage(event);
  window.addEventListener('message', onMessage);
  return () => window.removeEventListener('message', onMessage);
}
