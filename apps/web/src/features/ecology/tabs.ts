import { LIMITS, type AppTokenData, type EcologyApp, type OfficeOpenData } from '@skyferry/contract';
import i18n from 'i18next';
import { createStore, useStore } from '../../lib/store.ts';
import { navigateTo } from '../session/navigation.ts';
import { sessionStore, selectLoggedIn } from '../session/store.ts';
import { ecologyApi } from './api.ts';

/** A file opened with an app: where it is, and its name for the tab. */
export interface OpenedFile {
  cloud_id: string;
  path: string;
  name: string;
}

/** An open app: a header tab and its frame. */
export interface AppTab {
  /** The route's app_id: the app's id, and a suffix after a hyphen when it was opened with files. */
  key: string;
  app: EcologyApp;
  functionId: number | null;
  /** The tab's label: the file opened, else the app's name. */
  label: string;
  files: OpenedFile[];
  /** Index of the file opened first in `files`. */
  current: number;
}

interface TabsState {
  tabs: AppTab[];
}

const STORAGE_KEY = 'skyferry.app_tabs';

function restore(): AppTab[] {
  try {
    const raw = sessionStorage.getItem(STORAGE_KEY);
    const tabs = raw ? (JSON.parse(raw) as AppTab[]) : [];
    return Array.isArray(tabs) ? tabs.slice(0, LIMITS.openApps) : [];
  } catch {
    return [];
  }
}

/** The open apps, kept for the browser tab's life (sessionStorage): they survive navigation and reloads. */
export const tabsStore = createStore<TabsState>({ tabs: restore() });
tabsStore.subscribe(() => {
  try {
    sessionStorage.setItem(STORAGE_KEY, JSON.stringify(tabsStore.getState().tabs));
  } catch {
    // storage unavailable: the tabs last for this page only
  }
});

export function useAppTabs(): AppTab[] {
  return useStore(tabsStore, (s) => s.tabs);
}

/** The numeric app id of a route's app_id ("12-x" is app 12; spec section 2). */
export function appIdOf(key: string | null | undefined): number | null {
  const m = /^(\d{1,10})(?:-.*)?$/.exec(key ?? '');
  return m ? Number(m[1]) : null;
}

export function routeOf(tab: Pick<AppTab, 'key' | 'functionId'>): string {
  const q = new URLSearchParams({ app_id: tab.key });
  if (tab.functionId !== null) q.set('function_id', String(tab.functionId));
  return `/ecology/app?${q.toString()}`;
}

// App tokens live in memory only: a reload issues new ones.
const tokens = new Map<string, Promise<AppTokenData>>();

/** The tab's app token (issued once per tab: scoped to its app and files). */
export function tokenOf(tab: AppTab): Promise<AppTokenData> {
  let t = tokens.get(tab.key);
  if (!t) {
    t = ecologyApi.issueToken(
      tab.app.app_id,
      tab.files.map((f) => ({ cloud_id: f.cloud_id, path: f.path })),
    );
    t.catch(() => tokens.delete(tab.key));
    tokens.set(tab.key, t);
  }
  return t;
}

/** Forgets the tab's token and ends it on the server. */
function revokeToken(key: string): void {
  const t = tokens.get(key);
  tokens.delete(key);
  void t?.then((d) => ecologyApi.revokeToken(d.token)).catch(() => undefined);
}

/** Whether a tab is an office-type app (state 2) opened with a file: its frame opens through the WOPI host. */
export function isOfficeTab(tab: Pick<AppTab, 'app' | 'files'>): boolean {
  return tab.app.state === 2 && !tab.app.first_party && tab.files.length > 0;
}

const offices = new Map<string, Promise<OfficeOpenData>>();

/** An office tab's frame address and WOPI token (asked for once per tab). */
export function officeOf(tab: AppTab): Promise<OfficeOpenData> {
  let o = offices.get(tab.key);
  const file = tab.files[tab.current] ?? tab.files[0];
  if (!o) {
    o = file
      ? ecologyApi.openOffice(tab.app.app_id, { cloud_id: file.cloud_id, path: file.path })
      : Promise.reject(new Error('no file'));
    o.catch(() => offices.delete(tab.key));
    offices.set(tab.key, o);
  }
  return o;
}

/**
 * The POST to the document-editing service when an office app closes (spec section 7): the file's
 * name and the token, to `<office name>/close` beside the address the frame opened.
 */
export function officeCloseRequest(office: OfficeOpenData): { url: string; init: RequestInit } {
  return {
    url: new URL('close', office.url).toString(),
    init: {
      method: 'POST',
      // The service is on another origin: a simple request (no preflight), no cookies, sent even as the page goes.
      mode: 'no-cors',
      credentials: 'omit',
      keepalive: true,
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify({ file_name: office.file_name, token: office.office.token }),
    },
  };
}

function closeOffice(key: string): void {
  const o = offices.get(key);
  offices.delete(key);
  void o
    ?.then((office) => {
      const { url, init } = officeCloseRequest(office);
      return fetch(url, init);
    })
    .catch(() => undefined);
}

/** Forgets every tab's token (a new session: the old ones ended with it), so the next use issues new ones. */
export function dropTokens(): void {
  tokens.clear();
}

export interface OpenOptions {
  functionId?: number | null;
  files?: OpenedFile[];
  current?: number;
}

/**
 * Opens an app in a new tab (or shows the tab it already has when opened without files) and goes
 * there. At most 15 apps are open: the 16th is refused with the spec's message.
 */
export function openApp(app: EcologyApp, options: OpenOptions = {}): boolean {
  const files = options.files ?? [];
  const key = files.length > 0 ? `${app.app_id}-${Math.random().toString(36).slice(2, 8)}` : String(app.app_id);
  const existing = tabsStore.getState().tabs.find((t) => t.key === key);
  if (existing) {
    navigateTo(routeOf(existing));
    return true;
  }
  // An app that needs a login is not opened for a visitor: the login panel opens instead.
  if (app.is_mandatory_login && !selectLoggedIn(sessionStore.getState())) {
    void import('../auth/login.ts').then((m) => m.openLogin());
    return false;
  }
  if (tabsStore.getState().tabs.length >= LIMITS.openApps) {
    // The toast's library comes with the hosts, after the first paint (the header imports this file).
    void import('../messages/toast.ts').then((m) => m.toast.warning(i18n.t('apps:tooMany')));
    return false;
  }
  const tab: AppTab = {
    key,
    app,
    functionId: options.functionId ?? null,
    label: files[options.current ?? 0]?.name ?? app.name,
    files,
    current: options.current ?? 0,
  };
  tabsStore.setState((s) => ({ tabs: [...s.tabs, tab] }));
  if (selectLoggedIn(sessionStore.getState())) void ecologyApi.usage(app.app_id).catch(() => undefined);
  navigateTo(routeOf(tab));
  return true;
}

/** Closes a tab: its frame goes, its token is revoked. Answers the tab to show next, if any. */
export function closeApp(key: string): AppTab | undefined {
  const tabs = tabsStore.getState().tabs;
  const index = tabs.findIndex((t) => t.key === key);
  if (index < 0) return undefined;
  revokeToken(key);
  closeOffice(key);
  const rest = tabs.filter((t) => t.key !== key);
  tabsStore.setState({ tabs: rest });
  return rest[Math.min(index, rest.length - 1)];
}

/** Closes the apps that need a login (the user logged out). */
export function closeLoginRequiredApps(): void {
  for (const t of tabsStore.getState().tabs) if (t.app.is_mandatory_login) closeApp(t.key);
}
