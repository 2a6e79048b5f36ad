import { INTERVALS } from '@skyferry/contract';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Fail, authData, cloud, initData, mockApi } from '../../test/utils.tsx';
import { STORAGE_KEYS } from '../../lib/storage.ts';
import { tokenRefresher } from '../session/actions.ts';
import { configureSessionClient } from '../session/client-setup.ts';
import { setNavigator } from '../session/navigation.ts';
import { resetSessionStore, sessionStore } from '../session/store.ts';
import { runStartup, watchNetwork } from './startup.ts';

configureSessionClient();
const navigations: string[] = [];

function setOnline(online: boolean) {
  vi.spyOn(navigator, 'onLine', 'get').mockReturnValue(online);
}

beforeEach(() => {
  localStorage.clear();
  resetSessionStore();
  navigations.length = 0;
  setNavigator((to) => navigations.push(to));
  setOnline(true);
});
afterEach(() => {
  tokenRefresher.stop();
  vi.restoreAllMocks();
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

describe('start-up', () => {
  it('offline: goes to the error page and stays there (nothing is requested)', async () => {
    setOnline(false);
    const api = mockApi({});
    expect(await runStartup()).toBe('offline');
    expect(navigations).toEqual(['/error?src=offline']);
    expect(api.calls).toEqual([]);
    expect(sessionStore.getState().online).toBe(false);
  });

  it('settings init failure: the error page with the reason "setting init error"', async () => {
    mockApi({ 'GET /api/v2/init': () => new Fail(500001, 'boom', 500) });
    expect(await runStartup()).toBe('error');
    expect(navigations).toEqual(['/error?src=setting%20init%20error']);
  });

  it('a visitor: keeps the init temp token, sends it, and loads the temporary clouds', async () => {
    const api = mockApi({
      'GET /api/v2/init': () => initData({ temp_token: 'visitor-9' }),
      'GET /api/v2/clouds/me': () => ({ clouds: [], temp_clouds: [cloud('t1', { type: 1 })] }),
      'GET /api/system/clouds': () => [],
    });
    expect(await runStartup()).toBe('ready');
    const init = api.find('GET /api/v2/init')[0];
    expect(init?.query.get('origin')).toBe(window.location.origin);
    expect(api.find('GET /api/v2/clouds/me')[0]?.headers['x-temp-authorization']).toBe('visitor-9');
    expect(api.find('POST /api/v2/authorizations')).toEqual([]);
    expect(sessionStore.getState().tempClouds.map((c) => c.id)).toEqual(['t1']);
    expect(JSON.parse(localStorage.getItem(STORAGE_KEYS.tempToken) ?? '""')).toBe('visitor-9');
    expect(navigations).toEqual([]);
  });

  it('no token but auto-login data: logs in with grant auto_login and starts the refresh', async () => {
    localStorage.setItem(
      STORAGE_KEYS.user,
      JSON.stringify({ email: 'ada@example.com', auto_login_token: 'auto-7', auto_login: true }),
    );
    resetSessionStore();
    const api = mockApi({
      'GET /api/v2/init': () => initData(),
      'POST /api/v2/authorizations': () => authData({ access_token: 'access-7' }),
      'GET /api/v2/clouds/me': () => ({ clouds: [cloud('a')], temp_clouds: [] }),
      'GET /api/system/clouds': () => [],
    });
    expect(await runStartup()).toBe('ready');
    expect(api.find('POST /api/v2/authorizations')[0]?.body).toEqual({
      grant_type: 'auto_login',
      auto_login_token: 'auto-7',
      username: 'ada@example.com',
    });
    expect(sessionStore.getState().user.access_token).toBe('access-7');
    expect(sessionStore.getState().clouds.map((c) => c.id)).toEqual(['a']);
    expect(tokenRefresher.running).toBe(true);
  });

  it('auto-login names the account by its id when known: it stays when the email changes', async () => {
    localStorage.setItem(
      STORAGE_KEYS.user,
      JSON.stringify({ uid: 'u7', email: 'old@example.com', auto_login_token: 'auto-8', auto_login: true }),
    );
    resetSessionStore();
    const api = mockApi({
      'GET /api/v2/init': () => initData(),
      'POST /api/v2/authorizations': () => authData({ access_token: 'access-8' }),
      'GET /api/v2/clouds/me': () => ({ clouds: [], temp_clouds: [] }),
      'GET /api/system/clouds': () => [],
    });
    expect(await runStartup()).toBe('ready');
    expect(api.find('POST /api/v2/authorizations')[0]?.body).toMatchObject({ username: 'u7' });
  });

  it('a refused auto-login continues as a visitor', async () => {
    localStorage.setItem(
      STORAGE_KEYS.user,
      JSON.stringify({ email: 'a@b.c', auto_login_token: 'bad', auto_login: true }),
    );
    resetSessionStore();
    mockApi({
      'GET /api/v2/init': () => initData(),
      'POST /api/v2/authorizations': () => new Fail(230011, 'rejected', 401),
      'GET /api/v2/clouds/me': () => ({ clouds: [], temp_clouds: [] }),
      'GET /api/system/clouds': () => [],
    });
    expect(await runStartup()).toBe('ready');
    expect(sessionStore.getState().user.auto_login_token).toBe('');
    expect(tokenRefresher.running).toBe(false);
  });
});

describe('network changes', () => {
  it('going offline raises the offline error after 800 ms; back online goes to the default route after 750 ms', async () => {
    vi.useFakeTimers();
    const stop = watchNetwork();
    window.dispatchEvent(new Event('offline'));
    await vi.advanceTimersByTimeAsync(INTERVALS.offlineErrorDelay - 1);
    expect(navigations).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(navigations).toEqual(['/error?src=offline']);
    window.history.pushState(null, '', '/error?src=offline');
    window.dispatchEvent(new Event('online'));
    await vi.advanceTimersByTimeAsync(INTERVALS.onlineRedirectDelay - 1);
    expect(navigations).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(navigations).toEqual(['/error?src=offline', '/transfer']);
    stop();
    window.history.pushState(null, '', '/');
  });

  it('a blip shorter than 800 ms raises nothing', async () => {
    vi.useFakeTimers();
    const stop = watchNetwork();
    window.dispatchEvent(new Event('offline'));
    await vi.advanceTimersByTimeAsync(500);
    window.dispatchEvent(new Event('online'));
    await vi.advanceTimersByTimeAsync(2000);
    expect(navigations).toEqual([]);
    stop();
  });
});
