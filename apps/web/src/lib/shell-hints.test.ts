import { afterEach, describe, expect, it } from 'vitest';
import { initI18n, setLanguage } from '../i18n/index.ts';
import { patchUser, resetSessionStore } from '../features/session/store.ts';

/** The cookies the server reads to send the next page load's shell in the right language and account. */
function cookies(): Record<string, string> {
  return Object.fromEntries(document.cookie.split('; ').map((c) => c.split('=') as [string, string]));
}

describe('shell hints', () => {
  afterEach(async () => {
    patchUser({ access_token: '' });
    resetSessionStore();
    await setLanguage('en');
  });

  it('remember the interface language the app starts in and the one the user picks', async () => {
    await initI18n('fr');
    expect(cookies().sf_lang).toBe('fr');
    await setLanguage('ar');
    expect(cookies().sf_lang).toBe('ar');
  });

  it('remember whether someone is signed in', () => {
    patchUser({ access_token: 'token' });
    expect(cookies().sf_account).toBe('member');
    patchUser({ access_token: '' });
    expect(cookies().sf_account).toBe('visitor');
  });
});
