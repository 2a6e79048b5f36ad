import { pino } from 'pino';
import { ConfigError, loadConfig } from './config.ts';
import { createContext } from './context.ts';
import { loggerOptions } from './logging.ts';

/**
 * The worker process: `npm run worker`. Runs task jobs (SKYFERRY_WORKERS at once, at least one) and
 * the scheduler, against the same DATABASE_URL (and REDIS_URL) as the API processes, on this
 * machine or another. It serves no HTTP. SIGTERM or SIGINT stop it: running tasks are handed back
 * to the queue and resume on another worker from their checkpoints.
 */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  const log = pino(loggerOptions(config.logLevel));
  const ctx = await createContext({ ...config, workers: Math.max(1, config.workers) }, log);
  const shutdown = async (signal: string) => {
    log.info({ signal }, 'worker shutting down');
    await ctx.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  log.info(
    { pid: process.pid, database: ctx.db.dialect, queue: config.redisUrl ? 'bullmq' : 'database' },
    'worker ready',
  );
  if (process.send) process.send({ type: 'ready', pid: process.pid });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
