import { DirectionProvider, MantineProvider } from '@mantine/core';
import { Notifications } from '@mantine/notifications';
import { render, type RenderResult } from '@testing-library/react';
import type { ReactNode } from 'react';
import { createMemoryRouter, RouterProvider, type RouteObject } from 'react-router';
import { vi } from 'vitest';
import { theme } from '../app/theme.ts';
import type { AuthData, Cloud, InitData } from '../features/session/types.ts';

/** Renders inside Mantine and a memory router at `path` (extra routes may be given). */
export function renderWithProviders(
  ui: ReactNode,
  options: { path?: string; routes?: RouteObject[] } = {},
): RenderResult & { router: ReturnType<typeof createMemoryRouter> } {
  const router = createMemoryRouter([{ path: '*', element: ui }, ...(options.routes ?? [])], {
    initialEntries: [options.path ?? '/'],
  });
  const result = render(
    <DirectionProvider>
      <MantineProvider theme={theme}>
        <Notifications />
        <RouterProvider router={router} />
      </MantineProvider>
    </DirectionProvider>,
  );
  return { ...result, router };
}

export interface RecordedCall {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Record<string, string>;
  body: unknown;
}

type Handler = (call: RecordedCall) => unknown;

/** An answer with a non-zero envelope code (the server's error). */
export class Fail {
  readonly code: number;
  readonly msg: string;
  readonly status: number;
  readonly data: unknown;
  constructor(code: number, msg: string, status = 400, data: unknown = null) {
    this.code = code;
    this.msg = msg;
    this.status = status;
    this.data = data;
  }
}

/**
 * Replaces fetch with a table of "METHOD /path" handlers answering the envelope. A handler returns
 * the data (code 0), a Fail, or throws to simulate a network error. Unknown calls answer 404.
 */
export function mockApi(handlers: Record<string, Handler>) {
  const calls: RecordedCall[] = [];
  const fetchMock = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(String(input), window.location.origin);
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((v, k) => (headers[k] = v));
    const call: RecordedCall = {
      method: init?.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      headers,
      body: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined,
    };
    calls.push(call);
    const handler = handlers[`${call.method} ${call.path}`];
    if (!handler) return json({ code: 404, msg: 'not found', data: null }, 404);
    const data = await handler(call);
    if (data instanceof Fail) return json({ code: data.code, msg: data.msg, data: data.data }, data.status);
    return json({ code: 0, msg: 'success', data: data ?? null }, 200);
  });
  vi.stubGlobal('fetch', fetchMock);
  return { calls, fetchMock, find: (key: string) => calls.filter((c) => `${c.method} ${c.path}` === key) };
}

function json(body: unknown, status: number): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

export const ORIGIN = window.location.origin;

export function initData(overrides: Partial<InitData> = {}): InitData {
  return {
    licenses: [],
    popup_nps_rules: { interval_day: 30, condition_index_list: [0, 1] },
    sign_in_url: `${ORIGIN}/account/signin?origin=${encodeURIComponent(ORIGIN)}&lang=en`,
    sign_out_url: `${ORIGIN}/account/signout?origin=${encodeURIComponent(ORIGIN)}&lang=en`,
    sign_in_url_disable_cookies: `${ORIGIN}/account/signin?cookies=0`,
    sign_out_url_disable_cookies: `${ORIGIN}/account/signout?cookies=0`,
    wopi_url: `${ORIGIN}/ecology/v1/wopi`,
    mandatory_upgrade: false,
    temp_token: 'temp-1',
    billing_mode: 'off',
    service_notice: null,
    mail_delivery: true,
    ...overrides,
  };
}

export function authData(overrides: Partial<AuthData> = {}): AuthData {
  return {
    access_token: 'access-1',
    refresh_token: 'refresh-1',
    token_type: 'Bearer',
    expires_in: 900,
    uid: 'u1',
    auto_login_token: 'auto-1',
    licenses: [],
    user_info: {
      email: 'ada@example.com',
      role: 'user',
      type: 0,
      expired: 0,
      expire: 0,
      is_paid: false,
      notify_email: '',
      remind_me: 0,
      avatar: '',
      avatar_md5: '',
      country: '',
      firstname: 'Ada',
      lastname: '',
      mobile: '',
      nickname: '',
    },
    my_data_packet: { base: [], additional: [] },
    my_subscribe: [],
    ...overrides,
  };
}

export function cloud(id: string, overrides: Partial<Cloud> = {}): Cloud {
  return {
    id,
    cloud_id: `cid-${id}`,
    cloud_name: 'webdav',
    cloud_account: `${id}@dav.example`,
    cloud_alias_name: '',
    type: 0,
    space: 0,
    used_space: 0,
    status: 'authorized',
    flags: -1,
    sort: 0,
    created_at: 0,
    last_used_at: 0,
    shared: false,
    photos: false,
    bound: true,
    ...overrides,
  };
}

/** Names with a bidi control (U+202E): "invoice\u202Egpj.exe" looks like "invoiceexe.jpg" when shown as is. */
export const SPOOFED = {
  file: 'invoice\u202Egpj.exe',
  cloud: 'Bank\u202Etxt.exe',
  task: 'Backup\u2067 nightly',
} as const;

/**
 * What a user sees holds no bidi control that can reverse or reorder text: every control in the
 * page's text and in its tooltips and labels is shown as a mark, and the only ones left are the
 * isolates around names (FSI ... PDI, holding no control). Answers the marks shown.
 */
export function shownBidiMarks(root: Element = document.body): string[] {
  const controls = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;
  // Isolates may nest (a translated label holding a name, inside another label): open them inside out.
  const openIsolates = (text: string): string => {
    const opened = text.replace(/\u2068([^\u2068\u2069]*)\u2069/gu, '$1');
    return opened === text ? text : openIsolates(opened);
  };
  const texts = [root.textContent ?? ''];
  for (const el of root.querySelectorAll('*')) {
    for (const attr of ['title', 'aria-label', 'alt', 'label']) {
      const value = el.getAttribute(attr);
      if (value) texts.push(value);
    }
  }
  for (const text of texts) {
    if (controls.test(openIsolates(text))) throw new Error(`a bidi control is shown as is: ${JSON.stringify(text)}`);
  }
  return [...root.querySelectorAll('[data-testid="bidi-mark"]')].map((m) => m.textContent ?? '');
}
