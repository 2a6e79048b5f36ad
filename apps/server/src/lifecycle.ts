import { createServer, type Server } from 'node:http';
import type { Logger } from 'pino';
import type { AppContext } from './context.ts';
import { metricsAllowed } from './http/observability.ts';

/**
 * Stops the process on SIGTERM or SIGINT (or `trigger`): `stop` stops taking work and lets running
 * task runs checkpoint and hand their jobs back; the process exits when it is done, or when
 * `timeoutMs` has passed (exit code 1), or at once on a second signal.
 */
export function exitOnSignals(log: Logger, timeoutMs: number, stop: () => Promise<void>): (why: string) => void {
  let stopping = false;
  // Logging may fail on the way out (standard output a pipe to a parent that is gone: EPIPE);
  // stopping and exiting must not depend on it.
  const say = (write: () => void) => {
    try {
      write();
    } catch {
      // nowhere to write to
    }
  };
  const trigger = (why: string) => {
    if (stopping) {
      say(() => log.warn({ signal: why }, 'second stop request: exiting now'));
      process.exit(1);
    }
    stopping = true;
    const deadline = setTimeout(() => {
      say(() => log.error({ timeoutMs }, 'shutdown took longer than SKYFERRY_SHUTDOWN_TIMEOUT_MS: exiting'));
      process.exit(1);
    }, timeoutMs);
    say(() => log.info({ signal: why, timeoutMs }, 'shutting down'));
    stop().then(
      () => {
        clearTimeout(deadline);
        say(() => log.info('shut down'));
        process.exit(0);
      },
      (err: unknown) => {
        say(() => log.error({ err }, 'shutdown failed'));
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => trigger('SIGINT'));
  process.on('SIGTERM', () => trigger('SIGTERM'));
  return trigger;
}

/**
 * The metrics port (SKYFERRY_METRICS_PORT): /metrics and /healthz only, apart from the public port,
 * for Prometheus and the probes of processes that serve no other HTTP (workers). /metrics asks for
 * SKYFERRY_METRICS_TOKEN when it is set.
 */
export async function startMetricsServer(ctx: AppContext, port: number): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const answer = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return answer(405, 'text/plain', 'method not allowed\n');
    if (path === '/healthz') {
      ctx.health().then(
        () => answer(200, 'application/json', JSON.stringify({ status: 'ok', database: ctx.db.dialect })),
        () => answer(503, 'application/json', JSON.stringify({ status: 'unavailable' })),
      );
      return;
    }
    if (path !== '/metrics') return answer(404, 'text/plain', 'not found\n');
    if (!metricsAllowed(req.headers.authorization, ctx.config.metricsToken, true)) {
      res.setHeader('www-authenticate', 'Bearer realm="metrics"');
      return answer(401, 'text/plain', 'metrics need the bearer token of SKYFERRY_METRICS_TOKEN\n');
    }
    ctx.metrics.scrape().then(
      ({ contentType, body }) => answer(200, contentType, body),
      (err: unknown) => {
        ctx.log.warn({ err }, 'metrics not collected');
        answer(500, 'text/plain', 'metrics not collected\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, ctx.config.host, () => resolve());
  });
  server.unref();
  return server;
}
