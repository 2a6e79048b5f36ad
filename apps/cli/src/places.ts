/**
 * Where a path of a provider really is, to refuse runs whose target is inside their source (or,
 * for syncs, the other way round) as the server refuses such tasks: a move onto the source itself
 * would find every file "the same" and delete the only copy.
 */
import { realpath } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { cleanPath, isWithin, type Provider } from '@skyferry/providers';
import type { TransferMode, TransferPlan } from '@skyferry/engine';
import { UsageError } from './errors.ts';

const LOCAL = 'local:';

/** The real path of `path`, following links through the part of it that exists. */
async function realOf(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? path : join(await realOf(parent), path.slice(parent.length + 1));
  }
}

/** A local provider's path as a real path of this machine; any other as its account and path. */
async function placeOf(p: Provider, path: string): Promise<{ account: string; path: string }> {
  if (p.accountKey.startsWith(LOCAL))
    return { account: LOCAL, path: await realOf(join(p.accountKey.slice(LOCAL.length), path)) };
  const clean = cleanPath(path);
  return { account: p.accountKey, path: p.features.caseInsensitive ? clean.toLowerCase() : clean };
}

/** Throws a usage error when a pair's target lies in its source, or (syncs) its source in its target. */
export async function refuseOverlap(
  plan: TransferPlan,
  mode: TransferMode,
  source: Provider,
  target: Provider,
): Promise<void> {
  for (const pair of plan.pairs) {
    const [s, t] = await Promise.all([placeOf(source, pair.source), placeOf(target, pair.target)]);
    if (s.account !== t.account) continue;
    if (isWithin(s.path, t.path)) {
      throw new UsageError(
        s.path === t.path
          ? `the target ${t.path} is the source ${s.path} itself`
          : `the target ${t.path} is inside the source ${s.path}`,
      );
    }
    if (mode !== 'migrate' && isWithin(t.path, s.path)) {
      throw new UsageError(`the source ${s.path} is inside the target ${t.path}`);
    }
  }
}
