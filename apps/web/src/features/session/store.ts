import { FRONT_END_VERSION, PLATFORM, PRODUCT_ID, isPaid, type Language, type RuntimeEnv } from '@skyferry/contract';
import { createStore, useStore } from '../../lib/store.ts';
import { STORAGE_KEYS, readJson, removeKey, writeJson } from '../../lib/storage.ts';
import { rememberShellAccount } from '../../lib/shell-hints.ts';
import { runtimeEnv } from '../shell/desktop.ts';
import type { Cloud, DataPackets, InitData, Subscription, SystemCloud, UserInfo } from './types.ts';

/** The user state of spec section 3. */
export interface UserState {
  uid: string;
  email: string;
  access_token: string;
  token_type: string;
  refresh_token: string;
  auto_login_token: string;
  auto_login: boolean;
  info: UserInfo | null;
  data_packet: DataPackets;
  subscribe: Subscription[];
}

/** The settings state of spec section 3 plus what start-up learns from the server. */
export interface SettingsState {
  runtime: RuntimeEnv;
  platform: number;
  pid: number;
  version: string;
  maximized: boolean;
  focused: boolean;
  /**
   * Where downloads are saved: the desktop client's chosen folder (Settings > Transfer defaults),
   * '' for the default (the browser's own download folder on the web).
   */
  file_save_path: string;
  language: Language;
  licenses: unknown[];
  temp_token: string;
  wopi_url: string;
}

export interface SessionState {
  user: UserState;
  settings: SettingsState;
  init: InitData | null;
  clouds: Cloud[];
  tempClouds: Cloud[];
  cloudsLoaded: boolean;
  systemClouds: SystemCloud[];
  online: boolean;
  /** Start-up has finished (successfully or not). */
  started: boolean;
}

export const EMPTY_USER: UserState = {
  uid: '',
  email: '',
  access_token: '',
  token_type: '',
  refresh_token: '',
  auto_login_token: '',
  auto_login: false,
  info: null,
  data_packet: { base: [], additional: [] },
  subscribe: [],
};

/** The download folder kept with the transfer defaults (settings/preferences.ts writes it). */
function savedDownloadPath(): string {
  const path = readJson<{ downloadPath?: unknown }>(STORAGE_KEYS.transferDefaults, {}).downloadPath;
  return typeof path === 'string' ? path : '';
}

function initialSettings(): SettingsState {
  const runtime = runtimeEnv();
  return {
    runtime,
    platform: runtime === 'app-win' ? PLATFORM.windows : runtime === 'app-mac' ? PLATFORM.mac : PLATFORM.web,
    pid: runtime === 'app-win' ? PRODUCT_ID.windows : runtime === 'app-mac' ? PRODUCT_ID.mac : PRODUCT_ID.web,
    version: window.skyferryDesktop?.version ?? FRONT_END_VERSION,
    maximized: window.skyferryDesktop?.isMaximized?.() ?? false,
    focused: typeof document === 'undefined' ? true : document.hasFocus(),
    file_save_path: savedDownloadPath(),
    language: 'en',
    licenses: [],
    temp_token: readJson<string>(STORAGE_KEYS.tempToken, ''),
    wopi_url: '',
  };
}

export function initialSessionState(): SessionState {
  return {
    user: { ...EMPTY_USER, ...readJson<Partial<UserState>>(STORAGE_KEYS.user, {}) },
    settings: initialSettings(),
    init: null,
    clouds: [],
    tempClouds: [],
    cloudsLoaded: false,
    systemClouds: [],
    online: typeof navigator === 'undefined' ? true : navigator.onLine,
    started: false,
  };
}

export const sessionStore = createStore<SessionState>(initialSessionState());

// The user and the visitor identity survive reloads; everything else is fetched at start-up.
let persistedUser = sessionStore.getState().user;
rememberShellAccount(persistedUser.access_token ? 'member' : 'visitor');
let persistedTemp = sessionStore.getState().settings.temp_token;
sessionStore.subscribe(() => {
  const { user, settings } = sessionStore.getState();
  if (user !== persistedUser) {
    persistedUser = user;
    if (user.access_token || user.auto_login_token) writeJson(STORAGE_KEYS.user, user);
    else removeKey(STORAGE_KEYS.user);
    rememberShellAccount(user.access_token ? 'member' : 'visitor');
  }
  if (settings.temp_token !== persistedTemp) {
    persistedTemp = settings.temp_token;
    if (settings.temp_token) writeJson(STORAGE_KEYS.tempToken, settings.temp_token);
    else removeKey(STORAGE_KEYS.tempToken);
  }
});

/** For tests: back to a fresh state read from storage. */
export function resetSessionStore(): void {
  const fresh = initialSessionState();
  persistedUser = fresh.user;
  persistedTemp = fresh.settings.temp_token;
  sessionStore.setState(fresh);
}

export function patchSettings(patch: Partial<SettingsState>): void {
  sessionStore.setState((s) => ({ settings: { ...s.settings, ...patch } }));
}

export function patchUser(patch: Partial<UserState>): void {
  sessionStore.setState((s) => ({ user: { ...s.user, ...patch } }));
}

// Selectors.
export const selectLoggedIn = (s: SessionState) => s.user.access_token !== '';
export const selectPaid = (s: SessionState) => isPaid(s.user.info);
/** Billing features (plans, usage bars, Buy) show only when the operator turned billing on. */
export const selectBillingOn = (s: SessionState) => (s.init?.billing_mode ?? 'off') !== 'off';
/** The clouds the sidebar shows: the account's, or a visitor's temporary ones. */
export const selectVisibleClouds = (s: SessionState) => (selectLoggedIn(s) ? s.clouds : s.tempClouds);

export function useSession<S>(selector: (s: SessionState) => S): S {
  return useStore(sessionStore, selector);
}
