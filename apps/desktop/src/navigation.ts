import { originOf } from './ipc/router.ts';

/** The name the web app gives the cloud sign-in pop-up (apps/web ConnectCloudDialog). */
export const OAUTH_POPUP_NAME = 'skyferry-oauth';

function isWeb(url: string): boolean {
  return /^https?:\/\//i.test(url);
}

/**
 * What the main window may navigate to: the server it shows and the shell's start page; web
 * addresses elsewhere open in the system browser; anything else (file:, javascript:...) nowhere.
 */
export function decideNavigation(
  url: string,
  serverOrigin: string | null,
  startOrigin: string,
): 'allow' | 'external' | 'deny' {
  const origin = originOf(url);
  if (origin && (origin === serverOrigin || origin === startOrigin)) return 'allow';
  return isWeb(url) ? 'external' : 'deny';
}

/**
 * window.open from the web app: the cloud sign-in pop-up is created (hidden: it only carries the
 * sign-in's result back to its opener), web links open in the system browser, nothing else opens.
 */
export function decideWindowOpen(details: {
  url: string;
  frameName: string;
}): { action: 'oauth-popup' } | { action: 'external'; url: string } | { action: 'deny' } {
  if (details.frameName === OAUTH_POPUP_NAME && (details.url === 'about:blank' || details.url === '')) {
    return { action: 'oauth-popup' };
  }
  if (isWeb(details.url)) return { action: 'external', url: details.url };
  return { action: 'deny' };
}

/**
 * Where the sign-in pop-up may go: the server's own pages (the callback that finishes the
 * sign-in) load in it; the service's sign-in page opens in the system browser instead.
 */
export function decidePopupNavigation(url: string, serverOrigin: string | null): 'allow' | 'external' | 'deny' {
  const origin = originOf(url);
  if (origin && origin === serverOrigin) return 'allow';
  return isWeb(url) ? 'external' : 'deny';
}

/** The server's own callback address for a relayed redirect's query. */
export function serverCallbackUrl(serverOrigin: string, query: URLSearchParams): string {
  return `${serverOrigin}/api/clouds/oauth/callback?${query.toString()}`;
}

/**
 * A server address the user typed: http(s) (https when no scheme is given), no credentials. The
 * window shows its origin: the web app calls the server at absolute paths.
 */
export function normalizeServerUrl(input: string): string | null {
  const text = input.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`;
  try {
    const url = new URL(withScheme);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    if (url.username || url.password || !url.hostname) return null;
    return url.origin;
  } catch {
    return null;
  }
}
