import {
  SUPPORT_CHANNEL,
  type MyTicketsData,
  type OperatorTicket,
  type OperatorTicketsData,
  type SupportFormData,
  type TicketBody,
  type TicketCreatedData,
  type TicketStatus,
  type VersionData,
} from '@skyferry/contract';
import { api, apiWithMessage } from '../../api/client.ts';
import { sessionApi } from '../session/api.ts';
import { patchSettings, selectLoggedIn, sessionStore } from '../session/store.ts';

/** The query every support call carries (spec section 7): channel 3, language, product id and version. */
function supportQuery() {
  const { settings } = sessionStore.getState();
  return { channel: SUPPORT_CHANNEL, lang: settings.language, product_id: settings.pid, version: settings.version };
}

/**
 * A visitor needs a temporary identity before the support calls (the dialog fetches one first when
 * it has none); a signed-in user sends their own token and makes no /api/token call.
 */
export async function ensureSupportIdentity(): Promise<void> {
  const state = sessionStore.getState();
  if (selectLoggedIn(state) || state.settings.temp_token) return;
  const visitor = await sessionApi.visitorToken();
  patchSettings({ temp_token: visitor.access_token });
}

export const supportApi = {
  form: () => api<SupportFormData>('/v1/support/forms/dynamic', { method: 'GET', query: supportQuery() }),
  send: (body: TicketBody) => apiWithMessage<TicketCreatedData>('/v1/support/tickets', { body, query: supportQuery() }),
  mine: () => api<MyTicketsData>('/api/support/tickets', { method: 'GET' }),
  version: (version: string) => api<VersionData>(`/api/version/${encodeURIComponent(version)}`, { method: 'GET' }),
};

/** The operator's inbox. */
export const inboxApi = {
  list: (status: TicketStatus | undefined, page = 1) =>
    api<OperatorTicketsData>('/api/operator/tickets', { method: 'GET', query: { status, page, page_size: 50 } }),
  get: (id: string) => api<OperatorTicket>(`/api/operator/tickets/${encodeURIComponent(id)}`, { method: 'GET' }),
  reply: (id: string, body: string) =>
    api<OperatorTicket>(`/api/operator/tickets/${encodeURIComponent(id)}/reply`, { body: { body } }),
  setStatus: (id: string, status: TicketStatus) =>
    api<OperatorTicket>(`/api/operator/tickets/${encodeURIComponent(id)}/status`, { method: 'PUT', body: { status } }),
};
