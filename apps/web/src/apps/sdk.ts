import {
  APP_PORT_OFFER,
  APP_REQUESTS,
  appMessage,
  parseAppMessage,
  type AppEditFileData,
  type AppExportFileInfo,
} from '@skyferry/contract/app-protocol';

/**
 * What every first-party app shares: the v1 parent2iframe protocol with the host (which answers
 * `loading/completed` with the files opened and a token that reaches only them), the app-token file
 * calls, and the interface language. The apps run sandboxed without Skyferry's origin: nothing here
 * can read the account's storage or token.
 */
export interface AppSession {
  token: string;
  apiBase: string;
  files: AppEditFileData['files'];
  currentFileId: string;
}

export interface FileInfo {
  file_id: string;
  name: string;
  writable: boolean;
  size: number;
  modified: number;
  mime_type: string;
  etag: string;
}

/** An answer whose code is not 0: the server's message, in the user's language. */
export class AppCallError extends Error {
  readonly code: number;
  readonly status: number;
  constructor(code: number, message: string, status: number) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

/** The host's origin: the app is served by the same server (its URL's origin, not the sandbox's 'null'). */
const HOST_ORIGIN = new URL(location.href).origin;

/**
 * The private channel the host hands this document when it has loaded: listened for as soon as the
 * module runs (before the load event), taken once, from the parent window only.
 */
const hostPort = new Promise<MessagePort>((resolve) => {
  const take = (event: MessageEvent) => {
    if (event.source !== window.parent || event.origin !== HOST_ORIGIN) return;
    const m = parseAppMessage(event.data);
    const port = event.ports[0];
    if (m?.kind !== APP_PORT_OFFER || !port) return;
    window.removeEventListener('message', take);
    resolve(port);
  };
  window.addEventListener('message', take);
});

/**
 * Announces the app (loading/completed) on the host's channel, then calls `onFiles` with each
 * file-edit message and `onLogout` when the host signs out.
 */
export function connectToHost(handlers: { onFiles: (s: AppSession) => void; onLogout?: () => void }): void {
  void hostPort.then((port) => {
    port.onmessage = (event: MessageEvent) => {
      const m = parseAppMessage(event.data);
      if (!m) return;
      if (m.kind === APP_REQUESTS.editFile) {
        const d = m.data as AppEditFileData;
        handlers.onFiles({ token: d.token, apiBase: d.api_base, files: d.files, currentFileId: d.current_file_id });
      } else if (m.kind === APP_REQUESTS.logout) handlers.onLogout?.();
    };
    port.postMessage(appMessage(APP_REQUESTS.loaded));
  });
}

/** Asks the host to export a file (file/export): its Export to dialog opens. */
export function requestExport(info: AppExportFileInfo): void {
  void hostPort.then((port) => port.postMessage(appMessage(APP_REQUESTS.exportFile, info)));
}

/** A file's bytes as base64 (for an export of a small file the app made). */
export async function base64Of(s: AppSession, fileId: string): Promise<string> {
  const res = await fetch(fileUrl(s, fileId, '/content'), { headers: { authorization: `Bearer ${s.token}` } });
  if (!res.ok) throw new AppCallError(-1, res.statusText, res.status);
  const bytes = new Uint8Array(await res.arrayBuffer());
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

function fileUrl(s: AppSession, fileId: string, suffix = ''): string {
  return `${s.apiBase}/ecology/v1/app/files/${encodeURIComponent(fileId)}${suffix}`;
}

/** The address of a file's bytes (for <img>, <video>, pdf.js): the token rides in the query. */
export function contentUrl(s: AppSession, fileId: string): string {
  return `${fileUrl(s, fileId, '/content')}?app_token=${encodeURIComponent(s.token)}`;
}

/** A HEIC/HEIF picture decoded by the server, as a JPEG an `<img>` shows. */
export function pictureUrl(s: AppSession, fileId: string): string {
  return `${fileUrl(s, fileId, '/picture')}?app_token=${encodeURIComponent(s.token)}`;
}

async function call<T>(s: AppSession, url: string, init: RequestInit = {}): Promise<T> {
  const res = await fetch(url, {
    ...init,
    headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${s.token}` },
  });
  const body = (await res.json().catch(() => null)) as { code: number; msg: string; data: T } | null;
  if (!body) throw new AppCallError(-1, res.statusText, res.status);
  if (body.code !== 0) throw new AppCallError(body.code, body.msg, res.status);
  return body.data;
}

export const files = {
  info: (s: AppSession, fileId: string) => call<FileInfo>(s, fileUrl(s, fileId)),
  /** The first `limit` bytes of a file as text (a range: a large log is not fetched whole). */
  async text(s: AppSession, fileId: string, limit: number): Promise<{ text: string; truncated: boolean }> {
    const res = await fetch(fileUrl(s, fileId, '/content'), {
      headers: { authorization: `Bearer ${s.token}`, range: `bytes=0-${limit - 1}` },
    });
    if (!res.ok && res.status !== 416) throw new AppCallError(-1, res.statusText, res.status);
    if (res.status === 416) return { text: '', truncated: false };
    const total = Number(/\/(\d+)$/.exec(res.headers.get('content-range') ?? '')?.[1] ?? '0');
    return { text: await res.text(), truncated: total > limit };
  },
  save: (s: AppSession, fileId: string, text: string, etag: string) =>
    call<FileInfo>(s, fileUrl(s, fileId, '/content'), {
      method: 'PUT',
      headers: { 'content-type': 'text/plain; charset=utf-8', 'if-match': etag },
      body: text,
    }),
  saveAs: (s: AppSession, fileId: string, name: string, text: string) =>
    call<FileInfo>(s, `${fileUrl(s, fileId, '/save-as')}?name=${encodeURIComponent(name)}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      body: text,
    }),
  convert: (
    s: AppSession,
    fileId: string,
    body: { format: string; max_side?: number; quality?: number; name: string },
  ) =>
    call<FileInfo>(s, fileUrl(s, fileId, '/convert'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
};

type Tree = { [key: string]: string | Tree };
const bundles = import.meta.glob<Tree>('../i18n/locales/*/apps.json', { import: 'default' });
let strings: Tree = {};

/** Loads the interface language's strings (the host passes it as ?lang=), English when unknown. */
export async function loadStrings(): Promise<string> {
  const asked = new URLSearchParams(location.search).get('lang') ?? 'en';
  const lang = bundles[`../i18n/locales/${asked}/apps.json`] ? asked : 'en';
  strings = (await bundles[`../i18n/locales/${lang}/apps.json`]?.()) ?? {};
  document.documentElement.lang = lang;
  document.documentElement.dir = lang === 'ar' ? 'rtl' : 'ltr';
  return lang;
}

/** A string of apps.json by dotted key, `{{name}}` filled in. */
export function t(key: string, params: Record<string, string | number> = {}): string {
  let node: string | Tree | undefined = strings;
  for (const part of key.split('.')) node = typeof node === 'object' ? node[part] : undefined;
  const text = typeof node === 'string' ? node : key;
  return text.replace(/\{\{(\w+)\}\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}

/** A small element helper: tag, attributes, children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: Array<Node | string>
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  el.append(...children);
  return el;
}

export function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
}

/**
 * Markdown as sanitised HTML (no script, handler or frame from a file reaches the page); links open
 * in a new window, so the app's frame never navigates away.
 */
export async function renderMarkdown(text: string): Promise<string> {
  const [{ marked }, { default: DOMPurify }] = await Promise.all([import('marked'), import('dompurify')]);
  DOMPurify.addHook('afterSanitizeAttributes', (node) => {
    if (node.tagName === 'A') {
      node.setAttribute('target', '_blank');
      node.setAttribute('rel', 'noopener noreferrer');
    }
  });
  try {
    return DOMPurify.sanitize(await marked.parse(text, { async: true }));
  } finally {
    DOMPurify.removeHook('afterSanitizeAttributes');
  }
}
