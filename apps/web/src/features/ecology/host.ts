import {
  APP_REQUESTS,
  PRODUCT_ID,
  appMessage,
  parseAppMessage,
  type AppEditFileData,
  type AppExportFileInfo,
  type AppMessage,
  type AppUserInfo,
  type EcologyApp,
} from '@skyferry/contract';
import { openLogin } from '../auth/login.ts';
import { sessionStore, selectLoggedIn } from '../session/store.ts';
import { tokenOf, type AppTab } from './tabs.ts';

/**
 * The host's side of the v1 parent2iframe protocol, one frame at a time. A message counts only
 * when it comes from the frame's own window and from the app's registered origin ('null' for a
 * first-party app in its opaque sandbox); everything else is ignored.
 */
export function acceptAppMessage(
  event: Pick<MessageEvent, 'source' | 'origin' | 'data'>,
  frame: Window | null,
  app: Pick<EcologyApp, 'origin'>,
): ReturnType<typeof parseAppMessage> {
  if (!frame || event.source !== frame) return null;
  if (event.origin !== app.origin) return null;
  return parseAppMessage(event.data);
}

/**
 * Where the host posts: the external app's exact origin, never '*'. A first-party app's sandbox
 * has an opaque origin that no target can name, so '*' is the only way to reach it; the message
 * still goes to that frame's window alone.
 */
export function targetOriginOf(app: Pick<EcologyApp, 'origin' | 'first_party'>): string {
  return app.first_party ? '*' : app.origin;
}

/** The frame's sandbox: never the host's own origin (an app on it would reach the account's storage). */
export function sandboxOf(app: Pick<EcologyApp, 'origin' | 'first_party'>, hostOrigin: string): string {
  const base = 'allow-scripts allow-forms allow-popups allow-popups-to-escape-sandbox allow-downloads';
  return !app.first_party && app.origin !== hostOrigin ? `${base} allow-same-origin` : base;
}

/** The frame's address: the function's (or the app's) URL with is_open_file=1 when a function is opened. */
export function frameUrlOf(tab: Pick<AppTab, 'app' | 'functionId' | 'files'>, language: string): string {
  const fn = tab.functionId === null ? undefined : tab.app.functions.find((f) => f.id === tab.functionId);
  const url = new URL(fn?.url ?? tab.app.url, window.location.origin);
  if (fn || tab.files.length > 0) url.searchParams.set('is_open_file', '1');
  url.searchParams.set('lang', language);
  return url.toString();
}

/** The user info an app gets (spec section 3), with the app's own token instead of the account's. */
export function userInfoFor(token: string): AppUserInfo {
  const { user } = sessionStore.getState();
  const info = user.info;
  return {
    avatar: info?.avatar ?? '',
    avatar_md5: info?.avatar_md5 ?? '',
    country: info?.country ?? '',
    email: user.email,
    firstname: info?.firstname ?? '',
    lastname: info?.lastname ?? '',
    mobile: info?.mobile ?? '',
    nickname: info?.nickname ?? '',
    token,
    uid: user.uid,
    from_pid: PRODUCT_ID.web,
  };
}

/** A valid export request's file info, else null. */
export function exportInfoOf(data: unknown): AppExportFileInfo | null {
  if (typeof data !== 'object' || data === null) return null;
  const d = data as Record<string, unknown>;
  if (typeof d.filename !== 'string' || !d.filename) return null;
  const url = typeof d.download_url === 'string' ? d.download_url : undefined;
  const b64 = typeof d.base64_data === 'string' ? d.base64_data : undefined;
  if (!url && !b64) return null;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  return { filename: d.filename, size: num(d.size), filesize: num(d.filesize), download_url: url, base64_data: b64 };
}

export interface HostLink {
  tab: AppTab;
  post(message: AppMessage): void;
  language(): string;
}

/** Sends the token update (signed in) or a logout (signed out). */
export async function sendTokenUpdate(link: HostLink, sessionId = ''): Promise<void> {
  if (!selectLoggedIn(sessionStore.getState())) {
    link.post(appMessage(APP_REQUESTS.logout, null, sessionId));
    return;
  }
  const { token } = await tokenOf(link.tab);
  link.post(appMessage(APP_REQUESTS.updateToken, userInfoFor(token), sessionId, 200));
}

/** Sends the opened files (function opened with files): their ids, the token that reaches them. */
export async function sendEditFile(link: HostLink): Promise<void> {
  if (link.tab.files.length === 0) return;
  const issued = await tokenOf(link.tab);
  const data: AppEditFileData = {
    token: issued.token,
    api_base: window.location.origin,
    files: issued.files,
    current_file_id: issued.files[link.tab.current]?.file_id ?? issued.files[0]?.file_id ?? '',
    language: link.language(),
  };
  link.post(appMessage(APP_REQUESTS.editFile, data));
}

/** Answers one accepted message from the tab's app. */
export async function handleAppRequest(link: HostLink, message: AppMessage & { kind: string }): Promise<void> {
  switch (message.kind) {
    case APP_REQUESTS.getToken:
      // A visitor has no account to lend: the login panel opens (spec section 4).
      if (!selectLoggedIn(sessionStore.getState())) {
        link.post(appMessage(APP_REQUESTS.getToken, null, message.session_id, 401));
        await openLogin();
        return;
      }
      link.post(
        appMessage(APP_REQUESTS.getToken, userInfoFor((await tokenOf(link.tab)).token), message.session_id, 200),
      );
      return;
    case APP_REQUESTS.updateToken:
      await sendTokenUpdate(link, message.session_id);
      return;
    case APP_REQUESTS.loaded:
      await sendTokenUpdate(link);
      await sendEditFile(link);
      return;
    case APP_REQUESTS.exportFile: {
      const info = exportInfoOf(message.data);
      link.post(appMessage(APP_REQUESTS.exportFile, null, message.session_id, info ? 200 : 400));
      // The Export to dialog (features/export), fetched when an app first asks for it.
      if (info)
        void import('../export/index.ts').then((m) => m.openExportDialog({ ...info, referer: link.tab.app.url }));
      return;
    }
    default:
      return;
  }
}
