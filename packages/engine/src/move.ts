/**
 * The second half of a move (`skyferry move`, a server task with `move`): after the copy, each source file is deleted only when the
 * target is checked to hold the same file right then, by a hash both sides give (or by reading
 * it, with --download), or, where the two share no hash, by size when this run copied it and
 * checked it as it went. Anything else stays where it was, and is named. Before that, a marker
 * file written on the target side must not appear on the source side: two remotes (other
 * credentials, another protocol) can reach the same storage, and a move between a place and itself
 * would find every file the same and delete the only copy.
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FileFilter } from '@skyferry/contract';
import { joinPath, mapLimit, parentPath, toProviderError, type Provider } from '@skyferry/providers';
import { checkTrees } from './check.ts';
import { findEmptyFolders, removeEmptyFolder, walkTree } from './cleanup/index.ts';
import type { ItemEvent } from './executor.ts';
import type { CheckpointInfo } from './stores.ts';
import type { PlanPair, TransferPlan } from './types.ts';
import { joinRel } from './util.ts';

/**
 * Source files this run copied (from the executor's item events: written and checked now, or by an
 * earlier attempt of it, resumed), with their size; `earlier` adds the files an interrupted attempt
 * wrote that this run's plan found already there (its checkpoints, read before the run).
 */
export function copiedFiles(
  plan: TransferPlan,
  earlier: CheckpointInfo[] = [],
): { onItem: (e: ItemEvent) => void; copied: Map<string, number> } {
  const copied = new Map<string, number>();
  for (const info of earlier) {
    if ((info.action === 'copy' || info.action === 'update') && info.read) copied.set(info.read.path, info.read.size);
  }
  return {
    copied,
    onItem: (e) => {
      if (e.type === 'failed' || e.item.kind !== 'file') return;
      if (e.item.action !== 'copy' && e.item.action !== 'update') return;
      const pair = plan.pairs[e.item.pair];
      if (pair) copied.set(joinRel(pair.source, e.item.rel), e.item.size);
    },
  };
}

export interface MoveRequest {
  source: Provider;
  target: Provider;
  plan: TransferPlan;
  /** Source files copied and checked by this move (see copiedFiles), with their size then. */
  copied: Map<string, number>;
  filter: FileFilter | null;
  download: boolean;
  /** Then remove the source folders the move left empty (the moved folders themselves too). */
  removeEmptyFolders: boolean;
  signal?: AbortSignal;
}

export interface Moved {
  /** Source files deleted. */
  deleted: number;
  /** Source files left in place, each with why. */
  kept: string[];
  /** Source files whose deletion failed, with the reason. */
  failed: string[];
  /** Source folders removed because the move left them empty (with `removeEmptyFolders`). */
  foldersRemoved: number;
}

/**
 * Whether the pair's source and target are one place of the same storage: a marker file written
 * beside the target (in the target folder, or a target file's folder) is looked for at the same
 * place beside the source, then removed.
 */
async function samePlace(
  source: Provider,
  target: Provider,
  pair: PlanPair,
  signal?: AbortSignal,
): Promise<{ same: boolean; folder: boolean }> {
  const opts = signal ? { signal } : {};
  const folder = (await source.stat(pair.source, opts)).kind === 'dir';
  const name = `.skyferry-move-${randomUUID()}`;
  const marker = joinPath(folder ? pair.target : parentPath(pair.target), name);
  const body = Readable.from([Buffer.from('skyferry move check\n')]);
  body.on('error', () => undefined); // a cancel fails the put (see Provider.put)
  await target.put(marker, body, { size: 20 }, opts);
  try {
    await source.stat(joinPath(folder ? pair.source : parentPath(pair.source), name), opts);
    return { same: true, folder };
  } catch (err) {
    if (toProviderError(err).code === 'not_found') return { same: false, folder };
    throw err;
  } finally {
    await target.remove(marker).catch(() => undefined);
  }
}

