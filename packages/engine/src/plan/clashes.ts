import type { Entry } from '@skyferry/providers';
import type { PlanItem, Side } from '../types.ts';
import { childRel, fingerprintOf } from '../util.ts';
import type { Place, Unreadable } from './walk.ts';

/**
 * Names the run cannot act on, planned as conflicts without a resolution: the dry run shows them,
 * the run reports each as failed with its reason and ends partial. Nothing is done to them.
 */

const other = (s: Side): Side => (s === 'source' ? 'target' : 'source');

/** A file on one side where the other has a folder of the same name. */
export function kindClash(pair: number, place: Place, s: Entry, t: Entry): PlanItem {
  return {
    ...place,
    action: 'conflict',
    kind: s.kind,
    pair,
    side: 'target',
    reason: 'kind_mismatch',
    size: s.kind === 'file' ? s.size : t.size,
    source: fingerprintOf(s),
    target: fingerprintOf(t),
  };
}

/** Names of one folder that differ only in case, where a side would take them for one. */
export function caseClash(pair: number, folder: Place, s: Entry[], t: Entry[]): PlanItem[] {
  const out: PlanItem[] = [];
  for (const [side, group] of [
    ['source', s],
    ['target', t],
  ] as const) {
    for (const e of group) {
      const rel = childRel(folder.rel, e.name);
      const item: PlanItem = {
        action: 'conflict',
        kind: e.kind,
        pair,
        rel,
        side: other(side),
        reason: 'case_clash',
        size: e.size,
      };
      if (side === 'target' && folder.targetRel !== undefined) item.targetRel = childRel(folder.targetRel, e.name);
      item[side] = fingerprintOf(e);
      out.push(item);
    }
  }
  return out;
}

/** A name a side holds but could not show (not valid UTF-8). */
export function unreadableName(pair: number, folder: Place, u: Unreadable): PlanItem {
  const item: PlanItem = {
    action: 'conflict',
    kind: 'file',
    pair,
    rel: childRel(folder.rel, u.name),
    side: other(u.side),
    reason: 'invalid_name',
    size: 0,
  };
  if (u.side === 'target' && folder.targetRel !== undefined) item.targetRel = childRel(folder.targetRel, u.name);
  return item;
}
