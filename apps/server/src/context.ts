import { sql } from 'kysely';
import type { Logger } from 'pino';
import { createDb, type Db } from '@skyferry/db';
import type { Config } from './config.ts';

/**
 * What the API and worker processes are built from: configuration, the database and the services
 * (use cases). Routes receive it; nothing below the services reads the environment.
 */
export interface AppContext {
  readonly config: Config;
  readonly db: Db;
  readonly log: Logger;
  /** Throws when the process cannot serve (database unreachable). */
  health(): Promise<void>;
  close(): Promise<void>;
}

export async function createContext(config: Config, log: Logger): Promise<AppContext> {
  const db = createDb({ url: config.databaseUrl });
  await db.migrate();
  const closers: Array<() => Promise<void>> = [];
  return {
    config,
    db,
    log,
    async health() {
      await sql`select 1`.execute(db.kysely);
    },
    async close() {
      for (const close of closers.reverse()) await close();
      await db.close();
    },
  };
}
