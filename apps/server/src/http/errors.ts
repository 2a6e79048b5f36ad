import { Code, httpStatusOf, type MessageKey } from '@skyferry/contract';

/**
 * An error that leaves the API as the envelope: a stable code, a message key translated into the
 * caller's language, and optional data (for example what a confirmation prompt needs).
 */
export class ApiError extends Error {
  readonly code: number;
  readonly key: MessageKey;
  readonly params: Record<string, string | number>;
  readonly data: unknown;
  readonly status: number;

  constructor(
    code: number,
    key: MessageKey,
    params: Record<string, string | number> = {},
    data: unknown = null,
    status?: number,
  ) {
    super(key);
    this.name = 'ApiError';
    this.code = code;
    this.key = key;
    this.params = params;
    this.data = data;
    this.status = status ?? httpStatusOf(code);
  }
}

/** Small factories with stable codes, so call sites read as what happened. */
export const errors = {
  badRequest: (key: MessageKey = 'unknown_error', params: Record<string, string | number> = {}, data: unknown = null) =>
    new ApiError(Code.BAD_REQUEST, key, params, data),
  notFound: (key: MessageKey = 'not_found', params: Record<string, string | number> = {}) =>
    new ApiError(Code.NOT_FOUND, key, params),
  pathNotExist: () => new ApiError(Code.NOT_FOUND, 'path_not_exist'),
  unauthenticated: () => new ApiError(Code.UNAUTHENTICATED, 'unauthenticated'),
  refreshRejected: () => new ApiError(Code.REFRESH_REJECTED, 'session_expired'),
  forbidden: (key: MessageKey = 'cloud_read_only') => new ApiError(Code.FORBIDDEN, key),
  premiumRequired: () => new ApiError(Code.PREMIUM_REQUIRED, 'premium_required'),
  licenseExpired: () => new ApiError(Code.LICENSE_EXPIRED, 'license_expired'),
  alreadyExists: () => new ApiError(Code.ALREADY_EXISTS, 'already_exists'),
  rateLimited: (key: MessageKey = 'too_many_requests', params: Record<string, string | number> = {}) =>
    new ApiError(Code.RATE_LIMITED, key, params),
  cloudAuthExpired: (data: unknown = null) => new ApiError(Code.CLOUD_AUTH_EXPIRED, 'cloud_auth_expired', {}, data),
  internal: () => new ApiError(Code.INTERNAL, 'server_error'),
  bindRequiresSignIn: () => new ApiError(Code.BIND_REQUIRES_SIGN_IN, 'bind_requires_sign_in'),
};
