import type { OperatorUser, OperatorUsersData } from '@skyferry/contract';
import { api } from '../../api/client.ts';

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
