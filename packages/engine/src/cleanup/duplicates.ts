import { createHash } from 'node:crypto';
import { cleanupCategoryOf } from '@skyferry/contract';
import { ProviderError, canceled, toProviderError, type HashType, type Provider } from '@skyferry/providers';
import { Semaphore } from '../util.ts';
import type { CleanupScanError, DuplicateGroup, ScannedFile } from './types.ts';
import type { WalkedFile } from './walk.ts';

/** Service hashes strong enough to call two files the same, strongest first (CRC32 is not). */
const TRUSTED_HASHES: readonly HashType[] = ['sha256', 'sha1', 'dropbox', 'quickxor', 'md5'];

export const EDGE_BYTES_DEFAULT = 64 * 1024;

export interface DuplicateCounters {
  planned: number;
  read: number;
  reads: number;
  current: string;
  settledByServiceHash: number;
  partiallyRead: number;
  fullyRead: number;
}

export interface FindDuplicatesOptions {
  provider: Provider;
  files: readonly WalkedFile[];
  signal?: AbortSignal;
  readConcurrency: number;
  edgeBytes: number;
  counters: DuplicateCounters;
  errors: CleanupScanError[];
  onProgress?: () => void;
}

/** A hash type every member reports, if any (the strongest). */
export function commonHashType(files: readonly WalkedFile[]): HashType | undefined {
  for (const type of TRUSTED_HASHES) if (files.every((f) => Boolean(f.hashes?.[type]))) return type;
  return undefined;
}

export function toScanned(f: WalkedFile): ScannedFile {
  return { path: f.path, size: f.size, modTime: f.modTime, category: cleanupCategoryOf(f.path) };
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const it of items) {
    const k = key(it);
    const list = out.get(k);
    if (list) list.push(it);
    else out.set(k, [it]);
  }
  return out;
}

const PROGRESS_EVERY = 4 * 1024 * 1024;

/**
 * Finds files with the same content without reading any byte twice:
 * 1. files of the same size are candidates (empty files free nothing and are left out);
 * 2. a candidate group whose members all carry a hash the service reported is split by it, and nothing is read;
 * 3. otherwise each member's first and last `edgeBytes` are read (a file no longer than both edges is
 *    read whole, once, which settles it);
 * 4. only members still colliding have their middle read; their content key is the SHA-256 of the
 *    three segment digests, so the edges read in step 3 are never fetched again.
 */
