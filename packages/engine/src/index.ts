export * from './types.ts';
export * from './stores.ts';
export {
  planTransfer,
  planStreamed,
  streamable,
  planRetry,
  conflictName,
  conflictLabel,
  type PlanRequest,
  type RetryRequest,
  type PlanStream,
} from './planner.ts';
export {
  executePlan,
  executeStreamed,
  checkpointKey,
  type ExecuteOptions,
  type TrafficHook,
  type ItemEvent,
} from './executor.ts';
export { copyFile, type CopyContext, type CopyFileResult, type Verification } from './copy-file.ts';
export { runTransfer, streamTransfer, type RunOutcome, type RunRequest, type StreamRunRequest } from './run.ts';
export { PlanFeed } from './feed.ts';
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
export {
  compileFilter,
  passesPath,
  rulesFileLines,
  parseSize,
  parseAge,
  FilterError,
  type FileMatcher,
  type FilterFile,
} from './filter/index.ts';
export { copiedFiles, deleteMoved, type MoveRequest, type Moved } from './move.ts';
