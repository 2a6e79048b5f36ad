/**
 * Checks that two folders hold the same files: each file on one side is looked for on the other,
 * and each pair is compared by size, then by a hash both sides can give (one the services list, or
 * one a side computes itself, as the local disk does), and, when asked, by reading the content
 * where no such hash exists. Nothing is written. Memory grows with the number of files (both trees
 * are listed first), like the clean-up scans.
 */
import { passesFilter, type FileFilter } from '@skyferry/contract';
import {
  SUPPORTED_HASHES,
  canceled,
  cleanPath,
  mapLimit,
  toProviderError,
  type HashType,
  type Provider,
  type ProviderErrorCode,
} from '@skyferry/providers';
import { walkTree, walkedFileOf, type WalkResult, type WalkedFile } from './cleanup/walk.ts';
import { hashRank, hasherFor } from './copy-file.ts';
import { makeKey } from './planner.ts';
import { isFatal, sameHashes } from './util.ts';

export interface CheckRequest {
  source: Provider;
  sourcePath: string;
  target: Provider;
  targetPath: string;
  /** Only files of these types are compared (on both sides). */
  filter?: FileFilter | null;
  /** Only that every source file is on the target and the same; extras on the target are not differences. */
  oneWay?: boolean;
  /** Read the content of pairs that share no hash (the side without one, or both) instead of trusting their sizes. */
  download?: boolean;
  /** Listings and comparisons at once (default 8). */
  checkers?: number;
  /** Also list the pairs found the same, with how (`CheckResult.same`). */
  listSame?: boolean;
  signal?: AbortSignal;
  onProgress?: (p: CheckProgress) => void;
}

export interface CheckProgress {
  /** Files listed so far on both sides (while listing), then pairs compared so far. */
  done: number;
  /** Pairs to compare; 0 while listing. */
  total: number;
}

export type CheckDifferenceKind = 'missing_on_target' | 'missing_on_source' | 'size' | 'content';

export interface CheckDifference {
  /** Below the checked folders, starting with "/" ("/" itself when two files were checked). */
  path: string;
  kind: CheckDifferenceKind;
  sourceSize?: number;
  targetSize?: number;
  /** The hash that differed (content differences); absent when the bytes were compared as read. */
  hash?: HashType;
}

export interface CheckError {
  /** Absent when comparing a pair failed (hashing or reading either file). */
  side?: 'source' | 'target';
  path: string;
  code: ProviderErrorCode;
  message: string;
}

export interface CheckResult {
  /** Pairs found on both sides and compared. */
  compared: number;
  /** Pairs equal by a hash both sides gave. */
  sameByHash: number;
  /** Pairs equal by their content, read (`download`) because they share no hash. */
  sameByContent: number;
  /** Pairs of equal size whose content could not be compared (no shared hash, `download` not asked). */
  sizeOnly: number;
  differences: CheckDifference[];
  /** With `listSame`: each pair found the same (relative paths, as in differences) and how. */
  same?: { path: string; by: 'hash' | 'content' | 'size' }[];
  /** Files and folders that could not be listed, hashed or read: what they hold is unknown. */
  errors: CheckError[];
}

/** Both sides' files, by merge key, with each side's paths below its root. */
interface Side {
  provider: Provider;
  root: string;
  files: Map<string, { rel: string; file: WalkedFile }>;
  /** Folders that could not be listed, relative: files below them are unknown, never missing. */
  unlisted: string[];
  /** The root is a file (its relative path is "/"). */
  single: boolean;
}

/**
 * Lists one side. A root that is a file is that one file (relative path "/"); a missing target root
 * is an empty side (every source file is then missing on it); a missing source root throws.
 */
