/**
 * The second half of `skyferry move`: after the copy, each source file is deleted only when the
 * target is checked to hold the same file right then, by a hash both sides give (or by reading
 * it, with --download), or, where the two share no hash, by size when this run copied it and
 * checked it as it went. Anything else stays where it was, and is named.
 */
import { checkTrees, type ItemEvent, type TransferPlan } from '@skyferry/engine';
import { mapLimit, toProviderError, type Provider } from '@skyferry/providers';
import type { FileFilter } from '@skyferry/contract';
import type { CliIo } from './io.ts';

/** Source paths of files this run copied (or an earlier run of it, resumed), from the executor's item events. */
export function copiedFiles(plan: TransferPlan): { onItem: (e: ItemEvent) => void; copied: Set<string> } {
  const copied = new Set<string>();
  return {
    copied,
    onItem: (e) => {
      if (e.type === 'failed' || e.item.kind !== 'file') return;
      if (e.item.action !== 'copy' && e.item.action !== 'update') return;
      const pair = plan.pairs[e.item.pair];
      if (pair) copied.add(e.item.rel === '/' ? pair.source : `${pair.source === '/' ? '' : pair.source}${e.item.rel}`);
    },
  };
}

export interface MoveRequest {
  source: Provider;
  target: Provider;
  plan: TransferPlan;
  copied: Set<string>;
  filter: FileFilter | null;
  download: boolean;
  signal?: AbortSignal;
}

export interface Moved {
  /** Source files deleted. */
  deleted: number;
  /** Source files left in place, each with why. */
  kept: string[];
  /** Source files whose deletion failed, with the reason. */
  failed: string[];
}

/** Deletes the moved source files (see the file's comment); answers what was deleted and what was kept. */
export async function deleteMoved(req: MoveRequest): Promise<Moved> {
  const doomed: string[] = [];
  const kept: string[] = [];
  for (const pair of req.plan.pairs) {
    const check = await checkTrees({
      source: req.source,
      sourcePath: pair.source,
      target: req.target,
      targetPath: pair.target,
      oneWay: true,
      download: req.download,
      filter: req.filter,
      listSame: true,
      ...(req.signal ? { signal: req.signal } : {}),
    });
    const full = (rel: string) => (rel === '/' ? pair.source : `${pair.source === '/' ? '' : pair.source}${rel}`);
    for (const same of check.same ?? []) {
      const path = full(same.path);
      if (same.by !== 'size' || req.copied.has(path)) doomed.push(path);
      else
        kept.push(`${path}: a file of the same size is on the target, but could not be compared (--download reads it)`);
    }
    for (const d of check.differences) {
      kept.push(
        `${full(d.path)}: ${d.kind === 'missing_on_target' ? 'not on the target' : `the target's file differs (${d.kind})`}`,
      );
    }
    for (const e of check.errors)
      kept.push(`${full(e.path)}: could not be ${e.side ? 'listed' : 'compared'} (${e.code})`);
  }
  const failed: string[] = [];
  let deleted = 0;
  await mapLimit(doomed, 8, async (path) => {
    try {
      await req.source.remove(path);
      deleted++;
    } catch (err) {
      const e = toProviderError(err);
      if (e.code === 'canceled') throw e;
      failed.push(`${path}: ${e.code}: ${e.message}`);
    }
  });
  return { deleted, kept, failed };
}

export function printMoved(moved: Moved, io: CliIo): void {
  const { deleted, kept, failed } = moved;
  io.stdout.write(
    `Moved: ${deleted} source file${deleted === 1 ? '' : 's'} deleted, each once the target was checked to hold the same` +
      `${kept.length ? `; ${kept.length} kept` : ''}. Folders are left in place.\n`,
  );
  for (const k of kept) io.stderr.write(`kept: ${k}\n`);
  for (const f of failed) io.stderr.write(`not deleted: ${f}\n`);
}
