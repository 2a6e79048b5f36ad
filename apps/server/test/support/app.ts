import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { inject } from 'vitest';
import type { AuthorizationData, Envelope } from '@skyferry/contract';
import type { Dialect } from '@skyferry/db';
import { createDatabase } from '@skyferry/testing';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createContext, type AppContext } from '../../src/context.ts';
import type { App } from '../../src/http/app-types.ts';
import { loggerOptions } from '../../src/logging.ts';

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
  /** Signs up a fresh account over HTTP. */
  signUp(email?: string, password?: string): Promise<SignedUpUser>;
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
}

let counter = 0;

/** Parses an inject() response body as the envelope. */
export function envelope<T = unknown>(res: { body: string }): Envelope<T> {
  return JSON.parse(res.body) as Envelope<T>;
}

/**
 * A real Skyferry app on a fresh database of the chosen dialect (SQLite file or a new PostgreSQL
 * database from the global setup), with its logs captured. Use `app.inject` for requests.
 */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dialect = options.dialect ?? 'sqlite';
  const root = mkdtempSync(join(tmpdir(), 'skyferry-app-'));
  const dataDir = join(root, 'data');
  const localRoot = join(root, 'local');
  mkdirSync(localRoot, { recursive: true });
  const databaseUrl =
    dialect === 'postgres' ? await createDatabase(inject('postgresUrl')) : join(dataDir, 'skyferry.db');
  const env: Record<string, string> = {
    SKYFERRY_DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    SKYFERRY_SECRET: randomBytes(32).toString('base64url'),
    SKYFERRY_LOCAL_ROOTS: localRoot,
    SKYFERRY_WORKERS: '0',
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    ...options.env,
  };
  const config = loadConfig(env);
  let captured = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      captured += chunk.toString();
      done();
    },
  });
  const log = pino(loggerOptions(config.logLevel), sink);
  const ctx = await createContext(config, log);
  const app = await buildApp(ctx, { logger: log });
  await app.ready();

  const t: TestApp = {
    app,
    ctx,
    dialect,
    databaseUrl,
    dataDir,
    localRoot,
    logs: () => captured,
    async signUp(email, password = 'correct horse battery staple') {
      const address = email ?? `user${++counter}.${randomBytes(4).toString('hex')}@example.com`;
      const res = await app.inject({
        method: 'POST',
        url: '/api/account/signup',
        payload: { email: address, password },
      });
      const body = envelope<AuthorizationData>(res);
      if (body.code !== 0) throw new Error(`sign-up failed: ${res.statusCode} ${res.body}`);
      return {
        uid: body.data.uid,
        email: address.toLowerCase(),
        password,
        accessToken: body.data.access_token,
        refreshToken: body.data.refresh_token,
        autoLoginToken: body.data.auto_login_token,
        headers: { authorization: `Bearer ${body.data.access_token}` },
        data: body.data,
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
    async close() {
      await app.close();
      await ctx.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
  return t;
}