async function listSide(
  provider: Provider,
  rootPath: string,
  side: 'source' | 'target',
  req: CheckRequest,
  key: (p: string) => string,
  errors: CheckError[],
  listed: (files: number) => void,
): Promise<Side> {
  const root = cleanPath(rootPath);
  const out: Side = { provider, root, files: new Map(), unlisted: [], single: false };
  let walked: WalkResult;
  try {
    walked = await walkTree(provider, root, {
      concurrency: req.checkers ?? 8,
      ...(req.signal ? { signal: req.signal } : {}),
      onFolder: (_dir, _folders, files) => listed(files),
    });
  } catch (err) {
    const e = toProviderError(err);
    if (e.code === 'not_dir') {
      const file = walkedFileOf(await provider.stat(root, req.signal ? { signal: req.signal } : {}));
      out.files.set('/', { rel: '/', file });
      out.single = true;
      return out;
    }
    if (e.code === 'not_found' && side === 'target') return out;
    throw err;
  }
  const relOf = (path: string) => (root === '/' ? path : path.slice(root.length));
  for (const file of walked.files) {
    if (!passesFilter(file.path.slice(file.path.lastIndexOf('/') + 1), req.filter)) continue;
    const rel = relOf(file.path);
    out.files.set(key(rel), { rel, file });
  }
  for (const e of walked.errors) {
    out.unlisted.push(key(relOf(e.path)));
    errors.push({ side, path: relOf(e.path), code: e.code, message: e.message });
  }
  return out;
}

function isUnder(keyPath: string, folders: string[]): boolean {
  return folders.some((f) => keyPath.startsWith(`${f}/`));
}

/** What one side can give for a hash type without reading the file here: listed, or computed by the service. */
function canGive(p: Provider, f: WalkedFile, t: HashType): 'listed' | 'computed' | null {
  if (f.hashes?.[t]) return 'listed';
  return p.hash && p.hashes.has(t) ? 'computed' : null;
}

async function give(p: Provider, f: WalkedFile, t: HashType, signal?: AbortSignal): Promise<string | undefined> {
  return f.hashes?.[t] ?? (await p.hash?.(f.path, t, signal ? { signal } : {}));
}

async function readHash(p: Provider, f: WalkedFile, t: HashType, signal?: AbortSignal): Promise<string> {
  const hasher = await hasherFor(t);
  const body = await p.openRead(f.path, signal ? { signal } : {});
  for await (const chunk of body) {
    if (signal?.aborted) {
      body.destroy();
      throw canceled();
    }
    hasher.update(chunk as Buffer);
  }
  return hasher.digest();
}

/** Hash types both sides can give, those listed first (by how many sides list them), then by preference. */
function sharedTypes(a: Provider, fa: WalkedFile, b: Provider, fb: WalkedFile): HashType[] {
  const scored: { type: HashType; score: number }[] = [];
  for (const type of SUPPORTED_HASHES) {
    const x = canGive(a, fa, type);
    const y = canGive(b, fb, type);
    if (x && y) scored.push({ type, score: (x === 'listed' ? 0 : 1) + (y === 'listed' ? 0 : 1) });
  }
  return scored.sort((p, q) => p.score - q.score || hashRank(p.type) - hashRank(q.type)).map((s) => s.type);
}

type Outcome = { same: 'hash' | 'content' | 'size' } | { differs: HashType | null };

async function comparePair(s: Side, sf: WalkedFile, t: Side, tf: WalkedFile, req: CheckRequest): Promise<Outcome> {
  const signal = req.signal;
  // A hash both give without reading here; a computed one may still be missing for one file (an S3
  // object uploaded in parts has no MD5), then the next type, or reading, decides.
  for (const type of sharedTypes(s.provider, sf, t.provider, tf)) {
    const [a, b] = await Promise.all([give(s.provider, sf, type, signal), give(t.provider, tf, type, signal)]);
    if (a && b) return sameHashes({ [type]: a }, { [type]: b }) ? { same: 'hash' } : { differs: type };
  }
  if (!req.download) return { same: 'size' };
  // Read what has no hash: one side when the other gives one, else both (MD5 of each).
  for (const [known, kf, other, of] of [
    [s.provider, sf, t.provider, tf],
    [t.provider, tf, s.provider, sf],
  ] as const) {
    for (const type of SUPPORTED_HASHES.filter((x) => canGive(known, kf, x)).sort(
      (x, y) => hashRank(x) - hashRank(y),
    )) {
      const a = await give(known, kf, type, signal);
      if (!a) continue;
      const b = await readHash(other, of, type, signal);
      return a.toLowerCase() === b.toLowerCase() ? { same: 'content' } : { differs: type };
    }
  }
  const [a, b] = await Promise.all([readHash(s.provider, sf, 'md5', signal), readHash(t.provider, tf, 'md5', signal)]);
  return a === b ? { same: 'content' } : { differs: null };
}

