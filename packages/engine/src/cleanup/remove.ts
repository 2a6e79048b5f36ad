import { toProviderError, type Provider, type ProviderErrorCode } from '@skyferry/providers';
import { walkTree } from './walk.ts';

/** Modification times closer than this count as unchanged (services round times to seconds). */
const TIME_WINDOW_MS = 2000;

export type RemoveOutcome =
  | { ok: true; trashed: boolean; alreadyGone: boolean }
  | { ok: false; reason: 'changed' | 'not_empty' | 'error'; code?: ProviderErrorCode; message: string };

export interface ExpectedFile {
  path: string;
  size: number;
  modTime: number | null;
}

async function discard(provider: Provider, path: string, kind: 'file' | 'dir', useTrash: boolean): Promise<boolean> {
  if (useTrash && provider.trash) {
    await provider.trash(path);
    return true;
  }
  if (kind === 'file') await provider.remove(path);
  else await provider.rmdir(path);
  return false;
}

function failed(err: unknown): RemoveOutcome {
  const e = toProviderError(err);
  return { ok: false, reason: 'error', code: e.code, message: e.message };
}

/**
 * Removes a file a scan reported, to the cloud's trash where it has one, but only when it is still
 * what the scan saw (same size and modification time): a file changed since is left alone.
 */
export async function removeScannedFile(
  provider: Provider,
  expected: ExpectedFile,
  opts: { useTrash?: boolean; signal?: AbortSignal } = {},
): Promise<RemoveOutcome> {
  try {
    const st = await provider.stat(expected.path, { signal: opts.signal });
    const t = st.modTime?.getTime();
    if (
      st.kind !== 'file' ||
      st.size !== expected.size ||
      (t !== undefined && expected.modTime !== null && Math.abs(t - expected.modTime) > TIME_WINDOW_MS)
    ) {
      return { ok: false, reason: 'changed', message: `${expected.path} changed since the scan` };
    }
    const trashed = await discard(provider, expected.path, 'file', opts.useTrash ?? true);
    return { ok: true, trashed, alreadyGone: false };
  } catch (err) {
    if (toProviderError(err).code === 'not_found') return { ok: true, trashed: false, alreadyGone: true };
    return failed(err);
  }
}

/**
 * Removes a folder a scan found empty, after listing it again: a folder that holds a file now (or
 * cannot be listed completely) is left alone. To the trash where the cloud has one.
 */
export async function removeEmptyFolder(
  provider: Provider,
  path: string,
  opts: { useTrash?: boolean; signal?: AbortSignal } = {},
): Promise<RemoveOutcome> {
  try {
    const walk = await walkTree(provider, path, { signal: opts.signal, concurrency: 4 });
    if (walk.files.length > 0 || walk.unlisted.size > 0) {
      return { ok: false, reason: 'not_empty', message: `${path} is no longer empty` };
    }
    const trashed = await discard(provider, path, 'dir', opts.useTrash ?? true);
    return { ok: true, trashed, alreadyGone: false };
  } catch (err) {
    const e = toProviderError(err);
    if (e.code === 'not_found') return { ok: true, trashed: false, alreadyGone: true };
    if (e.code === 'not_dir') return { ok: false, reason: 'changed', message: `${path} is no longer a folder` };
    return failed(err);
  }
}

/** Whether any of `copies` still exists as the scan saw it (so removing the others keeps one). */
export async function anyCopyRemains(
  provider: Provider,
  copies: readonly ExpectedFile[],
  signal?: AbortSignal,
): Promise<boolean> {
  for (const c of copies) {
    try {
      const st = await provider.stat(c.path, { signal });
      if (st.kind === 'file' && st.size === c.size) return true;
    } catch {
      // gone or unreadable: try the next copy
    }
  }
  return false;
}
