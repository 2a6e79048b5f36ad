import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code } from '@skyferry/contract';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

/**
 * Issue 34, finding 6 (DNS rebinding): a page on another name that resolves to the server must not
 * be able to use it. The server answers only the hosts it is configured for, takes X-Forwarded-Host
 * only from trusted proxies (and checks it too), and leaves /healthz open for load balancers.
 */

interface Answer {
  status: number;
  code: number;
  msg: string;
  data: unknown;
}

async function get(t: TestApp, url: string, headers: Record<string, string>, remoteAddress?: string) {
  const res = await t.app.inject({ method: 'GET', url, headers, ...(remoteAddress ? { remoteAddress } : {}) });
  const body = JSON.parse(res.body) as { code: number; msg: string; data: unknown };
  return { status: res.statusCode, ...body } satisfies Answer;
}

describe('a server on loopback (the defaults, a desktop install)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('refuses a rebound name with 421 in the envelope, in the caller’s language', async () => {
    const evil = await get(t, '/api/v2/init', { host: 'rebind.attacker.example:8080' });
    expect([evil.status, evil.code]).toEqual([421, Code.HOST_NOT_ALLOWED]);
    expect(evil.msg).toContain('rebind.attacker.example');
    expect(evil.msg).toContain('SKYFERRY_ALLOWED_HOSTS');
    const de = await get(t, '/api/v2/init', { host: 'rebind.attacker.example', 'x-language': 'de' });
    expect(de.msg).toContain('Dieser Server antwortet nicht');
    // Every part of the server, not only the API: the account pages and unknown paths too.
    for (const url of ['/account/signin', '/api/users/me', '/api/openapi.json', '/transfer', '/nope']) {
      expect((await get(t, url, { host: 'rebind.attacker.example' })).status, url).toBe(421);
    }
  });

  it('answers loopback names and addresses on any port (the browser, Vite’s dev proxy on :5173, the desktop shell)', async () => {
    for (const host of ['127.0.0.1:8080', 'localhost:5173', 'LOCALHOST', '[::1]:8080', '127.0.0.2', 'localhost.']) {
      const res = await get(t, '/api/v2/init', { host });
      expect([res.status, res.code], host).toEqual([200, 0]);
    }
  });

  it('refuses a forwarded host that is not allowed, even from a trusted (loopback) proxy', async () => {
    // A rebound page may add X-Forwarded-Host itself: it must not make the origin allowed.
    const forwarded = await get(t, '/api/v2/init?origin=http%3A%2F%2Frebind.attacker.example%3A8080', {
      host: 'localhost:8080',
      'x-forwarded-host': 'rebind.attacker.example:8080',
    });
    expect([forwarded.status, forwarded.code]).toEqual([421, Code.HOST_NOT_ALLOWED]);
    // Nor does a good forwarded name cover a bad Host.
    const cover = await get(t, '/api/v2/init', { host: 'rebind.attacker.example', 'x-forwarded-host': 'localhost' });
    expect(cover.status).toBe(421);
  });

  it('ignores X-Forwarded-Host from a peer it does not trust: the Host it connected with counts', async () => {
    const res = await get(
      t,
      '/api/v2/init?origin=http%3A%2F%2Frebind.attacker.example',
      { host: '127.0.0.1:8080', 'x-forwarded-host': 'rebind.attacker.example' },
      '192.0.2.9',
    );
    expect(res.status).toBe(200);
    const data = res.data as { sign_in_url: string };
    // The account pages are the server's own, and will post only to the server's own origin.
    expect(new URL(data.sign_in_url).host).toBe('127.0.0.1:8080');
    expect(new URL(data.sign_in_url).searchParams.get('origin')).toBe('http://127.0.0.1:8080');
  });

  it('keeps /healthz open to any host (load balancers probe it by an internal name)', async () => {
    const res = await get(t, '/healthz', { host: 'k8s-probe.internal:8080' });
    expect(res.status).toBe(200);
  });

  it('refuses a malformed Host', async () => {
    for (const host of ['bad host', 'a/b', '[::1', 'x'.repeat(400)]) {
      expect((await get(t, '/api/v2/init', { host })).status, host).toBe(421);
    }
  });

  it('over a real socket, as a browser resolving a rebound name would connect', async () => {
    const base = new URL(await t.app.listen({ port: 0, host: '127.0.0.1' }));
    const port = (t.app.server.address() as AddressInfo).port;
    const ask = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, path: '/api/v2/init', headers: { host } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
    expect(await ask(`rebind.attacker.example:${port}`)).toBe(421);
    expect(await ask(base.host)).toBe(200);
    expect(await ask(`localhost:${port}`)).toBe(200);
  });
});

describe('PUBLIC_URL and SKYFERRY_ALLOWED_HOSTS', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      env: { PUBLIC_URL: 'https://sky.example.org', SKYFERRY_ALLOWED_HOSTS: 'nas.lan, .corp.example' },
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers PUBLIC_URL’s host, the listed names and the subdomains of a dotted entry', async () => {
    for (const host of ['sky.example.org', 'SKY.example.org:443', 'nas.lan:8080', 'corp.example', 'a.b.corp.example']) {
      expect((await get(t, '/api/v2/init', { host })).status, host).toBe(200);
    }
    for (const host of ['example.org', 'xcorp.example', 'nas.lan.attacker.example', 'sky.example.org.attacker.net']) {
      expect((await get(t, '/api/v2/init', { host })).status, host).toBe(421);
    }
  });

  it('takes the public name from a trusted proxy, and refuses another one', async () => {
    const ok = await get(t, '/api/v2/init', { host: '127.0.0.1:8080', 'x-forwarded-host': 'sky.example.org' });
    expect(ok.status).toBe(200);
    const bad = await get(t, '/api/v2/init', { host: '127.0.0.1:8080', 'x-forwarded-host': 'attacker.example' });
    expect(bad.status).toBe(421);
  });
});

describe('HOST=0.0.0.0 without PUBLIC_URL (a LAN install)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { HOST: '0.0.0.0' } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers any IP address (it cannot be rebound) and loopback, and refuses names not listed', async () => {
    for (const host of ['192.168.1.20:8080', '10.0.0.5', '[fd00::5]:8080', 'localhost:8080']) {
      expect((await get(t, '/api/v2/init', { host })).status, host).toBe(200);
    }
    expect((await get(t, '/api/v2/init', { host: 'nas.local:8080' })).status).toBe(421);
    expect((await get(t, '/api/v2/init', { host: 'rebind.attacker.example' })).status).toBe(421);
  });
});

describe('SKYFERRY_ALLOWED_HOSTS', () => {
  it('takes names and addresses, and stops the server with a message on anything else', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'skyferry-hosts-'));
    try {
      const config = loadConfig({ SKYFERRY_ALLOWED_HOSTS: ' NAS.lan., .Corp.Example, [fd00::1], 192.168.1.9 ' }, cwd);
      expect(config.allowedHosts).toEqual(['nas.lan', '.corp.example', 'fd00::1', '192.168.1.9']);
      for (const bad of ['https://nas.lan', 'nas.lan:8080', 'a b', '*']) {
        expect(() => loadConfig({ SKYFERRY_ALLOWED_HOSTS: bad }, cwd), bad).toThrow(ConfigError);
        expect(() => loadConfig({ SKYFERRY_ALLOWED_HOSTS: bad }, cwd), bad).toThrow(/SKYFERRY_ALLOWED_HOSTS/);
      }
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
