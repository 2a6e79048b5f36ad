import { APP_REQUESTS, LIMITS, appMessage, type AppMessage, type EcologyApp } from '@skyferry/contract';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { EMPTY_USER, patchUser } from '../session/store.ts';
import {
  acceptAppMessage,
  exportInfoOf,
  frameUrlOf,
  handleAppRequest,
  sandboxOf,
  targetOriginOf,
  type HostLink,
} from './host.ts';
import { appIdOf, closeApp, isOfficeTab, officeOf, openApp, tabsStore } from './tabs.ts';

vi.mock('../session/navigation.ts', () => ({ navigateTo: vi.fn() }));
const openLogin = vi.fn(async () => undefined);
vi.mock('../auth/login.ts', () => ({ openLogin: () => openLogin() }));
vi.mock('./api.ts', () => ({
  ecologyApi: {
    usage: vi.fn(async () => null),
    issueToken: vi.fn(async () => ({
      token: 'sk_app_x',
      expires_at: 0,
      files: [{ file_id: 'f1', name: 'a.png', writable: true }],
    })),
    revokeToken: vi.fn(async () => null),
    openOffice: vi.fn(async () => ({
      url: 'https://office.example.com/editor/Docs/tok%2Ben?WOPISrc=http%3A%2F%2Fh%2Fwopi%2Ffiles%2Ff1',
      office: { name: 'Docs', token: 'tok+en' },
      wopi_src: 'http://h/wopi/files/f1',
      access_token_ttl: 0,
      file_name: 'plan.docx',
    })),
  },
}));
const warned = vi.fn();
vi.mock('../messages/toast.ts', () => ({ toast: { warning: (m: string) => warned(m) } }));

const external: EcologyApp = {
  app_id: 100,
  name: 'Sketch pad',
  description: '',
  icon: '',
  url: 'https://sketch.example.com/app/',
  origin: 'https://sketch.example.com',
  function_id: 1,
  is_mandatory_login: false,
  state: 1,
  functions: [{ id: 1, name: 'Draw', url: 'https://sketch.example.com/draw', action: 'edit', extensions: ['png'] }],
  office: null,
  first_party: false,
};
const viewer: EcologyApp = { ...external, app_id: 1, url: '/apps/viewer.html', origin: 'null', first_party: true };

describe('the app host', () => {
  it('takes a message only from the tab’s own frame and the app’s registered origin', () => {
    const frame = {} as Window;
    const other = {} as Window;
    const data = appMessage(APP_REQUESTS.getToken, undefined, 's1');
    expect(
      acceptAppMessage({ source: frame, origin: 'https://sketch.example.com', data }, frame, external),
    ).toMatchObject({ kind: 'user/get_token', session_id: 's1' });
    // Another window of the same origin (a frame inside the app, a popup), another origin, another protocol.
    expect(acceptAppMessage({ source: other, origin: 'https://sketch.example.com', data }, frame, external)).toBeNull();
    expect(acceptAppMessage({ source: frame, origin: 'https://evil.example.net', data }, frame, external)).toBeNull();
    expect(
      acceptAppMessage(
        { source: frame, origin: 'https://sketch.example.com', data: { ...data, version: 'v2' } },
        frame,
        external,
      ),
    ).toBeNull();
    // A first-party app runs in an opaque sandbox: its origin is 'null', anything else is refused.
    expect(acceptAppMessage({ source: frame, origin: 'null', data }, frame, viewer)).not.toBeNull();
    expect(acceptAppMessage({ source: frame, origin: 'https://sketch.example.com', data }, frame, viewer)).toBeNull();
  });

  it('posts to an external app’s exact origin and sandboxes frames; never the host’s origin with its storage', () => {
    expect(targetOriginOf(external)).toBe('https://sketch.example.com');
    expect(sandboxOf(viewer, 'http://127.0.0.1:8080')).not.toContain('allow-same-origin');
    expect(sandboxOf(external, 'http://127.0.0.1:8080')).toContain('allow-same-origin');
    expect(sandboxOf({ ...external, origin: 'http://127.0.0.1:8080' }, 'http://127.0.0.1:8080')).not.toContain(
      'allow-same-origin',
    );
    expect(sandboxOf(external, 'x')).toContain('allow-scripts');
  });

  it('opens a function’s address with is_open_file=1', () => {
    const url = new URL(frameUrlOf({ app: external, functionId: 1, files: [] }, 'de'));
    expect(url.origin + url.pathname).toBe('https://sketch.example.com/draw');
    expect(url.searchParams.get('is_open_file')).toBe('1');
    expect(
      new URL(frameUrlOf({ app: external, functionId: null, files: [] }, 'de')).searchParams.has('is_open_file'),
    ).toBe(false);
  });

  it('accepts an export with a download_url or base64_data only', () => {
    expect(exportInfoOf({ filename: 'a.png', size: 3, base64_data: 'AAA' })).toMatchObject({ filename: 'a.png' });
    expect(exportInfoOf({ filename: 'a.png', size: 3 })).toBeNull();
    expect(exportInfoOf('a')).toBeNull();
  });
});

