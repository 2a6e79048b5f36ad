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
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    await app.close();
    await ctx.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  // Started by a parent over IPC (the desktop shell): it asks to stop with a message, which also
  // works on Windows, and a parent that is gone takes the server with it.
  if (process.send) {
    process.on('message', (msg: { type?: string } | null) => {
      if (msg?.type === 'shutdown') void shutdown('shutdown message');
    });
    process.once('disconnect', () => void shutdown('parent disconnected'));
  }
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
