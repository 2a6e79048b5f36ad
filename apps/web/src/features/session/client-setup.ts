import { configureClient } from '../../api/client.ts';
import { i18n } from '../../i18n/index.ts';
import { toLanguage } from '@skyferry/contract';
import { refreshAfterUnauthenticated } from './actions.ts';
import { sessionStore } from './store.ts';

/** Points the API client at the session: who is calling, in which language, from which runtime. */
export function configureSessionClient(): void {
  configureClient({
    identity: () => {
      const { user, settings } = sessionStore.getState();
      return {
        tokenType: user.token_type || undefined,
        accessToken: user.access_token || undefined,
        tempToken: settings.temp_token || undefined,
        uid: user.uid || undefined,
        email: user.email || undefined,
      };
    },
    language: () => toLanguage(i18n.language) ?? 'en',
    runtime: () => sessionStore.getState().settings.runtime,
    onUnauthenticated: refreshAfterUnauthenticated,
  });
}