/** Deletes the moved source files (see the file's comment); answers what was deleted and what was kept. */
export async function deleteMoved(req: MoveRequest): Promise<Moved> {
  const doomed: string[] = [];
  const kept: string[] = [];
  const movedFolders: string[] = [];
  const selected = new Set(req.plan.options.sourcePaths);
  const pairSources = new Set(req.plan.pairs.map((p) => p.source));
  for (const pair of req.plan.pairs) {
    const place = await samePlace(req.source, req.target, pair, req.signal);
    if (place.same) {
      kept.push(
        `${pair.source}: the target is this same place (a file written there appears here); nothing of it deleted`,
      );
      continue;
    }
    // A pair is a selected folder, or the folder of selected files (checked one by one: the other
    // files of that folder are no part of the move, and the folder stays).
    const files = selected.has(pair.source)
      ? undefined
      : req.plan.options.sourcePaths.filter((p) => !pairSources.has(p) && parentPath(p) === pair.source);
    if (place.folder && !files) movedFolders.push(pair.source);
    const checks = await mapLimit(files ?? [pair.source], 8, (sourcePath) =>
      checkTrees({
        source: req.source,
        sourcePath,
        target: req.target,
        targetPath: pair.target,
        oneWay: true,
        download: req.download,
        filter: req.filter,
        listSame: true,
        ...(req.signal ? { signal: req.signal } : {}),
      }),
    );
    for (const check of checks) {
      for (const same of check.same ?? []) {
        const path = joinRel(pair.source, same.path);
        if (same.by !== 'size' || req.copied.get(path) === same.size) doomed.push(path);
        else
          kept.push(
            `${path}: a file of the same size is on the target, but could not be compared (--download reads it)`,
          );
      }
      for (const d of check.differences) {
        kept.push(
          `${joinRel(pair.source, d.path)}: ${d.kind === 'missing_on_target' ? 'not on the target' : `the target's file differs (${d.kind})`}`,
        );
      }
      for (const e of check.errors)
        kept.push(`${joinRel(pair.source, e.path)}: could not be ${e.side ? 'listed' : 'compared'} (${e.code})`);
    }
  }
  const failed: string[] = [];
  let deleted = 0;
  // Folders that held a file this move deleted: only those count as emptied by it.
  const held = new Set<string>();
  await mapLimit(doomed, 8, async (path) => {
    try {
      await req.source.remove(path);
      deleted++;
      for (let d = parentPath(path); !held.has(d); d = parentPath(d)) {
        held.add(d);
        if (d === '/') break;
      }
    } catch (err) {
      const e = toProviderError(err);
      if (e.code === 'canceled') throw e;
      failed.push(`${path}: ${e.code}: ${e.message}`);
    }
  });
  let foldersRemoved = 0;
  if (req.removeEmptyFolders) {
    for (const root of movedFolders) {
      foldersRemoved += await removeEmptied(req.source, root, held, failed, req.signal);
    }
  }
  return { deleted, kept, failed, foldersRemoved };
}

/**
 * Removes what of a moved folder the move emptied: the folder itself when nothing is left in it,
 * else its top-most empty folders, each only if it held a file the move deleted (`held`; a folder
 * empty before, left out by a type filter, stays). Each is listed again right before it goes; one
 * holding a file by then stays.
 */
async function removeEmptied(
  source: Provider,
  root: string,
  held: Set<string>,
  failed: string[],
  signal?: AbortSignal,
): Promise<number> {
  const opts = signal ? { signal } : {};
  let walk: Awaited<ReturnType<typeof walkTree>>;
  try {
    walk = await walkTree(source, root, { ...opts, concurrency: 4 });
  } catch (err) {
    // On a bucket-based service a folder goes with its last object: nothing is left to remove.
    if (toProviderError(err).code === 'not_found') return 0;
    throw err;
  }
  const emptied = (
    walk.files.length === 0 && walk.unlisted.size === 0
      ? [root]
      : findEmptyFolders(root, walk).folders.map((f) => f.path)
  ).filter((f) => held.has(f));
  let removed = 0;
  for (const folder of emptied) {
    const outcome = await removeEmptyFolder(source, folder, { ...opts, useTrash: false });
    if (outcome.ok) removed++;
    else if (outcome.reason !== 'not_empty')
      failed.push(`${folder}: ${outcome.code ?? outcome.reason}: ${outcome.message}`);
  }
  return removed;
}
