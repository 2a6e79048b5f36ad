import {
  TIMEOUTS,
  type AppTokenData,
  type AppsData,
  type EcologyApp,
  type ExternalAppBody,
  type MyAppsData,
  type OfficeOpenData,
} from '@skyferry/contract';
import { api } from '../../api/client.ts';

/** The embedded-app host's calls (spec section 7): its own headers, no cookies, 30 s each, answers unwrapped to their data. */
const host = { timeoutMs: TIMEOUTS.embeddedHostRequest, client: 'embedded-host' } as const;

export const ecologyApi = {
  list: () => api<AppsData>('/ecology/v1/apps', { ...host, method: 'GET', query: { show_office: 1 } }),
  mine: () => api<MyAppsData>('/ecology/v1/apps/me', { ...host, method: 'GET' }),
  get: (appId: number) => api<EcologyApp>(`/ecology/v1/apps/${appId}`, { ...host, method: 'GET' }),
  /** Only when signed in, on opening an app, no payload. */
  usage: (appId: number) => api<null>(`/ecology/v1/apps/usage/${appId}`, { ...host, method: 'PUT' }),
  issueToken: (appId: number, files: Array<{ cloud_id: string; path: string }>) =>
    api<AppTokenData>('/ecology/v1/app-tokens', { ...host, body: { app_id: appId, files } }),
  revokeToken: (token: string) => api<null>('/ecology/v1/app-tokens/revoke', { ...host, body: { token } }),
  /** An office-type app's frame address and WOPI token for one file. */
  openOffice: (appId: number, file: { cloud_id: string; path: string }) =>
    api<OfficeOpenData>('/ecology/v1/office/open', { ...host, body: { app_id: appId, ...file } }),
  // The operator's registrations.
  listExternal: () => api<{ items: EcologyApp[] }>('/api/operator/apps', { method: 'GET' }),
  register: (body: ExternalAppBody) => api<EcologyApp>('/api/operator/apps', { body }),
  remove: (appId: number) => api<null>(`/api/operator/apps/${appId}`, { method: 'DELETE' }),
};
