import { ProviderError, toProviderError } from '../../api/errors.ts';

/** SFTP v3 status codes (draft-ietf-secsh-filexfer-02) and a few later ones servers send. */
const NO_SUCH_FILE = 2;
const PERMISSION_DENIED = 3;
const OP_UNSUPPORTED = 8;
const NO_SUCH_PATH = 10;
const FILE_ALREADY_EXISTS = 11;
const NO_SPACE_ON_FILESYSTEM = 14;
const QUOTA_EXCEEDED = 15;
const DIR_NOT_EMPTY = 18;
const NOT_A_DIRECTORY = 19;
const FILE_IS_A_DIRECTORY = 24;

/** Maps an ssh2 SFTP error (numeric `code`) or a transport error to a ProviderError. */
export function sftpError(err: unknown, path: string): ProviderError {
  if (err instanceof ProviderError) return err;
  const e = err as { code?: unknown; message?: string } | undefined;
  const msg = `${e?.message ?? String(err)}: ${path}`;
  const serviceCode = typeof e?.code === 'number' || typeof e?.code === 'string' ? e.code : undefined;
  const opts = { cause: err, serviceCode };
  switch (e?.code) {
    case NO_SUCH_FILE:
    case NO_SUCH_PATH:
      return new ProviderError('not_found', `not found: ${path}`, opts);
    case PERMISSION_DENIED:
      return new ProviderError('permission', `permission denied: ${path}`, opts);
    case OP_UNSUPPORTED:
      return new ProviderError('not_supported', msg, opts);
    case FILE_ALREADY_EXISTS:
      return new ProviderError('exists', `already exists: ${path}`, opts);
    case NO_SPACE_ON_FILESYSTEM:
    case QUOTA_EXCEEDED:
      return new ProviderError('quota', msg, opts);
    case DIR_NOT_EMPTY:
      return new ProviderError('dir_not_empty', msg, opts);
    case NOT_A_DIRECTORY:
      return new ProviderError('not_dir', `not a folder: ${path}`, opts);
    case FILE_IS_A_DIRECTORY:
      return new ProviderError('is_dir', `is a folder: ${path}`, opts);
    default:
      break;
  }
  if (/no such file/i.test(e?.message ?? '')) return new ProviderError('not_found', `not found: ${path}`, opts);
  if (/permission denied/i.test(e?.message ?? '')) return new ProviderError('permission', msg, opts);
  if (/no response from server|not connected|channel.*closed|connection lost/i.test(e?.message ?? '')) {
    return new ProviderError('network', msg, opts);
  }
  const pe = toProviderError(err);
  return pe.code === 'unknown' && typeof e?.code === 'number' ? new ProviderError('unknown', msg, opts) : pe;
}
