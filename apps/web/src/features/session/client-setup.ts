import { configureClient } from '../../api/client.ts';
import { i18n } from '../../i18n/index.ts';
import { STORAGE_KEYS, readJson, removeKey, writeJson } from '../../lib/storage.ts';
import { toLanguage } from '@skyferry/contract';
import { refreshAfterUnauthenticated } from './actions.ts';
import { sessionStore } from './store.ts';

/**
 * Whether the client runs in debug: under Vite's dev server, or after a page was opened with
 * `?debug=1` (kept in local storage until a page is opened with `?debug=0`).
 */
export function debugClient(search = typeof location === 'undefined' ? '' : location.search): boolean {
  const asked = new URLSearchParams(search).get('debug');
  if (asked === '1') writeJson(STORAGE_KEYS.debug, '1');
  if (asked === '0') removeKey(STORAGE_KEYS.debug);
  return import.meta.env.MODE === 'development' || readJson<string>(STORAGE_KEYS.debug, '') === '1';
}

/** Points the API client at the session: who is calling, in which language, from which runtime. */
export function configureSessionClient(): void {
  const debug = debugClient();
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
    debug: () => debug,
    messages: () => {
      const t = i18n.getFixedT(null, 'messages');
      return { network: t('request.network'), timeout: t('request.timeout'), unknown: t('request.unknown') };
    },
    onUnauthenticated: refreshAfterUnauthenticated,
  });
}
