import { createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { OAUTH_REDIRECT_PATH, OAuthRelay } from './oauth-relay.ts';

const relays: OAuthRelay[] = [];
afterEach(async () => {
  for (const r of relays.splice(0)) await r.close();
});

function relay(port: number, deliver: (q: URLSearchParams) => boolean): OAuthRelay {
  const r = new OAuthRelay({ port, deliver });
  relays.push(r);
  return r;
}

describe('OAuth loopback redirect', () => {
  it('hands the code and state (and nothing else) to the waiting sign-in window', async () => {
    const got: string[] = [];
    const uri = await relay(0, (q) => {
      got.push(q.toString());
      return true;
    }).start();
    expect(uri).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+${OAUTH_REDIRECT_PATH}$`));
    const res = await fetch(`${uri}?code=abc&state=s1&scope=drive&injected=<x>`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'");
    expect(await res.text()).toContain('go back to Skyferry');
    expect(got).toEqual(['code=abc&state=s1']);
  });

  it('tells the browser when no sign-in is waiting, and answers nothing else', async () => {
    const r = relay(0, () => false);
    const uri = await r.start();
    const none = await fetch(`${uri}?code=abc&state=s1`);
    expect(none.status).toBe(409);
    expect(await none.text()).toContain('No Skyferry sign-in is waiting');
    const origin = new URL(uri).origin;
    expect((await fetch(`${origin}/`)).status).toBe(404);
    expect((await fetch(`${origin}${OAUTH_REDIRECT_PATH}`, { method: 'POST' })).status).toBe(404);
    // Without a state there is nothing to finish.
    expect((await fetch(`${uri}?code=abc`)).status).toBe(409);
  });

  it('listens on the registered port, or another when it is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const address = blocker.address();
    const taken = typeof address === 'object' && address ? address.port : 0;
    try {
      const uri = await relay(taken, () => true).start();
      expect(new URL(uri).port).not.toBe(String(taken));
    } finally {
      await new Promise((r) => blocker.close(r));
    }
  });
});
