import { ProviderError, toProviderError, type ProviderErrorCode } from '../../api/errors.ts';

const FS_CODES: Record<string, ProviderErrorCode> = {
  ENOENT: 'not_found',
  EEXIST: 'exists',
  EISDIR: 'is_dir',
  ENOTDIR: 'not_dir',
  ENOTEMPTY: 'dir_not_empty',
  EACCES: 'permission',
  EPERM: 'permission',
  EROFS: 'permission',
  ENOSPC: 'quota',
  EDQUOT: 'quota',
  EFBIG: 'quota',
  ENAMETOOLONG: 'invalid_name',
  EILSEQ: 'invalid_name',
  EINVAL: 'invalid_name',
  EBUSY: 'conflict',
  EMFILE: 'server',
  ENFILE: 'server',
  EIO: 'server',
  EXDEV: 'not_supported',
};

/** Maps a Node fs error to a ProviderError, naming the cloud path (never the server's real path). */
export function fsError(err: unknown, path: string): ProviderError {
  if (err instanceof ProviderError) return err;
  const code = (err as { code?: string } | undefined)?.code;
  const mapped = code ? FS_CODES[code] : undefined;
  if (mapped) {
    return new ProviderError(mapped, `${mapped.replace('_', ' ')}: ${path}`, { serviceCode: code, cause: err });
  }
  return toProviderError(err);
}
