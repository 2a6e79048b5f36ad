import { Code } from '@skyferry/contract';
import { toProviderError } from '@skyferry/providers';
import { ApiError } from '../../http/errors.ts';

/** What a provider failure becomes in the envelope, and whether the cloud's authorisation expired. */
export interface MappedError {
  error: ApiError;
  /** The service rejected the stored credentials: mark the cloud expired. */
  expired: boolean;
}

/**
 * Maps any failure of a file call to the API's answer: ApiErrors pass through; provider errors get
 * the catalogue's codes (spec section 8): not found -> 404 "The path does not exist.", expired
 * authorisation -> 401, a full cloud -> 507001, a used-up transaction cap -> 6007001, rate limits -> 429001, unreachable -> 503001, and
 * everything else -> 502001 "Cloud Drive operation error! [{code}]". Without `cloud` (a failure
 * no service named) the answer cannot name the cloud.
 */
export function mapFileError(err: unknown, cloud?: { id: string; label: string }): MappedError {
  if (err instanceof ApiError) return { error: err, expired: false };
  const pe = toProviderError(err);
  const make = (code: number, key: ConstructorParameters<typeof ApiError>[1], params = {}, data: unknown = null) =>
    new ApiError(code, key, params, data);
  switch (pe.code) {
    case 'not_found':
    case 'not_dir':
      return { error: make(Code.NOT_FOUND, 'path_not_exist'), expired: false };
    case 'exists':
      return { error: make(Code.ALREADY_EXISTS, 'already_exists'), expired: false };
    case 'auth_expired':
    case 'auth_invalid':
      return {
        error: make(Code.CLOUD_AUTH_EXPIRED, 'cloud_auth_expired', {}, cloud ? { cloud_id: cloud.id } : null),
        expired: true,
      };
    case 'quota':
      return {
        error: cloud
          ? make(Code.INSUFFICIENT_TARGET_STORAGE, 'insufficient_space', { cloud_name: cloud.label })
          : make(Code.INSUFFICIENT_TARGET_STORAGE, 'insufficient_target_storage'),
        expired: false,
      };
    case 'transaction_cap':
      return { error: make(Code.TRANSACTION_CAP, 'transaction_cap'), expired: false };
    case 'rate_limited':
      return { error: make(Code.RATE_LIMITED, 'too_many_requests'), expired: false };
    case 'permission':
    case 'not_supported':
      return { error: make(Code.FORBIDDEN, 'cloud_read_only'), expired: false };
    case 'invalid_name':
      return { error: make(Code.BAD_REQUEST, 'name_forbidden_chars'), expired: false };
    case 'address_not_allowed':
      return { error: make(Code.FORBIDDEN, 'cloud_address_not_allowed'), expired: false };
    case 'dir_not_empty':
    case 'conflict':
      return {
        error: make(Code.CONFLICT, 'cloud_operation_error', { code: pe.serviceCode ?? pe.code }),
        expired: false,
      };
    case 'network':
      return { error: make(Code.CLOUD_UNAVAILABLE, 'cloud_unreachable'), expired: false };
    default:
      return {
        error: make(Code.CLOUD_OPERATION_ERROR, 'cloud_operation_error', { code: pe.serviceCode ?? pe.code }),
        expired: false,
      };
  }
}
