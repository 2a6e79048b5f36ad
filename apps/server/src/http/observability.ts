import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requestScope } from '../logging.ts';
import type { Metrics } from '../services/metrics.ts';
import { bearerToken } from './auth.ts';
import { apiNotFound } from './envelope.ts';
import { errors } from './errors.ts';

/** An id a proxy in front may pass on (X-Request-Id); anything else gets a fresh one. */
const GIVEN_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/** Fastify's `genReqId`: the proxy's X-Request-Id when it looks like one, else a random UUID. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && GIVEN_ID.test(given) ? given : randomUUID();
}

/**
 * Request ids in every answer (X-Request-Id) and every log line written while serving it, and each
 * answer's latency by route pattern for the metrics.
 */
export function installObservability(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    // The rest of the request (hooks, handler, services) runs inside this scope.
    requestScope.run({ reqId: request.id }, done);
  });
  app.addHook('onResponse', (request, reply, done) => {
    // The route's pattern keeps the label set small; paths no route matched share one label.
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.httpRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}

function sameToken(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/**
 * Whether a scrape may read the metrics: with SKYFERRY_METRICS_TOKEN set, a request bearing it; on
 * the public port without the token, nobody (the metrics port is for in-cluster scrapes).
 */
export function metricsAllowed(authorization: string | undefined, token: string | undefined, open: boolean): boolean {
  if (token !== undefined) return sameToken(bearerToken(authorization), token);
  return open;
}

/** GET /metrics on the public port: off (404) unless SKYFERRY_METRICS_TOKEN is set, then behind it. */
export function installMetricsRoute(app: FastifyInstance, metrics: Metrics, token: string | undefined): void {
  app.get('/metrics', { schema: { hide: true } }, async (request: FastifyRequest, reply: FastifyReply) => {
    if (token === undefined) return apiNotFound(request, reply);
    if (!metricsAllowed(request.headers.authorization, token, false)) {
      reply.header('www-authenticate', 'Bearer realm="metrics"');
      throw errors.unauthenticated();
    }
    const { contentType, body } = await metrics.scrape();
    return reply.type(contentType).header('cache-control', 'no-store').send(body);
  });
}
