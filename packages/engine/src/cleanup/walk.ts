import { canceled, cleanPath, toProviderError, type Entry, type Provider } from '@skyferry/providers';
import { isBelow, isFatal } from '../util.ts';
import type { CleanupScanError } from './types.ts';

/** What a walk saw: every folder and file below the root. */
export interface WalkedFile {
  path: string;
  size: number;
  modTime: number | null;
  hashes: Entry['hashes'];
}

/** A file entry as a walk records it. */
export function walkedFileOf(e: Entry): WalkedFile {
  return { path: e.path, size: e.size, modTime: e.modTime?.getTime() ?? null, hashes: e.hashes };
}

/** Every entry of one folder, page after page. */
export async function listWhole(provider: Provider, dir: string, signal?: AbortSignal): Promise<Entry[]> {
  const entries: Entry[] = [];
  let token: string | undefined;
  do {
    if (signal?.aborted) throw canceled();
    const page = await provider.list(dir, { signal, pageToken: token });
    for (const e of page.entries) entries.push(e);
    token = page.nextPageToken;
  } while (token);
  return entries;
}

export interface WalkResult {
  /** Folders below the root (not the root), with their listed modification time. */
  folders: Map<string, number | null>;
  files: WalkedFile[];
  /** Folders that could not be listed: what is inside them is unknown. */
  unlisted: Set<string>;
  /** Symbolic links below the root: neither followed nor counted as files (a file seen through one is no duplicate). */
  links: string[];
  errors: CleanupScanError[];
}

export interface WalkOptions {
  signal?: AbortSignal;
  concurrency: number;
  onFolder?: (path: string, folders: number, files: number, bytes: number) => void;
}

/**
 * Lists everything below `root`. Bucket-based services are listed flat in one pass (their folders
 * are prefixes); others folder by folder, `concurrency` listings at once. A folder that cannot be
 * listed is recorded and skipped; a missing root and fatal errors (expired authorisation, cancel) throw.
 */
export async function walkTree(provider: Provider, rootPath: string, opts: WalkOptions): Promise<WalkResult> {
  const root = cleanPath(rootPath);
  const out: WalkResult = { folders: new Map(), files: [], unlisted: new Set(), errors: [], links: [] };
  let bytes = 0;
  const take = (e: Entry) => {
    if (!isBelow(root, e.path)) return;
    if (e.link) out.links.push(e.path);
    else if (e.kind === 'dir') {
      if (!out.folders.has(e.path) || e.modTime) out.folders.set(e.path, e.modTime?.getTime() ?? null);
    } else {
      out.files.push(walkedFileOf(e));
      bytes += e.size;
    }
  };

  if (provider.listRecursive && provider.features.bucketBased) {
    // One flat listing sees every key; it throws not_found for a missing root.
    for await (const batch of provider.listRecursive(root, { signal: opts.signal })) {
      if (opts.signal?.aborted) throw canceled();
      for (const e of batch) take(e);
      opts.onFolder?.(batch[batch.length - 1]?.path ?? root, out.folders.size, out.files.length, bytes);
    }
    return out;
  }

  const listAll = (dir: string) => listWhole(provider, dir, opts.signal);

  // The root must be listable: a scan of a missing folder fails rather than finding nothing.
  const first = await listAll(root);
  const pending: string[] = [];
  for (const e of first) {
    take(e);
    if (e.kind === 'dir' && !e.link && isBelow(root, e.path)) pending.push(e.path);
  }
  opts.onFolder?.(root, out.folders.size, out.files.length, bytes);

  await new Promise<void>((resolve, reject) => {
    let active = 0;
    let failed = false;
    const pump = () => {
      if (failed) return;
      if (pending.length === 0 && active === 0) {
        resolve();
        return;
      }
      while (active < opts.concurrency && pending.length > 0) {
        const dir = pending.pop() as string;
        active++;
        listAll(dir)
          .then(
            (entries) => {
              for (const e of entries) {
                take(e);
                if (e.kind === 'dir' && !e.link && isBelow(dir, e.path)) pending.push(e.path);
              }
              opts.onFolder?.(dir, out.folders.size, out.files.length, bytes);
            },
            (err: unknown) => {
              const e = toProviderError(err);
              if (opts.signal?.aborted || isFatal(e)) {
                failed = true;
                reject(opts.signal?.aborted ? canceled() : e);
                return;
              }
              out.unlisted.add(dir);
              out.errors.push({ path: dir, code: e.code, message: e.message });
            },
          )
          .finally(() => {
            active--;
            pump();
          });
      }
    };
    pump();
  });
  return out;
}
