import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAuthServer } from '@skyferry/testing';
import { ProviderError } from '../../api/errors.ts';
import type { Entry } from '../../api/types.ts';
import { SequentialChunkWriter } from './sequential-writer.ts';
import { createPkce, exchangeCode, idTokenClaims, refreshGrant, TokenSource, tokenFromCredentials } from './token.ts';
import { readAll } from '../../testkit/index.ts';
import { SpoolingChunkWriter } from './spooling-writer.ts';

const CLIENT = { clientId: 'unit-client', clientSecret: 'unit-secret' };

describe('OAuth grants and the token source (against the emulated authorization server)', () => {
  let oauth: OAuthServer;
  beforeAll(async () => {
    oauth = await new OAuthServer().start();
    oauth.registerClient({ ...CLIENT, redirectUris: ['http://127.0.0.1:1/cb'], rotateRefreshTokens: true });
  });
  afterAll(async () => {
    await oauth.close();
  });

  it('PKCE pairs are S256 of a fresh verifier', () => {
    const a = createPkce();
    const b = createPkce();
    expect(a.verifier).not.toBe(b.verifier);
    expect(a.challenge).toBe(createHash('sha256').update(a.verifier).digest('base64url'));
    expect(a.verifier.length).toBeGreaterThanOrEqual(43);
  });

  it('exchanges a code only with the right verifier, once', async () => {
    const pkce = createPkce();
    oauth.consentUser = 'unit@example.com';
    const url = new URL(oauth.authorizeUrl);
    Object.entries({
      response_type: 'code',
      client_id: CLIENT.clientId,
      redirect_uri: 'http://127.0.0.1:1/cb',
      scope: 'openid email',
      state: 's',
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
    }).forEach(([k, v]) => url.searchParams.set(k, v));
    const code = async () =>
      new URL((await fetch(url, { redirect: 'manual' })).headers.get('location')!).searchParams.get('code')!;
    const wrong = await exchangeCode(oauth.tokenUrl, CLIENT, {
      code: await code(),
      redirectUri: 'http://127.0.0.1:1/cb',
      codeVerifier: createPkce().verifier,
    }).catch((e: unknown) => e);
    expect((wrong as ProviderError).code).toBe('auth_expired');
    const c = await code();
    const token = await exchangeCode(oauth.tokenUrl, CLIENT, {
      code: c,
      redirectUri: 'http://127.0.0.1:1/cb',
      codeVerifier: pkce.verifier,
    });
    expect(token.refresh_token).toMatch(/^rt_/);
    expect(token.expiry).toBeGreaterThan(Date.now());
    expect(idTokenClaims(token.id_token)).toMatchObject({ email: 'unit@example.com' });
    const again = await exchangeCode(oauth.tokenUrl, CLIENT, {
      code: c,
      redirectUri: 'http://127.0.0.1:1/cb',
      codeVerifier: pkce.verifier,
    }).catch((e: unknown) => e);
    expect((again as ProviderError).serviceCode).toBe('invalid_grant');
    const badClient = await refreshGrant(
      oauth.tokenUrl,
      { clientId: CLIENT.clientId, clientSecret: 'wrong' },
      token.refresh_token!,
    ).catch((e: unknown) => e);
    expect((badClient as ProviderError).code).toBe('auth_invalid');
  });

  it('one refresh serves every source holding a rotating refresh token, and is saved', async () => {
    const t = oauth.issueTokens('rotate@example.com', CLIENT.clientId);
    const saved: Array<Record<string, unknown>> = [];
    const ctx = { state: {}, saveState: async (s: Record<string, unknown>) => void saved.push(s) };
    const token = {
      access_token: t.access_token,
      refresh_token: t.refresh_token!,
      expiry: Date.now() + 3_600_000,
      expires_in: 3600,
    };
    const a = new TokenSource({ service: 'box', token, client: CLIENT, tokenUrl: oauth.tokenUrl, ctx });
    const b = new TokenSource({ service: 'box', token, client: CLIENT, tokenUrl: oauth.tokenUrl });
    const before = oauth.tokenCalls.refresh_token ?? 0;
    await Promise.all([a.refresh(), b.refresh()]);
    // A single-use token spent once; the second source got the same new token.
    expect((oauth.tokenCalls.refresh_token ?? 0) - before).toBe(1);
    expect(a.current().access_token).toBe(b.current().access_token);
    expect(a.current().refresh_token).not.toBe(t.refresh_token);
    // A third instance still holding the old token is answered from memory.
    const c = new TokenSource({ service: 'box', token, client: CLIENT, tokenUrl: oauth.tokenUrl });
    await c.refresh();
    expect(c.current().access_token).toBe(a.current().access_token);
    expect((saved.at(-1)?.oauth_token as { refresh_token?: string }).refresh_token).toBe(a.current().refresh_token);
  });

  it('refreshes ahead of expiry, and answers auth_expired once the grant is revoked', async () => {
    const t = oauth.issueTokens('soon@example.com', CLIENT.clientId);
    const s = new TokenSource({
      service: 'box',
      token: {
        access_token: t.access_token,
        refresh_token: t.refresh_token!,
        expiry: Date.now() + 5_000,
        expires_in: 3600,
      },
      client: CLIENT,
      tokenUrl: oauth.tokenUrl,
    });
    const fresh = await s.accessToken();
    expect(fresh).not.toBe(t.access_token);
    oauth.revokeUser('soon@example.com');
    const err = await s.refresh().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).code).toBe('auth_expired');
    expect((err as ProviderError).retry).toBe('fatal');
  });

  it('prefers a refreshed token kept in state over the stored credentials', () => {
    const creds = { access_token: 'old', refresh_token: 'r1', expiry: 1000 };
    expect(
      tokenFromCredentials(creds, {
        state: { oauth_token: { access_token: 'new', refresh_token: 'r2', expiry: 2000 } },
      }).access_token,
    ).toBe('new');
    expect(
      tokenFromCredentials(
        { ...creds, expiry: 3000 },
        { state: { oauth_token: { access_token: 'new', refresh_token: 'r2', expiry: 2000 } } },
      ).access_token,
    ).toBe('old');
    expect(() => tokenFromCredentials({}, {})).toThrow(ProviderError);
  });
});

