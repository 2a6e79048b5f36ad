import { i18n } from '../../i18n/index.ts';
import { api, apiWithMessage } from '../../api/client.ts';
import type { AuthData, BindCloudsData, CloudsMe, InitData, MeData, SystemCloud, VisitorToken } from './types.ts';

/** The accounts and clouds calls of spec section 7 that the shell makes. */
export const sessionApi = {
  /** The client's origin goes along: the account pages post their messages there. */
  init: () =>
    api<InitData>('/api/v2/init', {
      method: 'GET',
      query: { origin: window.location.origin, lang: i18n.language || 'en' },
    }),
  refresh: (username: string, refresh_token: string) =>
    api<AuthData>('/api/v2/authorizations', {
      body: { grant_type: 'refresh_token', refresh_token, ...(username ? { username } : {}) },
    }),
  autoLogin: (username: string, auto_login_token: string) =>
    api<AuthData>('/api/v2/authorizations', {
      body: { grant_type: 'auto_login', auto_login_token, ...(username ? { username } : {}) },
    }),
  me: () => api<MeData>('/api/users/me', { method: 'GET' }),
  notifyEmail: (notify_email: string, remind_me: 0 | 1) =>
    apiWithMessage<null>('/api/users/notify-email', { body: { notify_email, remind_me } }),
  logout: (tokens: { refresh_token?: string; auto_login_token?: string }) =>
    api<unknown>('/api/account/logout', { body: tokens }),
  visitorToken: () => api<VisitorToken>('/api/token', { method: 'GET' }),
  myClouds: () => api<CloudsMe>('/api/v2/clouds/me', { method: 'GET' }),
  sortClouds: (ids: string[]) =>
    api<null>('/api/clouds/sort', { method: 'PUT', body: { sort_val: JSON.stringify(ids) } }),
  /**
   * Binds the named temporary clouds (up to 5); every other one is discarded. [] discards all.
   * `sign_in_nonce` is the nonce of the sign-in this tab just made (the server checks it).
   */
  bindClouds: (ids: string[], signInNonce: string) =>
    api<BindCloudsData>('/api/clouds/bind', {
      body: { relation_id: ids.join(','), ...(signInNonce ? { sign_in_nonce: signInNonce } : {}) },
    }),
  systemClouds: () => api<SystemCloud[]>('/api/system/clouds', { method: 'GET' }),
};
