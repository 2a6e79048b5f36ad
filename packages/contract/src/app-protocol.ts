/**
 * The window messages between the host and an embedded app (spec section 7): version v1, mode
 * parent2iframe, each `{ type, request, session_id, data }` (plus `code` on answers). No zod here:
 * the first-party apps import this file alone.
 */
export const APP_PROTOCOL = { version: 'v1', mode: 'parent2iframe' } as const;

/** The requests, as `type/request`. */
export const APP_REQUESTS = {
  getToken: 'user/get_token',
  updateToken: 'user/update_token',
  logout: 'user/logout',
  editFile: 'file/edit',
  exportFile: 'file/export',
  loaded: 'loading/completed',
} as const;
export type AppRequest = (typeof APP_REQUESTS)[keyof typeof APP_REQUESTS];

/**
 * A first-party app (opaque sandbox origin, which the host cannot tell from any other page loaded
 * in that sandbox) is spoken to over a MessagePort the host hands to the frame's first document
 * only, in a message of this kind; window messages from it are ignored.
 */
export const APP_PORT_OFFER = 'skyferry/port';

export interface AppMessage {
  version: 'v1';
  mode: 'parent2iframe';
  type: string;
  request: string;
  session_id: string;
  code?: number;
  data?: unknown;
}

/** A protocol message for `type/request`. */
export function appMessage(kind: AppRequest, data?: unknown, sessionId = '', code?: number): AppMessage {
  const [type = '', request = ''] = kind.split('/');
  return {
    ...APP_PROTOCOL,
    type,
    request,
    session_id: sessionId,
    ...(code === undefined ? {} : { code }),
    ...(data === undefined ? {} : { data }),
  };
}

/** The message when `raw` is one of the protocol's (version and mode checked), else null. */
export function parseAppMessage(raw: unknown): (AppMessage & { kind: string }) | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const m = raw as Partial<AppMessage>;
  if (m.version !== APP_PROTOCOL.version || m.mode !== APP_PROTOCOL.mode) return null;
  if (typeof m.type !== 'string' || typeof m.request !== 'string') return null;
  const sessionId = typeof m.session_id === 'string' ? m.session_id.slice(0, 100) : '';
  return { ...(m as AppMessage), session_id: sessionId, kind: `${m.type}/${m.request}` };
}

/** What the host sends with `file/edit`: the files the app may reach, the one opened, and how. */
export interface AppEditFileData {
  /** The app token (scoped to these files); also sent to visitors, whom update_token does not reach. */
  token: string;
  /** Where the app calls the server (`<api_base>/ecology/v1/app/...`). */
  api_base: string;
  files: Array<{ file_id: string; name: string; writable: boolean }>;
  current_file_id: string;
  language: string;
}

/** The user info of `user/get_token` and `user/update_token` (spec section 3), `token` being the app token. */
export interface AppUserInfo {
  avatar: string;
  avatar_md5: string;
  country: string;
  email: string;
  firstname: string;
  lastname: string;
  mobile: string;
  nickname: string;
  token: string;
  uid: string;
  from_pid: number;
}

/** What an app sends with `file/export` (spec section 3). */
export interface AppExportFileInfo {
  filename: string;
  size?: number;
  filesize?: number;
  download_url?: string;
  base64_data?: string;
}
