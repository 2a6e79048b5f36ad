import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { AuthorizationData, Envelope } from '@skyferry/contract';
import type { Dialect } from '@skyferry/db';
import type { AppContext } from '../../src/context.ts';
import type { App } from '../../src/http/app-types.ts';
import { createTestContext } from './context.ts';

export interface SignedUpUser {
  uid: string;
  email: string;
  password: string;
  accessToken: string;
  refreshToken: string;
  autoLoginToken: string;
  /** `authorization: Bearer <access token>` */
  headers: Record<string, string>;
  data: AuthorizationData;
  /** The sign-in nonce the sign-up sent, as a browser's would (POST /api/clouds/bind asks for it). */
  signInNonce: string;
}

export interface TestVisitor {
  tempToken: string;
  /** `x-temp-authorization: <temp token>` */
  headers: Record<string, string>;
}

export interface TestApp {
  app: App;
  ctx: AppContext;
  dialect: Dialect;
  /** The database: a SQLite file path or a postgres:// URL. */
  databaseUrl: string;
  dataDir: string;
  /** An allowed local-folder root (SKYFERRY_LOCAL_ROOTS), empty at start. */
  localRoot: string;
  /** Every log line written so far (JSON lines, as pino writes them). */
  logs(): string;
  /**
   * Signs up a fresh account over HTTP. The account is then made an operator (as the first account
   * of an install is), so it may connect local folders anywhere under `localRoot`, which most tests
   * use as their cheapest real cloud. `{ operator: false }` leaves it as sign-up made it: the
   * security tests use that to see the real rules (only the install's first account is the operator).
   */
  signUp(email?: string, password?: string, options?: { operator?: boolean }): Promise<SignedUpUser>;
  /** A fresh visitor identity over HTTP (GET /api/token). */
  visitor(): Promise<TestVisitor>;
  /** Makes a folder under the local root, for connecting a `local` cloud. */
  makeLocalFolder(name?: string): string;
  close(): Promise<void>;
}

export interface TestAppOptions {
  dialect?: Dialect;
  /** Extra environment (BILLING_MODE, LOG_LEVEL, OAuth clients...). */
  env?: Record<string, string>;
  /** Test defaults to leave unset (createTestContext). */
  unset?: string[];
}

let counter = 0;

/** Parses an inject() response body as the envelope. */
export function envelope<T = unknown>(res: { body: string }): Envelope<T> {
  return JSON.parse(res.body) as Envelope<T>;
}

/**
 * A real Skyferry app (createTestContext's context and app) on a fresh database of the chosen
 * dialect, with its logs captured, plus helpers to sign up and to get a visitor. Use `app.inject`.
 */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dialect = options.dialect ?? 'sqlite';
  const tc = await createTestContext({ dialect, env: options.env, unset: options.unset });
  const app = await tc.buildApp();
  await app.ready();
  const { ctx, localRoot } = tc;

  const t: TestApp = {
    app,
    ctx,
    dialect,
    databaseUrl: tc.databaseUrl,
    dataDir: tc.dataDir,
    localRoot,
    logs: tc.logs,
    async signUp(email, password = 'correct horse battery staple', options = {}) {
      const address = email ?? `user${++counter}.${randomBytes(4).toString('hex')}@example.com`;
      const signInNonce = randomBytes(32).toString('base64url');
      const res = await app.inject({
        method: 'POST',
        url: '/api/account/signup',
        payload: { email: address, password, sign_in_nonce: signInNonce },
      });
      const body = envelope<AuthorizationData>(res);
      if (body.code !== 0) throw new Error(`sign-up failed: ${res.statusCode} ${res.body}`);
      if (options.operator !== false) {
        await ctx.db.kysely.updateTable('users').set({ role: 'operator' }).where('id', '=', body.data.uid).execute();
      }
      return {
        uid: body.data.uid,
        email: address.trim().toLowerCase(),
        password,
        accessToken: body.data.access_token,
        refreshToken: body.data.refresh_token,
        autoLoginToken: body.data.auto_login_token,
        headers: { authorization: `Bearer ${body.data.access_token}` },
        data: body.data,
        signInNonce,
      };
    },
    async visitor() {
      const res = await app.inject({ method: 'GET', url: '/api/token' });
      const body = envelope<{ access_token: string }>(res);
      if (body.code !== 0) throw new Error(`visitor token failed: ${res.body}`);
      return { tempToken: body.data.access_token, headers: { 'x-temp-authorization': body.data.access_token } };
    },
    makeLocalFolder(name) {
      const dir = join(localRoot, name ?? `folder-${++counter}-${randomBytes(3).toString('hex')}`);
      mkdirSync(dir, { recursive: true });
      return dir;
    },
    close: () => tc.cleanup(),
  };
  return t;
}

/** The two ways a deployment runs: one machine (SQLite, in-process queue) and many (PostgreSQL, BullMQ on Redis). */
export const STACKS = [
  { label: 'SQLite, in-process queue', dialect: 'sqlite' as const, redis: false },
  { label: 'PostgreSQL, BullMQ', dialect: 'postgres' as const, redis: true },
];
