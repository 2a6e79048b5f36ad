import { toProviderError } from '@skyferry/providers';
import { executePlan, type ExecuteOptions } from './executor.ts';
import { planTransfer, type PlanRequest } from './planner.ts';
import { emptyResultSummary, type TransferPlan, type TransferResult } from './types.ts';

export type RunRequest = PlanRequest & ExecuteOptions;

/**
 * Plans and executes in one go (what a task worker does). Planning failures that stop the run
 * (source missing, auth expired, canceled) come back as a `failed` or `canceled` result, not a throw.
 */
export async function runTransfer(
  req: RunRequest,
): Promise<{ plan: TransferPlan | undefined; result: TransferResult }> {
  const startedAt = Date.now();
  let plan: TransferPlan;
  try {
    plan = await planTransfer(req);
  } catch (err) {
    const e = toProviderError(err);
    const finishedAt = Date.now();
    const canceled = e.code === 'canceled' || req.signal?.aborted === true;
    return {
      plan: undefined,
      result: {
        outcome: canceled ? 'canceled' : 'failed',
        successCount: 0,
        totalCount: 0,
        totalSize: 0,
        transferredBytes: 0,
        timeTakenMs: finishedAt - startedAt,
        startedAt,
        finishedAt,
        source: { kind: req.source.kind, paths: req.sourcePaths },
        target: { kind: req.target.kind, path: req.targetPath },
        failed: [],
        summary: emptyResultSummary(),
        error: { code: e.code, message: e.message },
      },
    };
  }
  const result = await executePlan(plan, req);
  return { plan, result: { ...result, startedAt, timeTakenMs: result.finishedAt - startedAt } };
}
