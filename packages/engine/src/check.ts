/**
 * Checks that two folders hold the same files: each file on one side is looked for on the other,
 * and each pair is compared by size, then by a hash both sides can give (one the services list, or
 * one a side computes itself, as the local disk does), and, when asked, by reading the content
 * where no such hash exists. Nothing is written. Both trees are walked together, folder by folder,
 * as the planner does: pairs are compared while the walk goes on, and memory grows with the widest
 * folder, the folders waiting to be listed and what is found (differences, and the same pairs when
 * asked for), not with the number of files; except on a bucket-based side (S3), listed whole in
 * one pass (see flatListing).
 */
import type { FileFilter } from '@skyferry/contract';
import { compileFilter } from './filter/index.ts';
import {
  SUPPORTED_HASHES,
  createHasher,
  canceled,
  cleanPath,
  toProviderError,
  type HashType,
  type Provider,
  type ProviderErrorCode,
} from '@skyferry/providers';
import { listWhole, walkTree, walkedFileOf, type WalkedFile } from './cleanup/walk.ts';
import { hashRank } from './copy-file.ts';
import { makeKey } from './planner.ts';
import { Semaphore, baseName, isBelow, isFatal, joinRel, parentPath, sameHashes } from './util.ts';

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
  /** Listings and comparisons at once (default 8; comparisons, when not given: more where both sides hash more at once, see Provider.hashesAtOnce). */
  checkers?: number;
  /** Also list the pairs found the same, with how (`CheckResult.same`). */
  listSame?: boolean;
  signal?: AbortSignal;
  onProgress?: (p: CheckProgress) => void;
}

