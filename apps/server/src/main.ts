import { pino } from 'pino';
import { buildApp } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { createContext } from './context.ts';
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
  const ctx = await createContext(config, log);
  const app = await buildApp(ctx, { logger: log });
  const shutdown = async (signal: string) => {
    log.info({ signal }, 'shutting down');
    await app.close();
    await ctx.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = config.publicUrl.replace(/:\d+$/, `:${port}`);
  console.log(`\nSkyferry is running: ${url}\n  database: ${ctx.db.dialect}, data: ${config.dataDir}\n`);
  if (process.send) process.send({ type: 'listening', url });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
