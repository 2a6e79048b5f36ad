/** Why an operation failed, in terms the engine and the API can act on. */
export type ProviderErrorCode =
  | 'not_found'
  | 'exists'
  | 'is_dir'
  | 'not_dir'
  | 'dir_not_empty'
  | 'permission'
  | 'quota'
  /** The account's transaction cap (a per-day spending cap the owner sets, e.g. Backblaze B2's) is used up. */
  | 'transaction_cap'
  | 'rate_limited'
  | 'auth_expired'
  | 'auth_invalid'
  | 'not_supported'
  | 'invalid_name'
  | 'conflict'
  | 'network'
  | 'server'
  | 'canceled'
  | 'host_key_changed'
  | 'corrupted'
  /** The outbound-connection guard refused the server's address (net/guard.ts). */
  | 'address_not_allowed'
  | 'unknown';

/** retry: try again after a pause; no_retry: this item failed, go on; fatal: stop the whole run. */
export type RetryClass = 'retry' | 'no_retry' | 'fatal';

const DEFAULT_RETRY: Record<ProviderErrorCode, RetryClass> = {
  not_found: 'no_retry',
  exists: 'no_retry',
  is_dir: 'no_retry',
  not_dir: 'no_retry',
  dir_not_empty: 'no_retry',
  permission: 'no_retry',
  quota: 'fatal',
  // Lifted only by the owner raising the cap (or the next day): retrying just spends more calls.
  transaction_cap: 'fatal',
  rate_limited: 'retry',
  auth_expired: 'fatal',
  auth_invalid: 'fatal',
  not_supported: 'no_retry',
  invalid_name: 'no_retry',
  conflict: 'retry',
  network: 'retry',
  server: 'retry',
  canceled: 'fatal',
  host_key_changed: 'fatal',
  corrupted: 'retry',
  address_not_allowed: 'fatal',
  unknown: 'no_retry',
};

export class ProviderError extends Error {
  readonly code: ProviderErrorCode;
  readonly retry: RetryClass;
  /** How long the service asked us to wait (Retry-After), in milliseconds. */
  readonly retryAfterMs: number | undefined;
  /** The service's own status or error name, for "Cloud Drive operation error! [{code}]". */
  readonly serviceCode: string | undefined;

  constructor(
    code: ProviderErrorCode,
    message: string,
    options: { retry?: RetryClass; retryAfterMs?: number; serviceCode?: string | number; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'ProviderError';
    this.code = code;
    this.retry = options.retry ?? DEFAULT_RETRY[code];
    this.retryAfterMs = options.retryAfterMs;
    this.serviceCode = options.serviceCode === undefined ? undefined : String(options.serviceCode);
  }

  static is(err: unknown, code?: ProviderErrorCode): err is ProviderError {
    return err instanceof ProviderError && (code === undefined || err.code === code);
  }
}

export function notFound(path: string): ProviderError {
  return new ProviderError('not_found', `not found: ${path}`);
}

export function canceled(): ProviderError {
  return new ProviderError('canceled', 'canceled');
}

/** Wraps any thrown value: ProviderErrors pass through; Node network errors become `network`; aborts `canceled`. */
export function toProviderError(err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  const e = err as { name?: string; code?: string; message?: string } | undefined;
  if (e?.name === 'AbortError' || e?.code === 'ABORT_ERR')
    return new ProviderError('canceled', 'canceled', { cause: err });
  const networkCodes = [
    'ECONNRESET',
    'ECONNREFUSED',
    'EPIPE',
    'ETIMEDOUT',
    'ENOTFOUND',
    'EAI_AGAIN',
    'ECONNABORTED',
    'EHOSTUNREACH',
    'ENETUNREACH',
    'UND_ERR_SOCKET',
    'UND_ERR_CONNECT_TIMEOUT',
    'UND_ERR_HEADERS_TIMEOUT',
    'UND_ERR_BODY_TIMEOUT',
  ];
  // HPE_*: an answer that is not HTTP; EPROTO, ERR_SSL_*: a server that does not speak TLS.
  if (e?.code && (networkCodes.includes(e.code) || /^(HPE_|ERR_SSL_)|^EPROTO$/.test(e.code)))
    return new ProviderError('network', e.message ?? e.code, { cause: err, serviceCode: e.code });
  return new ProviderError('unknown', e?.message ?? String(err), { cause: err });
}
