// First: the heap's policy applies to everything loaded after it.
import './heap.ts';
import { pino } from 'pino';
import { ConfigError, loadConfig } from './config.ts';
import { createContext } from './context.ts';
import { exitOnSignals, startMetricsServer } from './lifecycle.ts';
import { loggerOptions } from './logging.ts';

/**
 * The worker process: `npm run worker`. Runs task jobs (SKYFERRY_WORKERS at once, at least one) and
 * the scheduler, against the same DATABASE_URL (and REDIS_URL) as the API processes, on this
 * machine or another. It serves HTTP only on SKYFERRY_METRICS_PORT when set (/metrics, /healthz).
 * SIGTERM or SIGINT stop it: it takes no new job, running tasks stop after checkpointing what they
 * finished and are handed back to the queue, to resume on another worker (within
 * SKYFERRY_SHUTDOWN_TIMEOUT_MS, then it exits regardless).
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
  const ctx = await createContext({ ...config, workers: Math.max(1, config.workers) }, log, 'worker');
  const metricsServer =
    config.metricsPort !== undefined ? await startMetricsServer(ctx, config.metricsPort) : undefined;
  exitOnSignals(log, config.shutdownTimeoutMs, async () => {
    metricsServer?.close();
    await ctx.close();
  });
  const address = metricsServer?.address();
  const metricsPort = typeof address === 'object' && address ? address.port : undefined;
  log.info(
    { pid: process.pid, database: ctx.db.dialect, queue: config.redisUrl ? 'bullmq' : 'database', metricsPort },
    'worker ready',
  );
  if (process.send) process.send({ type: 'ready', pid: process.pid, ...(metricsPort ? { metricsPort } : {}) });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
