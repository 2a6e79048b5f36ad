import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.ts';

describe('account pages (server-rendered, no inline script, framed only by allowed origins)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      env: { PUBLIC_URL: 'https://sky.example', SKYFERRY_ALLOWED_ORIGINS: 'http://127.0.0.1:5173, app://desktop' },
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  const get = (url: string) => t.app.inject({ method: 'GET', url });

  it('init points the account pages at PUBLIC_URL with the client origin', async () => {
    const res = await get('/api/v2/init?origin=http%3A%2F%2F127.0.0.1%3A5173&lang=fr');
    const data = (JSON.parse(res.body) as { data: Record<string, string> }).data;
    expect(data.sign_in_url).toBe('https://sky.example/account/signin?origin=http%3A%2F%2F127.0.0.1%3A5173&lang=fr');
    expect(data.sign_out_url_disable_cookies).toBe(
      'https://sky.example/account/signout?origin=http%3A%2F%2F127.0.0.1%3A5173&lang=fr&cookies=0',
    );
    const fallback = JSON.parse((await get('/api/v2/init')).body) as { data: Record<string, string> };
    expect(new URL(fallback.data.sign_in_url ?? '').searchParams.get('origin')).toBe('https://sky.example');
  });

  it('renders the sign-in page in the asked language with the validated origin and a strict CSP', async () => {
    const res = await get('/account/signin?origin=http%3A%2F%2F127.0.0.1%3A5173&lang=de');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toMatch(/frame-ancestors 'self' .*http:\/\/127\.0\.0\.1:5173/);
    expect(csp).toContain('app://desktop');
    expect(res.body).toContain('<h1>Bei Skyferry anmelden</h1>');
    expect(res.body).toContain('data-origin="http://127.0.0.1:5173"');
    expect(res.body).toContain('<html lang="de" dir="ltr">');
    // The only script is the external file.
    expect(res.body.match(/<script/g)).toHaveLength(1);
    expect(res.body).toMatch(/<script src="\/account\/assets\/account\.js\?v=[0-9a-f]{12}" defer><\/script>/);
    expect(res.body).toContain('href="/account/signup?origin=http%3A%2F%2F127.0.0.1%3A5173&amp;lang=de"');
  });

  it('sign-up asks for a confirmation; sign-out has no form; Arabic is right to left', async () => {
    const up = await get('/account/signup?lang=en');
    expect(up.body).toContain('id="confirm"');
    expect(up.body).toContain('autocomplete="new-password"');
    const out = await get('/account/signout?lang=en&cookies=0');
    expect(out.body).not.toContain('<form');
    expect(out.body).toContain('data-page="signout"');
    const ar = await get('/account/signin?lang=ar');
    expect(ar.body).toContain('dir="rtl"');
    // Without a language, the browser's.
    const nl = await t.app.inject({
      method: 'GET',
      url: '/account/signin',
      headers: { 'accept-language': 'nl-NL,nl;q=0.9' },
    });
    expect(nl.body).toContain('Aanmelden bij Skyferry');
  });

  it('refuses to post to an origin that is not allowed, and does not reflect it unescaped', async () => {
    const res = await get('/account/signin?origin=%22%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E&lang=en');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('data-origin=""');
    expect(res.body).toContain('This page was opened from an address this server does not allow.');
    expect(res.body).not.toContain('<script>alert(1)');
    const evil = await get('/account/signin?origin=https%3A%2F%2Fevil.example');
    expect(evil.body).toContain('data-origin=""');
  });

  it('serves the script and style, and 404s anything else under assets', async () => {
    const js = await get('/account/assets/account.js');
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toContain('text/javascript');
    expect(js.body).toContain("post({ type: 'login_success', data: body.data, nonce: nonce })");
    expect(js.body).toContain('w.postMessage(message, origin)');
    expect(js.body).not.toMatch(/postMessage\([^)]*'\*'/);
    const css = await get('/account/assets/account.css');
    expect(css.headers['content-type']).toContain('text/css');
    const missing = await get('/account/assets/..%2F..%2Fconfig.ts');
    expect(missing.statusCode).toBe(404);
    expect(JSON.parse(missing.body)).toMatchObject({ code: 404 });
  });
});
