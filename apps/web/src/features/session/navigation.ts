/**
 * Navigation from outside components (start-up, logout, token refresh). The router installs its
 * navigate function once it exists; before that, calls fall back to a full page load.
 */
type Navigate = (to: string, options?: { replace?: boolean }) => void;

let navigator: Navigate | null = null;

export function setNavigator(fn: Navigate | null): void {
  navigator = fn;
}

export function navigateTo(to: string, options?: { replace?: boolean }): void {
  if (navigator) navigator(to, options);
  else if (typeof window !== 'undefined') window.location.assign(to);
}

/** The default route: the root redirects to /transfer (spec section 2). */
export const DEFAULT_ROUTE = '/transfer';

let reloader = (path: string) => window.location.assign(path);

/** Full page load of a path (after logout the app starts fresh). */
export function reloadTo(path: string): void {
  reloader(path);
}

/** For tests (jsdom cannot load pages): replaces the full page load. */
export function setReloader(fn: (path: string) => void): void {
  reloader = fn;
}