/** Compares two folders (or two files); see the file's comment. Throws only for a missing source, an expired sign-in or a cancel. */
export async function checkTrees(req: CheckRequest): Promise<CheckResult> {
  const key = makeKey(req.source.features.caseInsensitive || req.target.features.caseInsensitive);
  const errors: CheckError[] = [];
  const listedFiles = { source: 0, target: 0 };
  const listed = (side: 'source' | 'target') => (files: number) => {
    listedFiles[side] = files;
    req.onProgress?.({ done: listedFiles.source + listedFiles.target, total: 0 });
  };
  const [s, t] = await Promise.all([
    listSide(req.source, req.sourcePath, 'source', req, key, errors, listed('source')),
    listSide(req.target, req.targetPath, 'target', req, key, errors, listed('target')),
  ]);
  // A file checked against a folder: against the file of its name in that folder, and nothing else there.
  const lone = s.files.get('/');
  if (s.single && lone && !t.single) {
    const rel = `/${lone.file.path.slice(lone.file.path.lastIndexOf('/') + 1)}`;
    s.files = new Map([[key(rel), { rel, file: lone.file }]]);
    const match = t.files.get(key(rel));
    t.files = new Map(match ? [[key(rel), match]] : []);
  }
  const result: CheckResult = {
    compared: 0,
    sameByHash: 0,
    sameByContent: 0,
    sizeOnly: 0,
    differences: [],
    errors,
    ...(req.listSame ? { same: [] } : {}),
  };
  const pairs: [WalkedFile, WalkedFile, string][] = [];
  for (const [k, { rel, file }] of s.files) {
    const other = t.files.get(k);
    if (other) pairs.push([file, other.file, rel]);
    else if (!isUnder(k, t.unlisted))
      result.differences.push({ path: rel, kind: 'missing_on_target', sourceSize: file.size });
  }
  if (!req.oneWay) {
    for (const [k, { rel, file }] of t.files) {
      if (!s.files.has(k) && !isUnder(k, s.unlisted))
        result.differences.push({ path: rel, kind: 'missing_on_source', targetSize: file.size });
    }
  }
  let done = 0;
  await mapLimit(pairs, req.checkers ?? 8, async ([sf, tf, rel]) => {
    if (req.signal?.aborted) throw canceled();
    result.compared++;
    try {
      if (sf.size !== tf.size) {
        result.differences.push({ path: rel, kind: 'size', sourceSize: sf.size, targetSize: tf.size });
        return;
      }
      const outcome = await comparePair(s, sf, t, tf, req);
      if ('same' in outcome) {
        result.same?.push({ path: rel, by: outcome.same });
        if (outcome.same === 'hash') result.sameByHash++;
        else if (outcome.same === 'content') result.sameByContent++;
        else result.sizeOnly++;
      } else {
        result.differences.push({
          path: rel,
          kind: 'content',
          sourceSize: sf.size,
          targetSize: tf.size,
          ...(outcome.differs ? { hash: outcome.differs } : {}),
        });
      }
    } catch (err) {
      if (req.signal?.aborted || isFatal(toProviderError(err))) throw req.signal?.aborted ? canceled() : err;
      const e = toProviderError(err);
      errors.push({ path: rel, code: e.code, message: e.message });
    } finally {
      req.onProgress?.({ done: ++done, total: pairs.length });
    }
  });
  const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
  result.differences.sort(byPath);
  result.same?.sort(byPath);
  return result;
}
