import { AsyncLocalStorage } from 'node:async_hooks';
import { symbols, type LoggerOptions } from 'pino';

/** The request being served, for log lines written below the routes (services, repositories). */
export const requestScope = new AsyncLocalStorage<{ reqId: string }>();

/**
 * Adds the id of the request being served to every line logged while serving it; a request's own
 * logger (request.log) binds it already.
 */
function requestIdMixin(_obj: object, _level: number, logger: unknown): Record<string, string> {
  const scope = requestScope.getStore();
  if (!scope) return {};
  const bound = (logger as Record<symbol, unknown>)[symbols.chindingsSym];
  return typeof bound === 'string' && bound.includes('"reqId":') ? {} : { reqId: scope.reqId };
}

/** Fields that hold secrets wherever they appear, at the top of a log object or one level down. */
const SECRET_FIELDS = [
  'password',
  'access_token',
  'refresh_token',
  'auto_login_token',
  'temp_token',
  'secret_access_key',
  'private_key',
  'passphrase',
  'credentials',
  'token',
  'secret',
  'authorization',
];

/** Paths pino replaces with "[redacted]": tokens, passwords, keys and cloud credentials. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-temp-authorization"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.headers.authorization',
  '*.headers["x-temp-authorization"]',
  '*.headers.cookie',
  ...SECRET_FIELDS,
  ...SECRET_FIELDS.map((field) => `*.${field}`),
];

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    mixin: requestIdMixin,
    serializers: {
      // Query strings may carry tokens (downloads, OAuth callbacks): log the path only.
      req(req: { method: string; url: string; id: string }) {
        return { method: req.method, path: req.url.split('?')[0], id: req.id };
      },
    },
  };
}
