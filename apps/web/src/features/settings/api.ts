import type {
  AccountSessionsData,
  ChangeEmailData,
  ChangePasswordData,
  DeleteAccountData,
  EndedSessionsData,
  OperatorUser,
  OperatorUsersData,
} from '@skyferry/contract';
import { api, apiWithMessage } from '../../api/client.ts';

/** The operator's calls: the server's accounts and who may use local folders. */
export const operatorApi = {
  users: (page: number, pageSize: number) =>
    api<OperatorUsersData>('/api/operator/users', {
      method: 'GET',
      query: { page, page_size: pageSize },
    }),
  setLocalFolder: (uid: string, granted: boolean) =>
    api<OperatorUser>(`/api/operator/users/${encodeURIComponent(uid)}/local-folder`, {
      method: 'PUT',
      body: { granted },
    }),
};

/** The signed-in account's own calls: password, e-mail, sessions, deleting the account. */
export const accountApi = {
  changePassword: (current_password: string, new_password: string) =>
    apiWithMessage<ChangePasswordData>('/api/account/password', { body: { current_password, new_password } }),
  changeEmail: (new_email: string, password: string) =>
    apiWithMessage<ChangeEmailData>('/api/account/email', { body: { new_email, password } }),
  sessions: () => api<AccountSessionsData>('/api/account/sessions', { method: 'GET' }),
  revokeSession: (id: string) => api<null>(`/api/account/sessions/${encodeURIComponent(id)}`, { method: 'DELETE' }),
  revokeOtherSessions: () => api<EndedSessionsData>('/api/account/sessions/revoke-others'),
  deleteAccount: (password: string, successorEmail?: string) =>
    apiWithMessage<DeleteAccountData>('/api/account/delete', {
      body: { password, ...(successorEmail ? { successor_email: successorEmail } : {}) },
    }),
};
