import { describe, expect, it } from 'vitest';
import {
  decideNavigation,
  decidePopupNavigation,
  decideWindowOpen,
  normalizeServerUrl,
  serverCallbackUrl,
} from './navigation.ts';

const SERVER = 'http://127.0.0.1:4100';
const START = 'skyferry://start';

describe('navigation rules', () => {
  it('keeps the window on its server and the start page; web links go to the system browser', () => {
    expect(decideNavigation(`${SERVER}/manage`, SERVER, START)).toBe('allow');
    expect(decideNavigation(`${START}/index.html`, SERVER, START)).toBe('allow');
    expect(decideNavigation('https://drive.google.com/', SERVER, START)).toBe('external');
    expect(decideNavigation('file:///etc/passwd', SERVER, START)).toBe('deny');
    expect(decideNavigation('javascript:alert(1)', SERVER, START)).toBe('deny');
    expect(decideNavigation(`${SERVER}/manage`, null, START)).toBe('external');
  });

  it('creates only the cloud sign-in pop-up; other pop-ups open in the system browser or nowhere', () => {
    expect(decideWindowOpen({ url: 'about:blank', frameName: 'skyferry-oauth' })).toEqual({ action: 'oauth-popup' });
    expect(decideWindowOpen({ url: 'about:blank', frameName: 'other' })).toEqual({ action: 'deny' });
    expect(decideWindowOpen({ url: 'https://example.com/help', frameName: '' })).toEqual({
      action: 'external',
      url: 'https://example.com/help',
    });
    expect(decideWindowOpen({ url: 'file:///x', frameName: 'skyferry-oauth' })).toEqual({ action: 'deny' });
  });

  it("sends the service's sign-in page to the system browser and loads the server's callback in the pop-up", () => {
    expect(decidePopupNavigation('https://accounts.google.com/o/oauth2/v2/auth?x=1', SERVER)).toBe('external');
    expect(decidePopupNavigation(`${SERVER}/api/clouds/oauth/callback?code=1`, SERVER)).toBe('allow');
    expect(decidePopupNavigation('data:text/html,hi', SERVER)).toBe('deny');
    expect(serverCallbackUrl(SERVER, new URLSearchParams({ code: 'a b', state: 's' }))).toBe(
      `${SERVER}/api/clouds/oauth/callback?code=a+b&state=s`,
    );
  });

  it('reads a server address as the user types it', () => {
    expect(normalizeServerUrl('skyferry.example.com')).toBe('https://skyferry.example.com');
    expect(normalizeServerUrl(' http://nas.local:8080/manage ')).toBe('http://nas.local:8080');
    expect(normalizeServerUrl('https://user:pw@host')).toBeNull();
    expect(normalizeServerUrl('ftp://host')).toBeNull();
    expect(normalizeServerUrl('')).toBeNull();
  });
});