export interface CheckProgress {
  /** Files listed so far, on both sides. */
  listed: number;
  /** Files found on both sides so far (the walk goes on while they are compared). */
  pairs: number;
  /** Pairs compared so far. */
  compared: number;
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
  same?: { path: string; by: 'hash' | 'content' | 'size'; size: number }[];
  /** Files and folders that could not be listed, hashed or read: what they hold is unknown. */
  errors: CheckError[];
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
  const hasher = await createHasher(t);
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

async function comparePair(
  source: Provider,
  sf: WalkedFile,
  target: Provider,
  tf: WalkedFile,
  req: CheckRequest,
): Promise<Outcome> {
  const signal = req.signal;
  // A hash both give without reading here; a computed one may still be missing for one file (an S3
  // object uploaded in parts has no MD5), then the next type, or reading, decides.
  for (const type of sharedTypes(source, sf, target, tf)) {
    const [a, b] = await Promise.all([give(source, sf, type, signal), give(target, tf, type, signal)]);
    if (a && b) return sameHashes({ [type]: a }, { [type]: b }) ? { same: 'hash' } : { differs: type };
  }
  if (!req.download) return { same: 'size' };
  // Read what has no hash: one side when the other gives one, else both (MD5 of each).
  for (const [known, kf, other, of] of [
    [source, sf, target, tf],
    [target, tf, source, sf],
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
  const [a, b] = await Promise.all([readHash(source, sf, 'md5', signal), readHash(target, tf, 'md5', signal)]);
  return a === b ? { same: 'content' } : { differs: null };
}

/** Where one side's check starts: a folder, one file, or nothing (a target not there yet). */
type Root = { folder: string } | { file: WalkedFile } | { missing: true };

async function rootOf(
  provider: Provider,
  rootPath: string,
  side: 'source' | 'target',
  req: CheckRequest,
): Promise<Root> {
  const path = cleanPath(rootPath);
  try {
    const e = await provider.stat(path, { expectFolder: true, ...(req.signal ? { signal: req.signal } : {}) });
    return e.kind === 'dir' ? { folder: path } : { file: walkedFileOf(e) };
  } catch (err) {
    if (req.signal?.aborted) throw canceled();
    // A missing target is an empty side (every source file is missing on it); a missing source is an error.
    if (side === 'target' && toProviderError(err).code === 'not_found') return { missing: true };
    throw err;
  }
}

/** A folder's entry as listed: a file (with what a walk keeps of it) or, without `file`, a folder. */
type Listed = { path: string; file?: WalkedFile };

/** One folder's entries of one side, by merge key: its files (those the filter lets through) and its folders. */
interface Folder {
  files: Map<string, { rel: string; file: WalkedFile }>;
  folders: Map<string, { rel: string; path: string }>;
}

/** Compares two folders (or two files); see the file's comment. Throws only for a missing source, an expired sign-in or a cancel. */
export async function checkTrees(req: CheckRequest): Promise<CheckResult> {
  const { source, target, signal } = req;
  const key = makeKey(source.features.caseInsensitive || target.features.caseInsensitive);
  const checkers = Math.max(1, req.checkers ?? 8);
  const result: CheckResult = {
    compared: 0,
    sameByHash: 0,
    sameByContent: 0,
    sizeOnly: 0,
    differences: [],
    errors: [],
    ...(req.listSame ? { same: [] } : {}),
  };
  const counts = { listed: 0, pairs: 0 };
  const matcher = compileFilter(req.filter);
  const progress = () => req.onProgress?.({ ...counts, compared: result.compared });
  /** The first error that ends the check (fatal, or a cancel); everything under way stops at its next step. */
  let ended: { err: unknown } | undefined;
  const end = (err: unknown) => {
    ended ??= { err: signal?.aborted ? canceled() : err };
  };
  const stopped = () => {
    if (signal?.aborted) end(canceled());
    return ended !== undefined;
  };

  // Comparisons run beside the walk, `checkers` at once (unless asked, more where both sides hash
  // more at once, as the local disk does); a folder's walk waits for a place before going on, so
  // the walk never runs far ahead of them.
  const atOnce = Math.min(source.hashesAtOnce ?? checkers, target.hashesAtOnce ?? checkers);
  const places = new Semaphore(req.checkers === undefined ? Math.max(checkers, atOnce) : checkers);
  const comparing = new Set<Promise<void>>();
  const compare = async (sf: WalkedFile, tf: WalkedFile, rel: string): Promise<void> => {
    counts.pairs++;
    await places.acquire();
    if (stopped()) {
      places.release();
      return;
    }
    const run = comparePairInto(result, source, sf, target, tf, rel, req)
      .catch(end)
      .finally(() => {
        places.release();
        comparing.delete(run);
        progress();
      });
    comparing.add(run);
  };

  const [s, t] = await Promise.all([
    rootOf(source, req.sourcePath, 'source', req),
    rootOf(target, req.targetPath, 'target', req),
  ]);

  if ('file' in s) {
    // Two files; or a file against the file of its name in a folder, and nothing else there.
    const name = baseName(s.file.path);
    let other: WalkedFile | undefined;
    if ('file' in t) other = t.file;
    else if ('folder' in t) {
      try {
        const e = await target.stat(joinRel(t.folder, `/${name}`), signal ? { signal } : {});
        if (e.kind === 'file') other = walkedFileOf(e);
      } catch (err) {
        const e = toProviderError(err);
        if (signal?.aborted || isFatal(e)) throw signal?.aborted ? canceled() : e;
        if (e.code !== 'not_found')
          result.errors.push({ side: 'target', path: `/${name}`, code: e.code, message: e.message });
      }
    }
    const rel = 'file' in t ? '/' : `/${name}`;
    if (other) await compare(s.file, other, rel);
    else if (!result.errors.length)
      result.differences.push({ path: rel, kind: 'missing_on_target', sourceSize: s.file.size });
  } else if ('folder' in s) {
    if ('file' in t && !req.oneWay)
      result.differences.push({ path: '/', kind: 'missing_on_source', targetSize: t.file.size });

    /**
     * A bucket-based side (S3) is listed whole in one pass (walkTree's flat listing), as rclone's
     * --fast-list does: one request a thousand keys instead of one a folder, and a flat listing
     * sees every key where a server's folder listings miss some (s3rver's, of folders holding only
     * folders). That side's listing is then held in memory, its folders served from it.
     */
    const flat = new Map<'source' | 'target', Promise<Map<string, Listed[]>>>();
    const flatListing = (provider: Provider, root: string, side: 'source' | 'target') => {
      let index = flat.get(side);
      if (!index) {
        index = walkTree(provider, root, { concurrency: 1, ...(signal ? { signal } : {}) }).then((walked) => {
          const byFolder = new Map<string, Listed[]>();
          const add = (x: Listed) => {
            const parent = parentPath(x.path);
            let list = byFolder.get(parent);
            if (!list) byFolder.set(parent, (list = []));
            list.push(x);
          };
          for (const path of walked.folders.keys()) add({ path });
          for (const file of walked.files) add({ path: file.path, file });
          return byFolder;
        });
        flat.set(side, index);
      }
      return index;
    };
    const roots = { source: s.folder, target: 'folder' in t ? t.folder : '/' };

    /** All of one folder of one side (null: it could not be listed, and the error is recorded). */
    const listFolder = async (provider: Provider, dir: string, rel: string, side: 'source' | 'target') => {
      const out: Folder = { files: new Map(), folders: new Map() };
      try {
        const listed: Listed[] =
          provider.features.bucketBased && provider.listRecursive
            ? ((await flatListing(provider, roots[side], side)).get(dir) ?? [])
            : (await listWhole(provider, dir, signal))
                .filter((e) => !e.link)
                .map((e) => (e.kind === 'dir' ? { path: e.path } : { path: e.path, file: walkedFileOf(e) }));
        for (const { path, file } of listed) {
          if (!isBelow(dir, path)) continue; // not below this folder
          const childRel = rel + (dir === '/' ? path : path.slice(dir.length));
          if (!file) {
            if (!matcher || matcher.dir(childRel)) out.folders.set(key(childRel), { rel: childRel, path });
          } else if (
            !matcher ||
            matcher.file(childRel, {
              size: file.size,
              modTime: file.modTime === null ? undefined : new Date(file.modTime),
            })
          ) {
            out.files.set(key(childRel), { rel: childRel, file });
            counts.listed++;
          }
        }
      } catch (err) {
        const e = toProviderError(err);
        if (signal?.aborted || isFatal(e)) {
          end(e);
          return null;
        }
        result.errors.push({ side, path: rel || '/', code: e.code, message: e.message });
        return null;
      }
      progress();
      return out;
    };

    // Listings at once: `checkers`. A folder keeps its place until each of its pairs has a place
    // to be compared in (so at most `checkers` listings wait in memory), then lets it go before
    // its subfolders are walked.
    const listings = new Semaphore(checkers);
    const visit = async (rel: string, sourceDir: string | null, targetDir: string | null): Promise<void> => {
      const below: [string, string | null, string | null][] = [];
      await listings.acquire();
      try {
        if (stopped()) return;
        const none: Folder = { files: new Map(), folders: new Map() };
        const [sf, tf] = await Promise.all([
          sourceDir === null ? none : listFolder(source, sourceDir, rel, 'source'),
          targetDir === null ? none : listFolder(target, targetDir, rel, 'target'),
        ]);
        // A side that could not be listed: what it holds is unknown, so nothing below is called missing.
        if (!sf || !tf) return;
        for (const [k, { rel: fileRel, file }] of sf.files) {
          const other = tf.files.get(k);
          if (other) await compare(file, other.file, fileRel);
          else result.differences.push({ path: fileRel, kind: 'missing_on_target', sourceSize: file.size });
          if (stopped()) return;
        }
        if (!req.oneWay) {
          for (const [k, { rel: fileRel, file }] of tf.files)
            if (!sf.files.has(k))
              result.differences.push({ path: fileRel, kind: 'missing_on_source', targetSize: file.size });
        }
        for (const [k, { rel: dirRel, path }] of sf.folders)
          below.push([dirRel, path, tf.folders.get(k)?.path ?? null]);
        if (!req.oneWay) {
          for (const [k, { rel: dirRel, path }] of tf.folders) if (!sf.folders.has(k)) below.push([dirRel, null, path]);
        }
      } catch (err) {
        end(err);
        return;
      } finally {
        listings.release();
      }
      await Promise.all(below.map(([r, a, b]) => visit(r, a, b)));
    };
    await visit('', s.folder, 'folder' in t ? t.folder : null);
  }
  while (comparing.size > 0) await Promise.all([...comparing]);
  if (ended) throw ended.err;
  const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
  result.differences.sort(byPath);
  result.same?.sort(byPath);
  return result;
}

/** Compares one pair and counts it in `result`; an error of one pair is recorded, a fatal one thrown. */
async function comparePairInto(
  result: CheckResult,
  source: Provider,
  sf: WalkedFile,
  target: Provider,
  tf: WalkedFile,
  rel: string,
  req: CheckRequest,
): Promise<void> {
  result.compared++;
  try {
    if (sf.size !== tf.size) {
      result.differences.push({ path: rel, kind: 'size', sourceSize: sf.size, targetSize: tf.size });
      return;
    }
    const outcome = await comparePair(source, sf, target, tf, req);
    if ('same' in outcome) {
      result.same?.push({ path: rel, by: outcome.same, size: sf.size });
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
    const e = toProviderError(err);
    if (req.signal?.aborted || isFatal(e)) throw req.signal?.aborted ? canceled() : err;
    result.errors.push({ path: rel, code: e.code, message: e.message });
  }
}
