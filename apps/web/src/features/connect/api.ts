import { oauthResultMessageSchema, type Cloud, type OAuthResultMessage } from '@skyferry/contract';
import { api } from '../../api/client.ts';

/** The connect calls: form kinds directly; OAuth kinds through the service's sign-in window. */
export const connectApi = {
  connect: (cloudName: string, credentials: Record<string, unknown>, alias?: string) =>
    api<Cloud>('/api/clouds', { body: { cloud_name: cloudName, alias: alias || undefined, credentials } }),
  reauthorize: (id: string, credentials: Record<string, unknown>) =>
    api<Cloud>(`/api/clouds/${id}/credentials`, { method: 'PUT', body: { credentials } }),
  /** Starts the OAuth flow (the OAuth issue's call): answers the address to open in a pop-up. */
  oauthStart: (cloudName: string, cloudId?: string, redirectUri?: string) =>
    api<{ authorize_url: string }>('/api/clouds/oauth/start', {
      body: {
        cloud_name: cloudName,
        ...(cloudId ? { cloud_id: cloudId } : {}),
        origin: window.location.origin,
        // The desktop client's loopback address: the service's sign-in runs in the system browser.
        ...(redirectUri ? { redirect_uri: redirectUri } : {}),
      },
    }),
};

export type { OAuthResultMessage };

/** Whether a posted value is the OAuth callback page's result (the contract's message shape). */
export function isOAuthResult(data: unknown): data is OAuthResultMessage {
  return oauthResultMessageSchema.safeParse(data).success;
}
