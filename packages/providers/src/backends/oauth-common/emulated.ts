import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMULATED_CLIENTS, OAuthServer, type EmulatedOAuthProvider, type ServiceEmulator } from '@skyferry/testing';
import { ProviderError } from '../../api/errors.ts';
import { openProvider, type ProviderContext } from '../../api/registry.ts';
import type { Provider } from '../../api/types.ts';
import { patternBytes, readAll } from '../../testkit/index.ts';
import '../index.ts';

/**
 * Test support for the OAuth backends: a service emulator with its own emulated authorization
 * server, credentials pointing a backend at them, and the checks the shared conformance suite
 * does not make (rate-limit backoff honouring Retry-After, token refresh before expiry, after a
 * 401 and in the middle of a transfer, refreshed tokens persisted, revoked grants). Used only by
 * *.int.test.ts files.
 */

export interface EmulatedService<E extends ServiceEmulator> {
  oauth: OAuthServer;
  emulator: E;
  user: string;
  /** Credentials for the kind, pointing at the emulators; `extra` adds settings. */
  credentials(extra?: Record<string, unknown>, user?: string): Record<string, unknown>;
  /** A provider context whose saveState calls are recorded. */
  context(): ProviderContext & { saved: Array<Record<string, unknown>> };
  open(extra?: Record<string, unknown>, ctx?: ProviderContext): Promise<Provider>;
  close(): Promise<void>;
}

/**
 * The conformance suite's target on an emulated service: a provider opened with `settings`, and one
 * holding an access token the service refuses (for the bad-credentials case).
 */
export async function conformanceTarget<E extends ServiceEmulator>(
  svc: EmulatedService<E>,
  kind: string,
  settings: Record<string, unknown>,
) {
  return {
    provider: await svc.open(settings),
    cleanup: () => svc.close(),
    badCredentials: () =>
      openProvider(kind, { access_token: 'not-a-token', api_url: svc.emulator.url, token_url: svc.oauth.tokenUrl }, {}),
  };
}

export async function startEmulatedService<E extends ServiceEmulator>(opts: {
  kind: string;
  service: EmulatedOAuthProvider;
  scopes?: string[];
  make: (oauth: OAuthServer) => E;
  user?: string;
  /** Credential fields naming the account (default: account_id = user). */
  accountFields?: (user: string, emulator: E) => Record<string, unknown>;
}): Promise<EmulatedService<E>> {
  const oauth = await new OAuthServer().start();
  const client = EMULATED_CLIENTS[opts.service];
  oauth.registerClient({ ...client, redirectUris: [] });
  const emulator = await opts.make(oauth).start();
  const user = opts.user ?? 'alice@example.com';
  const credentials = (extra: Record<string, unknown> = {}, who = user): Record<string, unknown> => {
    const t = oauth.issueTokens(who, client.clientId, (opts.scopes ?? []).join(' '));
    return {
      access_token: t.access_token,
      refresh_token: t.refresh_token,
      expiry: Date.now() + t.expires_in * 1000,
      expires_in: t.expires_in,
      scope: t.scope,
      client_id: client.clientId,
      client_secret: client.clientSecret,
      token_url: oauth.tokenUrl,
      api_url: emulator.url,
      account: who,
      ...(opts.accountFields ? opts.accountFields(who, emulator) : { account_id: who }),
      ...extra,
    };
  };
  const context = () => {
    const saved: Array<Record<string, unknown>> = [];
    const state: Record<string, unknown> = {};
    return {
      state,
      saved,
      saveState: async (next: Record<string, unknown>) => {
        saved.push(structuredClone(next));
        Object.assign(state, next);
      },
    };
  };
  return {
    oauth,
    emulator,
    user,
    credentials,
    context,
    open: (extra, ctx) => openProvider(opts.kind, credentials(extra), ctx ?? context()),
    async close() {
      await emulator.close();
      await oauth.close();
    },
  };
}

/** A stream of `data` in pieces, calling `at(bytesSoFar)` before each piece. */
export function streamWithHook(data: Buffer, piece: number, at: (sent: number) => void): Readable {
  let off = 0;
  return new Readable({
    read() {
      at(off);
      if (off >= data.length) {
        this.push(null);
        return;
      }
      const next = data.subarray(off, off + piece);
      off += next.length;
      this.push(next);
    },
  });
}

export interface OAuthChecksOptions<E extends ServiceEmulator> {
  /** A file big enough to need several upload-session requests. */
  bigSize: number;
  /** Upload-session requests the emulator has served so far. */
  sessionRequests: (emulator: E) => number;
  /** Where test files go. */
  dir?: string;
  /** Skip the write-based checks (read-only kinds). */
  readOnly?: boolean;
  /**
   * Where in the bytes the access tokens are expired (default 0.5). Services whose session URLs
   * carry their own authority (Drive) need it before the session starts.
   */
  expireAtFraction?: number;
  /** Extension of the big test files (Google Photos takes pictures and videos only). */
  fileExt?: string;
  /** Backend settings for every provider the checks open (e.g. a small chunk_size). */
  settings?: Record<string, unknown>;
}

/**
 * The OAuth-specific behaviour every cloud backend must show against its emulator.
 */
