import { TaskState, type TaskStateValue } from '@skyferry/contract';
import type { PlanAction, PlanItem, Side, TransferOutcome, TransferPlan } from './types.ts';
import { relOn } from './util.ts';

export interface PlanPageQuery {
  /** Items to skip. Default 0. */
  offset?: number;
  /** Items to return. Default 100. */
  limit?: number;
  /** Only these actions. */
  actions?: PlanAction[];
  /** Only items changing this side. */
  side?: Side;
  /** Only files (true) or folders (false). */
  files?: boolean;
}

/** One page of a plan's items (dry-run preview), with the number of items matching the query. */
export function planPage(plan: TransferPlan, q: PlanPageQuery = {}): { items: PlanItem[]; total: number } {
  const offset = Math.max(0, q.offset ?? 0);
  const limit = Math.max(0, q.limit ?? 100);
  const actions = q.actions && q.actions.length > 0 ? new Set(q.actions) : undefined;
  const matches = (it: PlanItem) =>
    (!actions || actions.has(it.action)) &&
    (q.side === undefined || it.side === q.side) &&
    (q.files === undefined || (it.kind === 'file') === q.files);
  if (!actions && q.side === undefined && q.files === undefined) {
    return { items: plan.items.slice(offset, offset + limit), total: plan.items.length };
  }
  const items: PlanItem[] = [];
  let total = 0;
  for (const it of plan.items) {
    if (!matches(it)) continue;
    if (total >= offset && items.length < limit) items.push(it);
    total++;
  }
  return { items, total };
}

/** The spec's server task state for a run's outcome. */
export function taskStateOf(outcome: TransferOutcome): TaskStateValue {
  switch (outcome) {
    case 'success':
      return TaskState.completed;
    case 'partial':
      return TaskState.partial;
    case 'canceled':
      return TaskState.canceled;
    case 'insufficient_space':
      return TaskState.insufficientStorage;
    case 'traffic_exceeded':
      return TaskState.notEnoughTraffic;
    case 'failed':
    case 'needs_delete_confirmation':
      return TaskState.failed;
  }
}

/** Absolute paths of an item on both sides. */
export function itemPaths(plan: TransferPlan, item: PlanItem): { source: string; target: string } {
  const pair = plan.pairs[item.pair];
  const join = (root: string, rel: string) => (rel === '/' ? root : root === '/' ? rel : root + rel);
  return {
    source: join(pair?.source ?? '/', item.rel),
    target: join(pair?.target ?? '/', relOn(item, 'target')),
  };
}
