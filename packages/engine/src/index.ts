export * from './types.ts';
export * from './stores.ts';
export { planTransfer, planRetry, conflictName, type PlanRequest, type RetryRequest } from './planner.ts';
export { executePlan, checkpointKey, type ExecuteOptions, type TrafficHook, type ItemEvent } from './executor.ts';
export { copyFile, type CopyContext, type CopyFileResult, type Verification } from './copy-file.ts';
export { runTransfer, type RunRequest } from './run.ts';
export { planPage, taskStateOf, itemPaths, type PlanPageQuery } from './tools.ts';
export { MODTIME_WINDOW_MS, joinRel, relOn } from './util.ts';
export * from './cleanup/index.ts';
export {
  checkTrees,
  type CheckRequest,
  type CheckResult,
  type CheckDifference,
  type CheckDifferenceKind,
  type CheckError,
  type CheckProgress,
} from './check.ts';
export { copiedFiles, deleteMoved, type MoveRequest, type Moved } from './move.ts';