describe('the host’s answers', () => {
  const tab = { key: '100-x', app: external, functionId: 1, label: 'a.png', files: [], current: 0 };
  const run = async (kind: string) => {
    const posted: AppMessage[] = [];
    const link: HostLink = {
      tab: { ...tab, files: [{ cloud_id: 'c', path: '/a.png', name: 'a.png' }] },
      post: (m) => posted.push(m),
      language: () => 'en',
    };
    const [type = '', request = ''] = kind.split('/');
    await handleAppRequest(link, { ...appMessage(APP_REQUESTS.loaded), type, request, session_id: 's9', kind });
    return posted;
  };

  it('answers loading/completed with the user info and the app’s own token, then the opened files', async () => {
    patchUser({
      ...EMPTY_USER,
      uid: 'u1',
      email: 'a@example.com',
      access_token: 'sk_at_account',
      token_type: 'Bearer',
    });
    const posted = await run('loading/completed');
    expect(posted.map((m) => `${m.type}/${m.request}`)).toEqual(['user/update_token', 'file/edit']);
    expect(posted[0]).toMatchObject({
      version: 'v1',
      mode: 'parent2iframe',
      code: 200,
      data: { uid: 'u1', email: 'a@example.com', token: 'sk_app_x' },
    });
    expect(Object.keys(posted[0]?.data as object).sort()).toEqual([
      'avatar',
      'avatar_md5',
      'country',
      'email',
      'firstname',
      'from_pid',
      'lastname',
      'mobile',
      'nickname',
      'token',
      'uid',
    ]);
    expect(posted[1]).toMatchObject({ data: { token: 'sk_app_x', current_file_id: 'f1' } });
    expect(JSON.stringify(posted)).not.toContain('sk_at_account');
    const asked = await run('user/get_token');
    expect(asked[0]).toMatchObject({ type: 'user', request: 'get_token', session_id: 's9', code: 200 });
  });

  it('sends a logout to apps while signed out, and opens the login panel for get_token', async () => {
    patchUser({ ...EMPTY_USER });
    expect((await run('loading/completed')).map((m) => `${m.type}/${m.request}`)).toEqual(['user/logout', 'file/edit']);
    const asked = await run('user/get_token');
    expect(asked[0]).toMatchObject({ code: 401, session_id: 's9' });
    expect(openLogin).toHaveBeenCalled();
  });
});

describe('app tabs', () => {
  beforeEach(() => {
    for (const t of tabsStore.getState().tabs) closeApp(t.key);
    warned.mockClear();
  });

  it('opens the login panel instead of an app that needs a login, for a visitor', async () => {
    expect(openApp({ ...external, is_mandatory_login: true })).toBe(false);
    expect(tabsStore.getState().tabs).toHaveLength(0);
    await vi.waitFor(() => expect(openLogin).toHaveBeenCalled());
  });

  it('tells the server an app was opened only when signed in', async () => {
    const { ecologyApi } = await import('./api.ts');
    const usage = vi.mocked(ecologyApi.usage);
    usage.mockClear();
    patchUser({ ...EMPTY_USER });
    openApp(viewer, { files: [{ cloud_id: 'c', path: '/v.png', name: 'v.png' }] });
    expect(usage).not.toHaveBeenCalled();
    patchUser({ ...EMPTY_USER, uid: 'u1', access_token: 'sk_at_account', token_type: 'Bearer' });
    openApp(external);
    expect(usage).toHaveBeenCalledWith(100);
    patchUser({ ...EMPTY_USER });
  });

  it('reads the numeric app id before a hyphen', () => {
    expect(appIdOf('12-x')).toBe(12);
    expect(appIdOf('12')).toBe(12);
    expect(appIdOf('x12')).toBeNull();
    expect(appIdOf(null)).toBeNull();
  });

  it('opens at most 15 apps; the 16th is refused with the spec’s message', async () => {
    for (let i = 0; i < LIMITS.openApps; i += 1)
      expect(openApp(viewer, { files: [{ cloud_id: 'c', path: `/p${i}.png`, name: `p${i}.png` }] })).toBe(true);
    expect(openApp(external)).toBe(false);
    expect(tabsStore.getState().tabs).toHaveLength(15);
    await vi.waitFor(() =>
      expect(warned).toHaveBeenCalledWith('Too many pages are currently open, please close a few and try again'),
    );
    // Opening an app that has a tab shows it again instead.
    closeApp(tabsStore.getState().tabs[0]?.key ?? '');
    expect(openApp(external)).toBe(true);
    expect(openApp(external)).toBe(true);
    expect(tabsStore.getState().tabs.filter((t) => t.app.app_id === 100)).toHaveLength(1);
  });

  it('opens an office app (state 2) at the address the server made, and posts the file name and token to its service on close', async () => {
    const office: EcologyApp = {
      ...external,
      app_id: 101,
      state: 2,
      url: 'https://office.example.com/editor/',
      origin: 'https://office.example.com',
      office: { name: 'Docs', token: '' },
    };
    const posted = vi.fn(async (_url: string, _init: RequestInit) => new Response(null));
    vi.stubGlobal('fetch', posted);
    try {
      expect(openApp(office, { files: [{ cloud_id: 'c', path: '/plan.docx', name: 'plan.docx' }] })).toBe(true);
      const tab = tabsStore.getState().tabs.find((t) => t.app.app_id === 101);
      if (!tab) throw new Error('no tab');
      expect(isOfficeTab(tab)).toBe(true);
      expect(isOfficeTab({ ...tab, app: external })).toBe(false);
      const { ecologyApi } = await import('./api.ts');
      expect((await officeOf(tab)).url).toBe(
        'https://office.example.com/editor/Docs/tok%2Ben?WOPISrc=http%3A%2F%2Fh%2Fwopi%2Ffiles%2Ff1',
      );
      expect(vi.mocked(ecologyApi.openOffice)).toHaveBeenCalledWith(101, { cloud_id: 'c', path: '/plan.docx' });
      closeApp(tab.key);
      await vi.waitFor(() => expect(posted).toHaveBeenCalled());
      const [url, init] = posted.mock.calls[0] as [string, RequestInit];
      expect(url).toBe('https://office.example.com/editor/Docs/close');
      expect([init.method, init.credentials]).toEqual(['POST', 'omit']);
      expect(JSON.parse(String(init.body))).toEqual({ file_name: 'plan.docx', token: 'tok+en' });
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
