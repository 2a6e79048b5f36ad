import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HEADERS } from '@skyferry/contract';
import { api, requestHeaders } from '../../api/client.ts';
import { setLanguage } from '../../i18n/index.ts';
import { configureSessionClient, debugClient } from './client-setup.ts';

beforeEach(() => localStorage.clear());
afterEach(async () => {
  vi.unstubAllGlobals();
  window.history.replaceState(null, '', '/');
  await setLanguage('en');
});

describe('the session client', () => {
  it('sends x-temp-debug on every call once a page was opened with ?debug=1, until ?debug=0 (CALL-CFG-12)', () => {
    configureSessionClient();
    expect(requestHeaders()).not.toHaveProperty(HEADERS.tempDebug);
    window.history.replaceState(null, '', '/transfer?debug=1');
    configureSessionClient();
    expect(requestHeaders()[HEADERS.tempDebug]).toBe('1');
    // Kept for later page loads without the query.
    expect(debugClient('')).toBe(true);
    expect(debugClient('?debug=0')).toBe(false);
    expect(debugClient('')).toBe(false);
  });

  it('says "The network is unstable" in the interface language when a call gets no answer (MSG-12)', async () => {
    configureSessionClient();
    vi.stubGlobal('fetch', () => Promise.reject(new TypeError('Failed to fetch')));
    await expect(api('/api/v2/init', { method: 'GET' })).rejects.toMatchObject({
      message: 'The network is unstable, please try again later.',
    });
    await setLanguage('de');
    await expect(api('/api/v2/init', { method: 'GET' })).rejects.toMatchObject({
      message: 'Das Netzwerk ist instabil, bitte versuchen Sie es später erneut.',
    });
    await setLanguage('en');
  });
});
