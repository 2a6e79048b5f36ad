import { toProviderError } from '@skyferry/providers';
import { executePlan, writeKey, executeStreamed, type ExecuteOptions } from './executor.ts';
import { PlanFeed } from './feed.ts';
import { planStreamed, planTransfer, streamable, type PlanRequest } from './planner.ts';
import { emptyResultSummary, type PlanItem, type TransferPlan, type TransferResult } from './types.ts';

export type RunRequest = PlanRequest &
  ExecuteOptions & {
    /**
     * Once the pairs of roots are known, before anything is written: a throw stops the run before
     * it starts (the CLI refuses a target inside its source there).
     */
    beforeWrites?: (plan: TransferPlan) => Promise<void>;
  };

/** The result of a run whose plan could not be made (source missing, auth expired, canceled). */
function notPlanned(req: RunRequest, startedAt: number, err: unknown): TransferResult {
  const e = toProviderError(err);
  const finishedAt = Date.now();
  const canceled = e.code === 'canceled' || req.signal?.aborted === true;
  return {
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
  };
}

/**
 * Plans and executes in one go (what a task worker does). Planning failures that stop the run
 * (source missing, auth expired, canceled) come back as a `failed` or `canceled` result, not a throw.
 */
export async function runTransfer(req: RunRequest): Promise<RunOutcome> {
  const startedAt = Date.now();
  let plan: TransferPlan;
  try {
    plan = await planTransfer(req);
  } catch (err) {
    return { plan: undefined, result: notPlanned(req, startedAt, err), planError: err };
  }
  await req.beforeWrites?.(plan);
  const result = await executePlan(plan, req);
  return { plan, result: { ...result, startedAt, timeTakenMs: result.finishedAt - startedAt } };
}

export interface StreamRunRequest extends RunRequest {
  /**
   * Items planned and not yet done at most (about: a folder is judged whole). Default 8192. The
   * walk waits for room before listing another folder.
   */
  window?: number;
  /**
   * Each file the plan skips, once judged (a streamed plan keeps none; a whole plan keeps its
   * skips in `plan.items` unless `keepSkipped` is false, and then they are lost).
   */
  onSkipped?: (item: PlanItem) => void;
}

/** What a run did; `planError` is why it could not plan, when it could not. */
export interface RunOutcome {
  plan: TransferPlan | undefined;
  result: TransferResult;
  planError?: unknown;
}

/**
 * Plans and executes at once, folder by folder (`planStreamed`, `executeStreamed`): a file is
 * copied soon after its folder is listed, and memory follows the window of items planned and not
 * done, not the size of the tree. Totals grow while the walk goes (`TransferProgress.counting`).
 * A kill leaves checkpoints as `runTransfer` does, and a run started again skips what they hold.
 * What the whole tree must be known for first takes `runTransfer` instead, which this falls back
 * to: mirror and two-way syncs (deletions judged against whole listings, the share of a side
 * deleted), one-way syncs that keep a record. Not streamed either: the space check before the run
 * (a full disk stops it when a write fails) and `TrafficHook.beforeRun`.
 */
export async function streamTransfer(req: StreamRunRequest): Promise<RunOutcome> {
  if (!streamable(req)) return runTransfer(req);
  const startedAt = Date.now();
  const feed = new PlanFeed(req.window);
  // The walk stops with the run (a cancel, a fatal error, the traffic allowance).
  const planStop = new AbortController();
  const follow = () => planStop.abort();
  req.signal?.addEventListener('abort', follow, { once: true });
  if (req.signal?.aborted) planStop.abort();
  let execution: Promise<TransferResult> | undefined;
  let live: TransferPlan | undefined;
  // Files an earlier attempt announced and may have written unrecorded: the run counts those its
  // plan now skips as written (Execution.resumedUnrecorded), not as skipped.
  const intended = await req.checkpoints?.intents?.().catch(() => undefined);
  const skipped = (it: PlanItem) => {
    if (intended && live && intended(writeKey(live, it))) feed.push(it);
    else req.onSkipped?.(it);
  };
  const planning = planStreamed(
    { ...req, signal: planStop.signal },
    {
      item: (it) => feed.push(it),
      ...(req.onSkipped || intended ? { skipped, skipReads: intended !== undefined } : {}),
      gate: () => feed.room(),
      roots: (plan) => {
        live = plan;
        execution = (async () => {
          await req.beforeWrites?.(plan);
          return executeStreamed(plan, feed, req, intended);
        })();
        // Once the run ends (or never starts) the walk is let through and stopped.
        execution
          .finally(() => {
            feed.abandon();
            planStop.abort();
          })
          .catch(() => undefined);
      },
    },
  );
  try {
    const final = await planning;
    if (live) Object.assign(live, final);
    feed.end();
  } catch (err) {
    feed.fail(err);
  } finally {
    req.signal?.removeEventListener('abort', follow);
  }
  if (!execution || !live) {
    const err = feed.error?.err;
    return { plan: undefined, result: notPlanned(req, startedAt, err), planError: err };
  }
  const result = await execution;
  return { plan: live, result: { ...result, startedAt, timeTakenMs: result.finishedAt - startedAt } };
}
