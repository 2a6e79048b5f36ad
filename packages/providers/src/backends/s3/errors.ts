import { ProviderError, toProviderError, type ProviderErrorCode, type RetryClass } from '../../api/errors.ts';
import { parseRetryAfter } from '../../pacer.ts';

const BY_NAME: Record<string, ProviderErrorCode> = {
  NoSuchKey: 'not_found',
  NotFound: 'not_found',
  NoSuchUpload: 'not_found',
  NoSuchBucket: 'not_found',
  AccessDenied: 'permission',
  AllAccessDisabled: 'permission',
  AccountProblem: 'permission',
  InvalidObjectState: 'permission',
  InvalidAccessKeyId: 'auth_invalid',
  SignatureDoesNotMatch: 'auth_invalid',
  InvalidSecurity: 'auth_invalid',
  InvalidToken: 'auth_invalid',
  ExpiredToken: 'auth_expired',
  TokenRefreshRequired: 'auth_expired',
  SlowDown: 'rate_limited',
  Throttling: 'rate_limited',
  ThrottlingException: 'rate_limited',
  TooManyRequests: 'rate_limited',
  TooManyRequestsException: 'rate_limited',
  RequestLimitExceeded: 'rate_limited',
  ServiceUnavailable: 'rate_limited',
  InternalError: 'server',
  RequestTimeout: 'network',
  RequestTimeTooSkewed: 'server',
  BadDigest: 'corrupted',
  InvalidDigest: 'corrupted',
  XAmzContentSHA256Mismatch: 'corrupted',
  KeyTooLongError: 'invalid_name',
  InvalidObjectName: 'invalid_name',
  NotImplemented: 'not_supported',
  MethodNotAllowed: 'not_supported',
  EntityTooLarge: 'not_supported',
  QuotaExceeded: 'quota',
  StorageQuotaExceeded: 'quota',
  PreconditionFailed: 'conflict',
  OperationAborted: 'conflict',
};

/**
 * Backblaze B2 answers a call over its daily transaction cap with 403 and the message "Transaction
 * cap exceeded, see the Caps & Alerts page to increase your cap" (native API code
 * `transaction_cap_exceeded`; over the S3-compatible API the XML error carries the same message,
 * under code AccessDenied). Only the message tells it apart from a plain refusal.
 */
const TRANSACTION_CAP = /transaction (?:\(class [a-z]\) )?cap exceeded/i;

function isTransactionCap(name: string, status: number, message: string | undefined): boolean {
  if (name === 'transaction_cap_exceeded') return true;
  return (status === 403 || name === 'AccessDenied') && TRANSACTION_CAP.test(message ?? '');
}

function byStatus(status: number): ProviderErrorCode | undefined {
  if (status === 404) return 'not_found';
  if (status === 401) return 'auth_invalid';
  if (status === 403) return 'permission';
  if (status === 409) return 'conflict';
  if (status === 429 || status === 503) return 'rate_limited';
  if (status >= 500) return 'server';
  return undefined;
}

interface SdkError {
  name?: string;
  Code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
  $response?: { headers?: Record<string, string | undefined> };
}

/** Maps an S3 SDK error to a ProviderError. `what` names the cloud path or operation. */
export function s3Error(err: unknown, what: string): ProviderError {
  if (err instanceof ProviderError) return err;
  const e = (err ?? {}) as SdkError;
  if (e.name === 'AbortError') return toProviderError(err);
  const name = e.Code ?? e.name ?? '';
  const status = e.$metadata?.httpStatusCode ?? 0;
  const code: ProviderErrorCode | undefined = isTransactionCap(name, status, e.message)
    ? 'transaction_cap'
    : (BY_NAME[name] ?? (status ? byStatus(status) : undefined));
  if (!code) return toProviderError(err);
  let retry: RetryClass | undefined;
  // A missing or unreachable bucket is a setting to fix, not an item to skip.
  if (name === 'NoSuchBucket' || name === 'AllAccessDisabled') retry = 'fatal';
  const retryAfterMs = parseRetryAfter(e.$response?.headers?.['retry-after']);
  const detail = e.message && e.message !== name && e.message !== 'UnknownError' ? `: ${e.message}` : '';
  return new ProviderError(code, `${name || `HTTP ${status}`} (${what})${detail}`, {
    retry,
    retryAfterMs,
    serviceCode: name || status,
    cause: err,
  });
}
