import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { inject } from 'vitest';
import type { Dialect } from '@skyferry/db';
import { createDatabase } from '@skyferry/testing';
import { buildApp, type BuildOptions } from '../../src/app.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { createContext, type AppContext } from '../../src/context.ts';
import type { App } from '../../src/http/app-types.ts';
import { loggerOptions } from '../../src/logging.ts';

export interface TestContextOptions {
  /** sqlite (a file in a temp data dir, the default) or postgres (a fresh database from the global setup). */
  dialect?: Dialect;
  /** Environment on top of the test defaults (BILLING_MODE, SKYFERRY_WEB_DIST, OAuth clients...). */
  env?: Record<string, string>;
  /** Test defaults to leave unset (SKYFERRY_LOCAL_ROOTS, to see the server's own default). */
  unset?: string[];
}

export interface TestContext {
  /** The application context, exactly as `main.ts` builds it. */
  ctx: AppContext;
  config: Config;
  dialect: Dialect;
  /** A SQLite file path or a postgres:// URL. */
  databaseUrl: string;
  /** A temporary folder owned by this context; removed by cleanup(). */
  root: string;
  dataDir: string;
  /** The folder SKYFERRY_LOCAL_ROOTS allows (empty at start), unless env overrides it. */
  localRoot: string;
  /** The logger the context and its apps write to. */
  log: Logger;
  /** Every log line written so far (pino's JSON lines). */
  logs(): string;
  /**
   * The HTTP app over this context, not yet ready: add test-only routes, then `await app.ready()`
   * (inject() readies it too). Closed by cleanup().
   */
  buildApp(options?: BuildOptions): Promise<App>;
  /** Closes every app built here and the context, and removes the temporary folder. */
  cleanup(): Promise<void>;
}

/**
 * A real configuration and AppContext for tests: a temporary data dir, a generated secret, a
 * captured log, and a fresh database of the chosen dialect. The defaults keep tests independent of
 * the machine: no task workers, no built web app (SKYFERRY_WEB_DIST points at an empty folder path),
 * local folders limited to a temporary root, and clouds allowed on loopback (the protocol servers').
 */
export async function createTestContext(options: TestContextOptions = {}): Promise<TestContext> {
  const dialect = options.dialect ?? 'sqlite';
  const root = mkdtempSync(join(tmpdir(), 'skyferry-ctx-'));
  const dataDir = join(root, 'data');
  const localRoot = join(root, 'local');
  mkdirSync(localRoot, { recursive: true });
  const databaseUrl =
    dialect === 'postgres' ? await createDatabase(inject('postgresUrl')) : join(dataDir, 'skyferry.db');
  const env: Record<string, string> = {
    HOST: '127.0.0.1',
    PORT: '0',
    SKYFERRY_DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    SKYFERRY_SECRET: randomBytes(32).toString('base64url'),
    SKYFERRY_LOCAL_ROOTS: localRoot,
    SKYFERRY_WEB_DIST: join(root, 'no-web-build'),
    SKYFERRY_WORKERS: '0',
    LOG_LEVEL: 'info',
    // The tests' protocol servers listen on loopback, which the outbound guard refuses by default.
    SKYFERRY_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8,::1',
    ...options.env,
  };
  for (const name of options.unset ?? []) delete env[name];
  const config = loadConfig(env, root);
  let captured = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      captured += chunk.toString();
      done();
    },
  });
  const log = pino(loggerOptions(config.logLevel), sink);
  let ctx: AppContext;
  try {
    ctx = await createContext(config, log);
  } catch (err) {
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
  const apps: App[] = [];
  return {
    ctx,
    config,
    dialect,
    databaseUrl,
    root,
    dataDir,
    localRoot,
    log,
    logs: () => captured,
    async buildApp(buildOptions = {}) {
      const app = await buildApp(ctx, { logger: log, ...buildOptions });
      apps.push(app);
      return app;
    },
    async cleanup() {
      for (const app of apps.splice(0)) await app.close();
      await ctx.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
