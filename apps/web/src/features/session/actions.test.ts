import { Code, INTERVALS } from '@skyferry/contract';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Fail, authData, cloud, initData, mockApi } from '../../test/utils.tsx';
import { authUiStore, resetAuthUi } from '../auth/store.ts';
import { STORAGE_KEYS } from '../../lib/storage.ts';
import { cloudsToBind, finishBind, lightLogout, login, logout, tokenRefresher } from './actions.ts';
import { patchForm, transferStore } from '../transfer/store.ts';
import { onSessionEvent } from './events.ts';
import { setNavigator, setReloader } from './navigation.ts';
import { resetSessionStore, sessionStore } from './store.ts';
import { configureSessionClient } from './client-setup.ts';

configureSessionClient();

const navigations: string[] = [];
const reloads: string[] = [];

beforeEach(() => {
  localStorage.clear();
  resetSessionStore();
  resetAuthUi();
  navigations.length = 0;
  reloads.length = 0;
  setNavigator((to) => navigations.push(to));
  setReloader((to) => reloads.push(to));
  sessionStore.setState({ init: initData() });
});
afterEach(() => {
  tokenRefresher.stop();
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe('login', () => {
  it('stores tokens, uid, info, packets, subscription and licences, refreshes the cloud lists and starts the refresh', async () => {
    const api = mockApi({
      'GET /api/v2/clouds/me': () => ({ clouds: [cloud('a')], temp_clouds: [] }),
      'GET /api/system/clouds': () => [],
    });
    const events: string[] = [];
    const off = onSessionEvent('login', () => events.push('login'));
    await login(
      authData({
        my_subscribe: [{ data_packet_name: '1 Month', purchase_state: 1, expires_date: 1_900_000_000 }],
        licenses: [
          {
            id: 'month',
            name: '1 Month',
            period: 'monthly',
            months: 1,
            monthly_allowance: 1,
            price: 1,
            currency: 'USD',
          },
        ],
      }),
    );
    off();
    const { user, clouds, settings } = sessionStore.getState();
    expect(user).toMatchObject({
      uid: 'u1',
      email: 'ada@example.com',
      access_token: 'access-1',
      refresh_token: 'refresh-1',
      token_type: 'Bearer',
      auto_login_token: 'auto-1',
      auto_login: true,
    });
    expect(user.subscribe[0]?.data_packet_name).toBe('1 Month');
    expect(settings.licenses).toHaveLength(1);
    expect(clouds.map((c) => c.id)).toEqual(['a']);
    expect(api.find('GET /api/system/clouds')).toHaveLength(1);
    expect(api.find('GET /api/v2/clouds/me')[0]?.headers.authorization).toBe('Bearer access-1');
    expect(events).toEqual(['login']);
    expect(tokenRefresher.running).toBe(true);
    expect(JSON.parse(localStorage.getItem(STORAGE_KEYS.user) ?? '{}').access_token).toBe('access-1');
  });

  const NONCE = 'n'.repeat(43);

  it('offers the visitor’s temporary clouds for binding, and binding sends at most 5, most recent first', async () => {
    const temp = Array.from({ length: 7 }, (_, i) => cloud(`t${i}`, { type: 1, bound: false, last_used_at: i * 10 }));
    const api = mockApi({
      'GET /api/v2/clouds/me': () => ({ clouds: [], temp_clouds: temp }),
      'GET /api/system/clouds': () => [],
      'POST /api/clouds/bind': () => ({ bound: [], discarded: [] }),
    });
    await login(authData(), { signInNonce: NONCE });
    const prompt = authUiStore.getState().bindPrompt;
    expect(prompt).toHaveLength(7);
    const chosen = cloudsToBind(prompt ?? [], 5).map((c) => c.id);
    expect(chosen).toEqual(['t6', 't5', 't4', 't3', 't2']);
    await finishBind(cloudsToBind(prompt ?? [], 5));
    // The sign-in's nonce goes along: the server binds only into the account this tab signed in to.
    expect(api.find('POST /api/clouds/bind')[0]?.body).toEqual({
      relation_id: 't6,t5,t4,t3,t2',
      sign_in_nonce: NONCE,
    });
    expect(authUiStore.getState().bindPrompt).toBeNull();
    expect(authUiStore.getState().bindNonce).toBeNull();
    expect(sessionStore.getState().settings.temp_token).toBe('');
  });

  it('a login without the sign-in nonce of this tab never offers binding', async () => {
    mockApi({
      'GET /api/v2/clouds/me': () => ({ clouds: [], temp_clouds: [cloud('t1', { type: 1, bound: false })] }),
      'GET /api/system/clouds': () => [],
    });
    await login(authData());
    expect(sessionStore.getState().user.access_token).toBe('access-1');
    expect(authUiStore.getState().bindPrompt).toBeNull();
  });

  it('discarding sends an empty relation_id', async () => {
    const api = mockApi({
      'GET /api/v2/clouds/me': () => ({ clouds: [], temp_clouds: [] }),
      'POST /api/clouds/bind': () => ({ bound: [], discarded: ['t1'] }),
    });
    authUiStore.setState({ bindNonce: NONCE });
    await finishBind([]);
    expect(api.find('POST /api/clouds/bind')[0]?.body).toEqual({ relation_id: '', sign_in_nonce: NONCE });
  });
});

describe('logout', () => {
  it('revokes on the server, clears tokens, auto-login data and clouds, opens the sign-out frame and reloads at / after 800 ms', async () => {
    vi.useFakeTimers();
    const api = mockApi({
      'GET /api/v2/clouds/me': () => ({ clouds: [cloud('a')], temp_clouds: [] }),
      'GET /api/system/clouds': () => [],
      'POST /api/account/logout': () => null,
    });
    await login(authData());
    localStorage.setItem(STORAGE_KEYS.recentClouds, JSON.stringify([{ id: 'a', at: 1 }]));
    const events: string[] = [];
    const off = onSessionEvent('logout', () => events.push('logout'));
    await logout();
    off();
    const call = api.find('POST /api/account/logout')[0];
    expect(call?.headers.authorization).toBe('Bearer access-1');
    expect(call?.body).toEqual({ refresh_token: 'refresh-1', auto_login_token: 'auto-1' });
    const { user, clouds } = sessionStore.getState();
    expect(user.access_token).toBe('');
    expect(user.refresh_token).toBe('');
    expect(user.auto_login_token).toBe('');
    expect(user.auto_login).toBe(false);
    expect(clouds).toEqual([]);
    expect(localStorage.getItem(STORAGE_KEYS.user)).toBeNull();
    expect(localStorage.getItem(STORAGE_KEYS.recentClouds)).toBeNull();
    expect(events).toEqual(['logout']);
    expect(tokenRefresher.running).toBe(false);
    expect(authUiStore.getState().logoutFrameSrc).toContain('/account/signout');
    await vi.advanceTimersByTimeAsync(INTERVALS.logoutReloadDelay - 1);
    expect(reloads).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(reloads).toEqual(['/']);
  });

  it('clears the migrate and sync selections', async () => {
    vi.useFakeTimers();
    mockApi({
      'GET /api/v2/clouds/me': () => ({ clouds: [cloud('a')], temp_clouds: [] }),
      'GET /api/system/clouds': () => [],
      'POST /api/account/logout': () => null,
    });
    await login(authData());
    patchForm('migrate', { sourceCloudId: 'a', targetCloudId: 'a', targetPath: '/Backup' });
    patchForm('sync', { sourceCloudId: 'a', syncMode: 'mirror' });
    await logout();
    const { migrate, sync } = transferStore.getState();
    expect([migrate.sourceCloudId, migrate.targetCloudId, migrate.targetPath]).toEqual([null, null, '/']);
    expect([sync.sourceCloudId, sync.syncMode]).toEqual([null, 'one_way']);
  });

  it('light logout keeps the auto-login data and goes to /loading', async () => {
    mockApi({ 'GET /api/v2/clouds/me': () => ({ clouds: [], temp_clouds: [] }), 'GET /api/system/clouds': () => [] });
    await login(authData());
    lightLogout();
    const { user } = sessionStore.getState();
    expect(user.access_token).toBe('');
    expect(user.refresh_token).toBe('');
    expect(user.auto_login_token).toBe('auto-1');
    expect(user.auto_login).toBe(true);
    expect(user.email).toBe('ada@example.com');
    expect(navigations).toEqual(['/loading']);
    expect(tokenRefresher.running).toBe(false);
  });

  it('a call answered 140013 refreshes the tokens once and is retried; a refresh answered 230011 is a light logout', async () => {
    mockApi({ 'GET /api/v2/clouds/me': () => ({ clouds: [], temp_clouds: [] }), 'GET /api/system/clouds': () => [] });
    await login(authData());
    let meCalls = 0;
    const api = mockApi({
      'GET /api/users/me': (c) => {
        meCalls += 1;
        return c.headers.authorization === 'Bearer access-2'
          ? { user_info: authData().user_info, my_data_packet: { base: [], additional: [] }, my_subscribe: [] }
          : new Fail(Code.UNAUTHENTICATED, 'expired', 401);
      },
      'POST /api/v2/authorizations': () => authData({ access_token: 'access-2', refresh_token: 'refresh-2' }),
    });
    const { refreshMe } = await import('./actions.ts');
    await refreshMe();
    expect(meCalls).toBe(2);
    expect(api.find('POST /api/v2/authorizations')[0]?.body).toMatchObject({
      grant_type: 'refresh_token',
      refresh_token: 'refresh-1',
      // The account's id, which an email change (made on any device) leaves as it is.
      username: 'u1',
    });
    expect(sessionStore.getState().user.refresh_token).toBe('refresh-2');

    mockApi({
      'GET /api/users/me': () => new Fail(Code.UNAUTHENTICATED, 'expired', 401),
      'POST /api/v2/authorizations': () => new Fail(Code.REFRESH_REJECTED, 'rejected', 401),
    });
    await expect(refreshMe()).rejects.toThrow();
    expect(sessionStore.getState().user.access_token).toBe('');
    expect(sessionStore.getState().user.auto_login_token).toBe('auto-1');
    expect(navigations).toContain('/loading');
  });
});

describe('several tabs', () => {
  it('a tab takes the tokens another tab stored, and starts over when another tab logged out', async () => {
    const { syncSessionAcrossTabs } = await import('./actions.ts');
    mockApi({ 'GET /api/v2/clouds/me': () => ({ clouds: [], temp_clouds: [] }), 'GET /api/system/clouds': () => [] });
    await login(authData());
    const stop = syncSessionAcrossTabs();
    const rotated = { ...sessionStore.getState().user, access_token: 'access-9', refresh_token: 'refresh-9' };
    window.dispatchEvent(
      new StorageEvent('storage', {
        key: STORAGE_KEYS.user,
        newValue: JSON.stringify(rotated),
        storageArea: localStorage,
      }),
    );
    expect(sessionStore.getState().user.refresh_token).toBe('refresh-9');
    expect(reloads).toEqual([]);
    window.dispatchEvent(
      new StorageEvent('storage', { key: STORAGE_KEYS.user, newValue: null, storageArea: localStorage }),
    );
    expect(reloads).toEqual(['/']);
    stop();
  });
});
