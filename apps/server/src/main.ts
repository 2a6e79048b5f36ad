// First: the heap's policy applies to everything loaded after it.
import './heap.ts';
import { pino } from 'pino';
import { buildApp } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { createContext } from './context.ts';
import { exitOnSignals, startMetricsServer } from './lifecycle.ts';
import { loggerOptions } from './logging.ts';

/** The API process: `node apps/server/src/main.ts` (npm start builds the web app first). */
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
  const ctx = await createContext(config, log, 'api');
  const app = await buildApp(ctx, { logger: log });
  const metricsServer =
    config.metricsPort !== undefined ? await startMetricsServer(ctx, config.metricsPort) : undefined;
  // New requests get 503 while the ones being served finish; then running task runs (in-process
  // workers) checkpoint and hand their jobs back.
  const shutdown = exitOnSignals(log, config.shutdownTimeoutMs, async () => {
    metricsServer?.close();
    await app.close();
    await ctx.close();
  });
  // Started by a parent over IPC (the desktop shell): it asks to stop with a message, which also
  // works on Windows, and a parent that is gone takes the server with it.
  if (process.send) {
    process.on('message', (msg: { type?: string } | null) => {
      if (msg?.type === 'shutdown') shutdown('shutdown message');
    });
    process.once('disconnect', () => {
      // The parent held this process's standard output: with it gone, a line written would stay
      // buffered, and the logger's last flush at exit would wait for it for ever.
      log.level = 'silent';
      shutdown('parent disconnected');
    });
  }
  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = config.publicUrl.replace(/:\d+$/, `:${port}`);
  console.log(`\nSkyferry is running: ${url}\n  database: ${ctx.db.dialect}, data: ${config.dataDir}\n`);
  const metricsAddress = metricsServer?.address();
  const metricsPort = typeof metricsAddress === 'object' && metricsAddress ? metricsAddress.port : undefined;
  if (process.send) process.send({ type: 'listening', url, ...(metricsPort ? { metricsPort } : {}) });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
