import { z } from 'zod';
import { idSchema } from './common.ts';

/**
 * The run history of a server task (the Tasks page): every run a worker started, with its figures,
 * and the files it handled by outcome. Verifications (a comparison of source and target, as
 * `skyferry check` makes) are runs too, of kind `verify`. Times are ms since the epoch.
 */

/** What started a run: Run now (or the task's creation), its schedule, Retry, or a worker resuming an interrupted run. */
export const RUN_TRIGGERS = ['manual', 'schedule', 'retry', 'resume'] as const;
export type RunTrigger = (typeof RUN_TRIGGERS)[number];

export const RUN_KINDS = ['transfer', 'verify'] as const;
export type RunKind = (typeof RUN_KINDS)[number];

/**
 * How a run ended (null while it runs). Transfers: the task result's outcomes, or `interrupted`
 * (its worker stopped; another resumed it as a new run). Verifications: `same`, `differs`,
 * `failed`, `canceled`.
 */
export const RUN_OUTCOMES = [
  'success',
  'partial',
  'failed',
  'canceled',
  'insufficient_space',
  'traffic_exceeded',
  'needs_delete_confirmation',
  'interrupted',
  'same',
  'differs',
] as const;
export type RunOutcome = (typeof RUN_OUTCOMES)[number];

/** What happened to a file in a transfer run. */
export const TRANSFER_FILE_OUTCOMES = [
  'added',
  'updated',
  'deleted',
  'conflict',
  'skipped',
  'failed',
  'not_done',
] as const;
/** What a verification found about a file. */
export const VERIFY_FILE_OUTCOMES = [
  'missing_on_target',
  'missing_on_source',
  'size_differs',
  'content_differs',
  'unreadable',
] as const;
export const RUN_FILE_OUTCOMES = [...TRANSFER_FILE_OUTCOMES, ...VERIFY_FILE_OUTCOMES] as const;
export type TransferFileOutcome = (typeof TRANSFER_FILE_OUTCOMES)[number];
export type VerifyFileOutcome = (typeof VERIFY_FILE_OUTCOMES)[number];
export type RunFileOutcome = (typeof RUN_FILE_OUTCOMES)[number];

/** Files of one run by outcome: counts are whole; `listed` says how many of them the run kept rows of. */
export const runFileCountsSchema = z.partialRecord(z.enum(RUN_FILE_OUTCOMES), z.number().int());
export type RunFileCounts = Partial<Record<RunFileOutcome, number>>;

export const taskRunSchema = z.object({
  id: z.string(),
  task_id: z.string(),
  kind: z.enum(RUN_KINDS),
  trigger: z.enum(RUN_TRIGGERS),
  /** null while the run goes on. */
  outcome: z.enum(RUN_OUTCOMES).nullable(),
  started_at: z.number(),
  finished_at: z.number().nullable(),
  /** ms (so far, while running). */
  duration: z.number(),
  /** Files by outcome (whole counts, kept separately from the rows). */
  counts: runFileCountsSchema,
  /** Rows kept by outcome: fewer than `counts` once a run passes SKYFERRY_RUN_FILE_ROWS for an outcome. */
  listed: runFileCountsSchema,
  /** Transfers: files the run had to do (copies, updates, deletes, conflicts) and those done. */
  total_count: z.number().int(),
  success_count: z.number().int(),
  /** Bytes the run moved, and bytes it had to move. */
  bytes: z.number(),
  size: z.number(),
  /** Average bytes per second over the run. */
  speed: z.number(),
  /** Verifications: pairs compared, and how they were found the same. */
  compared: z.number().int(),
  same_by_hash: z.number().int(),
  same_by_content: z.number().int(),
  size_only: z.number().int(),
  /** Why the run stopped, when it did not end normally. */
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  /** The task's latest transfer run (only it may retry its failed files). */
  is_latest: z.boolean(),
});
export type TaskRun = z.infer<typeof taskRunSchema>;

/** Runs a page of the history holds by default (the Tasks page's page). */
export const RUNS_PAGE_SIZE = 20;
export const MAX_RUNS_PAGE_SIZE = 200;

/** GET /api/tasks/{id}/runs: newest first. */
export const listRunsQuerySchema = z.object({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  page_size: z.coerce.number().int().min(1).max(MAX_RUNS_PAGE_SIZE).default(RUNS_PAGE_SIZE),
  kind: z.enum(RUN_KINDS).optional(),
});
export type ListRunsQuery = z.infer<typeof listRunsQuerySchema>;
export const listRunsDataSchema = z.object({ items: z.array(taskRunSchema), total: z.number().int() });
export type ListRunsData = z.infer<typeof listRunsDataSchema>;

export const runParamsSchema = z.object({ id: idSchema, run_id: idSchema });

/** One file of a run. Paths are absolute in their cloud. */
export const runFileSchema = z.object({
  outcome: z.enum(RUN_FILE_OUTCOMES),
  /** 'file' or 'dir'. */
  kind: z.enum(['file', 'dir']),
  /** The cloud the path is in: the side changed (transfers), or where a verification found it. */
  side: z.enum(['source', 'target']),
  path: z.string(),
  /**
   * Conflicts kept both ways: the other version's new name (its path). Verifications: the file's
   * path on the target.
   */
  other_path: z.string().nullable(),
  size: z.number().nullable(),
  /** Skipped, failed, not done, conflicts: why (an engine reason or a provider error code). */
  reason: z.string().nullable(),
  /** Failed files: the service's words. */
  message: z.string().nullable(),
});
export type RunFile = z.infer<typeof runFileSchema>;

export const RUN_FILES_PAGE_SIZE = 100;
export const MAX_RUN_FILES_PAGE_SIZE = 1000;

/**
 * GET /api/tasks/{id}/runs/{run_id}/files: pages in run order, `cursor` being the `next_cursor`
 * of the page before. `q` keeps files whose path contains it (case-insensitive for ASCII).
 */
export const runFilesQuerySchema = z.object({
  outcome: z.enum(RUN_FILE_OUTCOMES).optional(),
  q: z.string().max(200).optional(),
  cursor: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  limit: z.coerce.number().int().min(1).max(MAX_RUN_FILES_PAGE_SIZE).default(RUN_FILES_PAGE_SIZE),
});
export type RunFilesQuery = z.infer<typeof runFilesQuerySchema>;
export const runFilesDataSchema = z.object({
  items: z.array(runFileSchema),
  /** Pass as `cursor` for the next page; null after the last. */
  next_cursor: z.number().int().nullable(),
  /** Rows matching (without `q`: known from the run's figures); null when a search would have to count them all. */
  total: z.number().int().nullable(),
});
export type RunFilesData = z.infer<typeof runFilesDataSchema>;

/** GET /api/tasks/{id}/runs/{run_id}/log: `text` (one line a file) or `jsonl` (JSON lines). */
export const RUN_LOG_FORMATS = ['text', 'jsonl'] as const;
export type RunLogFormat = (typeof RUN_LOG_FORMATS)[number];
export const runLogQuerySchema = z.object({ format: z.enum(RUN_LOG_FORMATS).default('text') });
