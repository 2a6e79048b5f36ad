import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import { ProviderError, type Provider } from '@skyferry/providers';
import type { Side, TransferPlan, TransferResult } from '../types.ts';

/**
 * The rail every safety test checks after every run: no file that existed on either side before
 * is gone (its bytes found nowhere on either side after) unless a plan said so — deleted it, or
 * replaced it — and, where that plan needed a confirmation to delete, the user gave it for that run.
 */

/** Every file below a folder of a side: path below it -> SHA-256 of its bytes (read through the provider; links not followed). */
export async function snapshot(p: Provider, root: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (dir: string, rel: string): Promise<void> => {
    let token: string | undefined;
    do {
      let page;
      try {
        page = await p.list(dir, token ? { pageToken: token } : {});
      } catch (err) {
        if (ProviderError.is(err, 'not_found')) return;
        throw err;
      }
      for (const e of page.entries) {
        // A symbolic link is no file: what it leads to is counted where it is.
        if (e.link) continue;
        const r = `${rel}/${e.name}`;
        if (e.kind === 'dir') await walk(e.path, r);
        else {
          const h = createHash('sha256');
          for await (const c of await p.openRead(e.path)) h.update(c as Buffer);
          out.set(r, h.digest('hex'));
        }
      }
      token = page.nextPageToken;
    } while (token);
  };
  await walk(root, '');
  return out;
}

export interface Snapshots {
  source: Map<string, string>;
  target: Map<string, string>;
}

/** Both sides at once. */
export async function snapshotBoth(
  source: Provider,
  sourceRoot: string,
  target: Provider,
  targetRoot: string,
): Promise<Snapshots> {
  const [s, t] = await Promise.all([snapshot(source, sourceRoot), snapshot(target, targetRoot)]);
  return { source: s, target: t };
}

/** A run the rail judges: its plan (none when it stopped before planning) and whether the user confirmed deleting. */
export interface JudgedRun {
  plan: TransferPlan | undefined;
  confirmed: boolean;
}

/** Paths a run was allowed to take away on each side: what its plan deleted (confirmed where needed) or replaced. */
function allowed(runs: JudgedRun[]): Record<Side, Set<string>> {
  const out: Record<Side, Set<string>> = { source: new Set(), target: new Set() };
  for (const { plan, confirmed } of runs) {
    if (!plan) continue;
    for (const it of plan.items) {
      const replaces =
        it.action === 'update' || (it.action === 'conflict' && it.conflict?.resolution !== 'keep_both' && it.conflict);
      const deletes = it.action === 'delete' && it.kind === 'file' && (confirmed || !plan.deletes.needsConfirmation);
      if (replaces || deletes) out[it.side].add(it.side === 'target' ? (it.targetRel ?? it.rel) : it.rel);
    }
  }
  return out;
}

/** Fails naming each file that is gone without a plan that said so and the user's confirmation. */
export function expectNothingLost(before: Snapshots, after: Snapshots, runs: JudgedRun[]): void {
  const present = new Set([...after.source.values(), ...after.target.values()]);
  const ok = allowed(runs);
  const lost: string[] = [];
  for (const side of ['source', 'target'] as Side[]) {
    for (const [path, hash] of before[side]) {
      if (!present.has(hash) && !ok[side].has(path)) lost.push(`${side} ${path}`);
    }
  }
  expect(lost, 'files gone that no confirmed plan deleted or replaced').toEqual([]);
}

/**
 * Every file of a plan is accounted for once by the run: added, updated, deleted, skipped,
 * resolved as a conflict or failed (with its reason).
 */
export function expectAccounted(plan: TransferPlan, result: TransferResult): void {
  if (result.outcome === 'needs_delete_confirmation' || result.outcome === 'canceled') return;
  let planned = 0;
  for (const it of plan.items) if (it.kind === 'file' && it.action !== 'skip' && it.action !== 'mkdir') planned++;
  planned += plan.summary.skip.count;
  const s = result.summary;
  const failedFiles = result.failed.filter((f) => f.item.kind === 'file').length;
  // A delete the run left alone (changed since planned) counts as skipped, not as its planned action.
  expect(s.added + s.updated + s.deleted + s.conflicts + failedFiles + s.skipped, 'files accounted for').toBe(planned);
}