describe('chunk writers for sequential and size-first sessions', () => {
  const entry = (size: number): Entry => ({ path: '/f', name: 'f', kind: 'file', size });

  it('sends held chunks in order and the final one only at close', async () => {
    const sent: Array<[number, number, boolean]> = [];
    const w = new SequentialChunkWriter(
      {
        send: async (off, data, final) => void sent.push([off, data.length, final]),
        finish: async () => entry(25),
        abort: async () => undefined,
      },
      10,
      25,
    );
    await w.writeChunk(2, Buffer.alloc(5));
    await w.writeChunk(1, Buffer.alloc(10));
    expect(sent).toEqual([]);
    await w.writeChunk(0, Buffer.alloc(10));
    expect(sent).toEqual([
      [0, 10, false],
      [10, 10, false],
    ]);
    expect((await w.close()).size).toBe(25);
    expect(sent.at(-1)).toEqual([20, 5, true]);
    await expect(w.writeChunk(0, Buffer.alloc(10))).rejects.toThrow();
  });

  it('refuses wrong chunk sizes and a close with chunks missing', async () => {
    const w = new SequentialChunkWriter(
      { send: async () => undefined, finish: async () => entry(0), abort: async () => undefined },
      10,
      25,
    );
    await expect(w.writeChunk(0, Buffer.alloc(9))).rejects.toThrow(/expected 10/);
    await w.writeChunk(0, Buffer.alloc(10));
    await expect(w.close()).rejects.toThrow(/missing/);
  });

  it('spools chunks of an unknown-size file and uploads them at close', async () => {
    const data = Buffer.from('abcdefghijklmnopqrstuvwxyz');
    let uploaded: Buffer | undefined;
    const w = new SpoolingChunkWriter(10, async (body, size) => {
      uploaded = await readAll(body);
      return entry(size);
    });
    await w.writeChunk(2, data.subarray(20));
    await w.writeChunk(0, data.subarray(0, 10));
    await w.writeChunk(1, data.subarray(10, 20));
    expect((await w.close()).size).toBe(26);
    expect(uploaded?.toString()).toBe(data.toString());
  });
});