export async function findDuplicates(o: FindDuplicatesOptions): Promise<DuplicateGroup[]> {
  const reads = new Semaphore(Math.max(1, o.readConcurrency));
  const E = o.edgeBytes;
  const c = o.counters;
  let sinceProgress = 0;

  /** SHA-256 of bytes [start, end] (inclusive) of a file; throws when the file does not have them. */
  const digest = async (path: string, start: number, end: number): Promise<Buffer> => {
    await reads.acquire();
    try {
      if (o.signal?.aborted) throw canceled();
      c.current = path;
      c.reads++;
      const stream = await o.provider.openRead(path, { range: { start, end }, signal: o.signal });
      const h = createHash('sha256');
      let got = 0;
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        h.update(chunk);
        got += chunk.length;
        c.read += chunk.length;
        sinceProgress += chunk.length;
        if (sinceProgress >= PROGRESS_EVERY) {
          sinceProgress = 0;
          o.onProgress?.();
        }
      }
      if (got !== end - start + 1) {
        throw new ProviderError('corrupted', `read ${got} bytes of ${path} where ${end - start + 1} were expected`, {
          retry: 'no_retry',
        });
      }
      return h.digest();
    } finally {
      reads.release();
      o.onProgress?.();
    }
  };

  /** Runs `fn` for each file; a file whose read fails is recorded and dropped (never called a duplicate). */
  const each = async <T>(files: readonly WalkedFile[], fn: (f: WalkedFile) => Promise<T>) => {
    const settled = await Promise.all(
      files.map(async (f) => {
        try {
          return { f, value: await fn(f) };
        } catch (err) {
          const e = toProviderError(err);
          if (o.signal?.aborted || e.code === 'canceled' || e.retry === 'fatal')
            throw o.signal?.aborted ? canceled() : e;
          o.errors.push({ path: f.path, code: e.code, message: e.message });
          return undefined;
        }
      }),
    );
    return settled.filter((x): x is { f: WalkedFile; value: Awaited<T> } => x !== undefined);
  };

  const groups: DuplicateGroup[] = [];
  const emit = (
    size: number,
    key: string,
    method: DuplicateGroup['method'],
    hashType: DuplicateGroup['hashType'],
    members: WalkedFile[],
  ) => {
    if (members.length < 2) return;
    const files = members.map(toScanned).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    groups.push({ key, method, hashType, size, files });
  };

  const settleSize = async (size: number, members: WalkedFile[]) => {
    const type = commonHashType(members);
    if (type) {
      c.settledByServiceHash += members.length;
      for (const [hash, same] of groupBy(members, (f) => (f.hashes?.[type] ?? '').toLowerCase())) {
        emit(size, `${type}:${hash}`, 'service_hash', type, same);
      }
      return;
    }
    if (size <= 2 * E) {
      c.planned += size * members.length;
      o.onProgress?.();
      const keyed = await each(members, async (f) => (await digest(f.path, 0, size - 1)).toString('hex'));
      c.fullyRead += keyed.length;
      for (const [hash, same] of groupBy(keyed, (k) => k.value)) {
        emit(
          size,
          `sha256:${hash}`,
          'content',
          'sha256',
          same.map((k) => k.f),
        );
      }
      return;
    }
    c.planned += 2 * E * members.length;
    o.onProgress?.();
    const edges = await each(members, async (f) => {
      const [head, tail] = await Promise.all([digest(f.path, 0, E - 1), digest(f.path, size - E, size - 1)]);
      return { head, tail };
    });
    c.partiallyRead += edges.length;
    const colliding = [...groupBy(edges, (e) => e.value.head.toString('hex') + e.value.tail.toString('hex')).values()]
      .filter((g) => g.length > 1)
      .flat();
    if (colliding.length === 0) return;
    c.planned += (size - 2 * E) * colliding.length;
    o.onProgress?.();
    const edgeOf = new Map(colliding.map((e) => [e.f, e.value]));
    const full = await each([...edgeOf.keys()], async (f) => {
      const edge = edgeOf.get(f) as { head: Buffer; tail: Buffer };
      const middle = await digest(f.path, E, size - E - 1);
      return createHash('sha256').update(edge.head).update(middle).update(edge.tail).digest('hex');
    });
    c.fullyRead += full.length;
    for (const [hash, same] of groupBy(full, (k) => k.value)) {
      emit(
        size,
        `sha256:${hash}`,
        'content',
        'sha256',
        same.map((k) => k.f),
      );
    }
  };

  const bySize = groupBy(
    o.files.filter((f) => f.size > 0),
    (f) => String(f.size),
  );
  const candidates = [...bySize.entries()]
    .filter(([, members]) => members.length > 1)
    .map(([size, members]) => ({ size: Number(size), members }))
    // Settle the cheapest first: service hashes and small files give results early.
    .sort((a, b) => a.size - b.size);
  // A few groups at a time (their reads share the semaphore): the waiting list stays short and the
  // memory flat however many candidates there are.
  let next = 0;
  const worker = async () => {
    for (let c = candidates[next++]; c; c = candidates[next++]) await settleSize(c.size, c.members);
  };
  await Promise.all(Array.from({ length: Math.max(2, 8 * o.readConcurrency) }, worker));
  return groups.sort((a, b) => b.size - a.size || (a.files[0]?.path ?? '').localeCompare(b.files[0]?.path ?? ''));
}