export function runOAuthChecks<E extends ServiceEmulator>(
  name: string,
  setup: () => Promise<EmulatedService<E>>,
  opts: OAuthChecksOptions<E>,
): void {
  describe(`OAuth behaviour: ${name}`, () => {
    let svc: EmulatedService<E>;
    const dir = opts.dir ?? '/oauth-checks';

    beforeAll(async () => {
      svc = await setup();
    }, 60_000);
    afterAll(async () => {
      await svc?.close();
    });

    it('backs off on rate-limit answers, waiting at least the Retry-After the service sent', async () => {
      const p = await svc.open(opts.settings);
      await p.list('/');
      svc.emulator.rateLimitNext(2, 1);
      const started = Date.now();
      await p.list('/');
      const elapsed = Date.now() - started;
      expect(svc.emulator.faultsServed('rate_limit').length).toBe(2);
      expect(svc.emulator.pendingFaults()).toBe(0);
      // Two answers asked for 1 s each.
      expect(elapsed).toBeGreaterThanOrEqual(1900);
      const limited = svc.emulator.requests.filter((r) => r.fault === 'rate_limit');
      const after = svc.emulator.requests.filter((r) => r.at > limited[0]!.at && !r.fault);
      expect(after[0]!.at - limited[0]!.at).toBeGreaterThanOrEqual(950);
    }, 30_000);

    it('gives up with rate_limited (retryable) when the service keeps refusing', async () => {
      const p = await svc.open(opts.settings);
      await p.list('/');
      svc.emulator.rateLimitNext(50, 0);
      const err = await p.list('/').catch((e: unknown) => e);
      svc.emulator.clearFaults();
      expect(err).toBeInstanceOf(ProviderError);
      expect((err as ProviderError).code).toBe('rate_limited');
      expect((err as ProviderError).retry).toBe('retry');
    }, 60_000);

    it('refreshes the access token after a 401 and persists the new token', async () => {
      const ctx = svc.context();
      const p = await svc.open(opts.settings, ctx);
      await p.list('/');
      const before = svc.oauth.tokenCalls.refresh_token ?? 0;
      svc.oauth.expireAccessTokens();
      await p.list('/');
      expect((svc.oauth.tokenCalls.refresh_token ?? 0) - before).toBe(1);
      const saved = ctx.saved.at(-1)?.oauth_token as { access_token?: string; refresh_token?: string } | undefined;
      expect(saved?.access_token).toMatch(/^at_/);
      expect(saved?.refresh_token).toMatch(/^rt_/);
      // A provider opened with the saved state uses the refreshed token without refreshing again.
      const again = await svc.open(opts.settings, { state: { ...ctx.state } });
      await again.list('/');
      expect((svc.oauth.tokenCalls.refresh_token ?? 0) - before).toBe(1);
    });

    it('refreshes ahead of expiry without a failed call', async () => {
      const p = await svc.open({ ...opts.settings, expiry: Date.now() + 1000, expires_in: 3600 });
      const before = svc.oauth.tokenCalls.refresh_token ?? 0;
      const unauthorized = svc.emulator.requests.filter((r) => r.status === 401).length;
      await p.list('/');
      expect((svc.oauth.tokenCalls.refresh_token ?? 0) - before).toBe(1);
      expect(svc.emulator.requests.filter((r) => r.status === 401).length).toBe(unauthorized);
    });

    it('a revoked grant fails with auth_expired, fatal (the cloud must be reauthorized)', async () => {
      const other = `revoked-${Math.random().toString(36).slice(2, 8)}@example.com`;
      const creds = svc.credentials(opts.settings, other);
      const p = await openProvider((await svc.open()).kind, creds, svc.context());
      await p.list('/');
      svc.oauth.revokeUser(other);
      const err = await p.list('/').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ProviderError);
      expect((err as ProviderError).code).toBe('auth_expired');
      expect((err as ProviderError).retry).toBe('fatal');
    });

    if (!opts.readOnly) {
      it('uploads a large file through an upload session, refreshing the token mid-transfer', async () => {
        const p = await svc.open(opts.settings);
        await p.mkdir(dir);
        const data = patternBytes(opts.bigSize, 77);
        const sessionBefore = opts.sessionRequests(svc.emulator);
        const refreshBefore = svc.oauth.tokenCalls.refresh_token ?? 0;
        let expired = false;
        const body = streamWithHook(data, 256 * 1024, (sent) => {
          // Partway through the bytes, every access token stops working.
          if (!expired && sent >= opts.bigSize * (opts.expireAtFraction ?? 0.5)) {
            expired = true;
            svc.oauth.expireAccessTokens();
          }
        });
        const e = await p.put(`${dir}/big-refresh.${opts.fileExt ?? 'bin'}`, body, { size: data.length });
        expect(expired).toBe(true);
        expect(e.size).toBe(data.length);
        expect(opts.sessionRequests(svc.emulator) - sessionBefore).toBeGreaterThanOrEqual(2);
        expect((svc.oauth.tokenCalls.refresh_token ?? 0) - refreshBefore).toBeGreaterThanOrEqual(1);
        const back = await readAll(await p.openRead(`${dir}/big-refresh.${opts.fileExt ?? 'bin'}`));
        expect(back.equals(data)).toBe(true);
      }, 120_000);

      it('retries a rate-limited upload-session request and still stores every byte', async () => {
        const p = await svc.open(opts.settings);
        await p.mkdir(dir);
        const data = patternBytes(opts.bigSize, 78);
        const limitedBefore = svc.emulator.faultsServed('rate_limit').length;
        let injected = false;
        const body = streamWithHook(data, 256 * 1024, (sent) => {
          if (!injected && sent > 0) {
            injected = true;
            svc.emulator.rateLimitNext(1, 1, undefined, () => true);
          }
        });
        const started = Date.now();
        const e = await p.put(`${dir}/big-limited.${opts.fileExt ?? 'bin'}`, body, { size: data.length });
        expect(e.size).toBe(data.length);
        expect(svc.emulator.faultsServed('rate_limit').length - limitedBefore).toBe(1);
        expect(Date.now() - started).toBeGreaterThanOrEqual(950);
        expect((await readAll(await p.openRead(`${dir}/big-limited.${opts.fileExt ?? 'bin'}`))).equals(data)).toBe(
          true,
        );
      }, 120_000);
    }
  });
}
