import type { LoggerOptions } from 'pino';

/** Paths pino replaces with "[redacted]": tokens, passwords, keys and cloud credentials. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-temp-authorization"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.access_token',
  '*.refresh_token',
  '*.auto_login_token',
  '*.secret_access_key',
  '*.private_key',
  '*.passphrase',
  '*.credentials',
  '*.token',
  '*.secret',
  'credentials',
  'password',
];

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: {
      // Query strings may carry tokens (downloads, OAuth callbacks): log the path only.
      req(req: { method: string; url: string; id: string }) {
        return { method: req.method, path: req.url.split('?')[0], id: req.id };
      },
    },
  };
}
