import type { TestProject } from 'vitest/node';
import { startPostgres, type PostgresServer } from './postgres.ts';
import { startRedis, type RedisServer } from './redis.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string;
    redisUrl: string;
  }
}

let postgres: PostgresServer | undefined;
let redis: RedisServer | undefined;

/**
 * Vitest global setup: one PostgreSQL cluster and one Redis for the whole run, on 127.0.0.1.
 * Each test file makes its own database (createDatabase) or key prefix, so files stay independent.
 */
export async function setup(project: TestProject): Promise<void> {
  [postgres, redis] = await Promise.all([startPostgres(), startRedis()]);
  project.provide('postgresUrl', postgres.url);
  project.provide('redisUrl', redis.url);
}

export async function teardown(): Promise<void> {
  await Promise.all([postgres?.stop(), redis?.stop()]);
}
