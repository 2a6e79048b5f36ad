import { z } from 'zod';
import { PAGE_SIZES } from '../constants.ts';
import { scheduleSchema } from '../schedule.ts';
import { CONFLICT_RESOLUTIONS, fileFilterSchema, sameNamePolicySchema, syncModeSchema } from '../transfer.ts';
import { cloudPathSchema, displayNameSchema, idSchema } from './common.ts';

/**
 * Server tasks: migrations (task_type 0) and syncs (task_type 1) that run on the server's workers
 * ("offline transfer"). Times are milliseconds since the epoch; durations are milliseconds.
 * `id` and `task_id` are the same value: calls under /api/tasks name a task by `id`, the
 * cloud-manager calls by `task_id`.
 */

/** Most paths one task may select. */
export const MAX_TASK_PATHS = 1000;
export const MAX_TASK_NAME_LENGTH = 255;

/** The source: a connected cloud (Skyferry's id of the connection, `Cloud.id`) and the selected paths. */
export const taskFromCloudBodySchema = z.object({
  cloud_id: idSchema,
  paths: z.array(cloudPathSchema).max(MAX_TASK_PATHS),
});
export const taskToCloudBodySchema = z.object({
  cloud_id: idSchema,
  path: cloudPathSchema,
});

/**
 * What a transfer from Google Drive does with Google Docs, Sheets, Slides and Drawings, which have
 * no file of their own: `export` them as Office (or PDF) files, or `skip` them (counted as skipped).
 */
export const GOOGLE_DOCS_MODES = ['export', 'skip'] as const;
export const googleDocsModeSchema = z.enum(GOOGLE_DOCS_MODES);
export type GoogleDocsMode = (typeof GOOGLE_DOCS_MODES)[number];
/** Cloud kinds holding Google Docs (a task from one offers the google_docs choice). */
export const GOOGLE_DOCS_KINDS: readonly string[] = ['google_drive', 'google_drive_shared'];
export function hasGoogleDocs(kind: string): boolean {
  return GOOGLE_DOCS_KINDS.includes(kind);
}

/** What a plan item does. */
export const PLAN_ACTIONS = ['copy', 'update', 'delete', 'skip', 'conflict', 'mkdir'] as const;
export type PlanAction = (typeof PLAN_ACTIONS)[number];
/** Most plan items one dry run answers. */
export const MAX_PLAN_ITEMS = 1000;

/**
 * Dry runs only: which page of the plan's items to answer (default the first 1000 of every
 * action). The preview browses a plan by action and page with it; the totals are always whole.
 */
export const planQuerySchema = z
  .object({
    actions: z.array(z.enum(PLAN_ACTIONS)).max(PLAN_ACTIONS.length).optional(),
    /** Default 0. */
    offset: z.number().int().min(0).optional(),
    /** Default (and at most) 1000. */
    limit: z.number().int().min(1).max(MAX_PLAN_ITEMS).optional(),
  })
  .strict();
export type PlanQuery = z.infer<typeof planQuerySchema>;

/**
 * POST /api/tasks. A migration copies each source path into `to_cloud.path` under its own name
 * (`/` copies the root's contents); a sync pairs the contents of one source folder with the target
 * folder. Without `schedule` the task starts at once (state 8, then 1, 2 and its outcome); with one
 * it waits in state 7 for its next run time, read in the caller's time zone (X-Timezone header, or
 * `time_zone`). `dry_run` answers the plan and creates nothing.
 *
 * Prompts the client can confirm by sending the request again with the flag set:
 * 409003 (same cloud drive; `confirm_same_cloud`), 409004 (not enough space on a side, data
 * `InsufficientSpaceData`; `confirm_insufficient_space`), 409005 (a sync would delete more than
 * half of the files of a side, data `DeletionsPromptData`; `confirm_deletions`).
 */
export const createTaskBodySchema = z
  .object({
    task_type: z.number().int().min(0).max(1),
    task_name: displayNameSchema(MAX_TASK_NAME_LENGTH, 1).optional(),
    from_cloud: taskFromCloudBodySchema,
    to_cloud: taskToCloudBodySchema,
    /** Syncs only; default one_way. */
    sync_mode: syncModeSchema.optional(),
    /** Migrations, one-way and incremental syncs; default DEFAULT_SAME_NAME_POLICY (size_differs_or_newer). */
    same_name_policy: sameNamePolicySchema.optional(),
    filter: fileFilterSchema.nullable().optional(),
    /** Two-way syncs: who wins a file changed on both sides; default keep_both. */
    conflict_resolution: z.enum(CONFLICT_RESOLUTIONS).optional(),
    /** Sources of a Google Drive kind: export Google Docs (default) or skip them; ignored for others. */
    google_docs: googleDocsModeSchema.optional(),
    /**
     * Follow symbolic links (local folders, SFTP, FTP) inside each side's folder, never round a
     * loop. Default false: each link is left alone and reported (`TaskResult.set_aside`).
     */
    follow_links: z.boolean().optional(),
    /**
     * Migrations only: a move. Once the copy ran to its end, each source file is deleted when the
     * target is checked to hold the same (by a hash both sides give, else by the size this run
     * wrote and checked); anything else stays, named in `TaskResult.moved`. The folders it emptied
     * go too. The root of a cloud cannot be moved.
     */
    move: z.boolean().optional(),
    schedule: scheduleSchema.nullable().optional(),
    /** IANA time zone of the schedule; default the X-Timezone header, else UTC. */
    time_zone: z.string().min(1).max(64).optional(),
    dry_run: z.boolean().optional(),
    plan_query: planQuerySchema.optional(),
    confirm_same_cloud: z.boolean().optional(),
    confirm_insufficient_space: z.boolean().optional(),
    confirm_deletions: z.boolean().optional(),
  })
  .strict();
export type CreateTaskBody = z.infer<typeof createTaskBodySchema>;

/** A cloud as a task names it (source, target, and the destination cloud list). */
export const taskCloudSchema = z.object({
  cloud_id: z.string(),
  /** The kind identifier; '' when the cloud has been removed since. */
  cloud_name: z.string(),
  cloud_alias_name: z.string(),
  cloud_account: z.string(),
});
export type TaskCloud = z.infer<typeof taskCloudSchema>;

export const taskProgressSchema = z.object({
  /** 0-100. */
  percentage: z.number(),
  /** Bytes per second. */
  speed: z.number(),
  /** Bytes moved so far. */
  transferred: z.number(),
  /** Bytes to move in total. */
  length: z.number(),
  /** Seconds left; null when unknown. */
  eta: z.number().nullable(),
  /**
   * True while the run still counts what to do as it goes (a copy plans folder by folder): length
   * and the total count grow, the percentage holds until they are whole.
   */
  counting: z.boolean().optional(),
});
export type TaskProgress = z.infer<typeof taskProgressSchema>;

/** Why a symbolic link was left alone: not followed, leads nowhere, round a loop, out of the folder, or a delete would go through it. */
export const LINK_ISSUES = ['not_followed', 'dangling', 'loop', 'outside', 'through_link'] as const;
/** Most items a task's result lists in `set_aside` (the count in `skipped` is whole). */
export const MAX_SET_ASIDE_ITEMS = 1000;
/** An item a run left alone for a reason of its own (a symbolic link), with that reason. */
export const setAsideItemSchema = z.object({
  side: z.enum(['source', 'target']),
  path: z.string(),
  reason: z.literal('symbolic_link'),
  detail: z.enum(LINK_ISSUES),
});
export type SetAsideItem = z.infer<typeof setAsideItemSchema>;

/** What the last run did (null before the first run ends). */
export const taskResultSchema = z.object({
  outcome: z.enum([
    'success',
    'partial',
    'failed',
    'canceled',
    'insufficient_space',
    'traffic_exceeded',
    'needs_delete_confirmation',
  ]),
  success_count: z.number().int(),
  total_count: z.number().int(),
  total_size: z.number(),
  /** ms */
  time_taken: z.number(),
  added: z.number().int(),
  updated: z.number().int(),
  deleted: z.number().int(),
  skipped: z.number().int(),
  /** Files that failed (a stopped run's files it did not get to are `not_done`, not failed). */
  failed: z.number().int(),
  /**
   * Files changed on both sides of a two-way sync (resolved by the task's conflict rule), and names
   * the run could not act on (a file and a folder of one name, names differing only in case, a
   * name that is not valid UTF-8), which are listed in the result list with that reason. The
   * server always sends it.
   */
  conflicts: z.number().int().optional(),
  /** Files a stopped run (canceled, out of space or traffic, a fatal error) did not get to; always sent. */
  not_done: z.number().int().optional(),
  /** Why the run stopped, when it did not end normally. */
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  /** Symbolic links the run left alone (the first MAX_SET_ASIDE_ITEMS), each with why; absent when none. */
  set_aside: z.array(setAsideItemSchema).max(MAX_SET_ASIDE_ITEMS).optional(),
  /** A move: source files deleted, and those kept (the first MAX_SET_ASIDE_ITEMS named, with why). */
  moved: z
    .object({
      deleted: z.number().int(),
      kept: z.number().int(),
      failed: z.number().int(),
      folders_removed: z.number().int(),
      kept_items: z.array(z.string()).max(MAX_SET_ASIDE_ITEMS),
    })
    .optional(),
});
export type TaskResult = z.infer<typeof taskResultSchema>;

/** The spec's server task. */
export const serverTaskSchema = z.object({
  id: z.string(),
  task_id: z.string(),
  task_name: z.string(),
  /** 0 migrate, 1 sync. */
  task_type: z.number().int(),
  from_cloud: taskCloudSchema.extend({ paths: z.array(z.string()) }),
  to_cloud: taskCloudSchema.extend({ path: z.string() }),
  sync_mode: syncModeSchema.nullable(),
  same_name_policy: sameNamePolicySchema,
  filter: fileFilterSchema.nullable(),
  conflict_resolution: z.enum(CONFLICT_RESOLUTIONS),
  /** What runs do with Google Docs when the source is a Google Drive kind. */
  google_docs: googleDocsModeSchema,
  /** Runs follow symbolic links (else each is left alone and reported). */
  follow_links: z.boolean(),
  /** A move (the sources are deleted once checked on the target); absent or false for a copy. */
  move: z.boolean().optional(),
  schedule: scheduleSchema.nullable(),
  time_zone: z.string(),
  /** States 0-10 of spec section 4 (TaskState). */
  state: z.number().int().min(0).max(10),
  /** 1 off, 2 on. */
  is_schedule: z.number().int().min(1).max(2),
  next_run_time: z.number().nullable(),
  /** ms the last run took (so far, while running). */
  duration: z.number(),
  /** Bytes the last run has to move. */
  size: z.number(),
  /** Bytes the last run moved (counted against the traffic allowance when billing is on). */
  usage: z.number(),
  /** States 6 and 10: bytes still needed to go on; null otherwise. */
  needed_size: z.number().nullable(),
  total_counts: z.number().int(),
  finished_counts: z.number().int(),
  progress: taskProgressSchema,
  /** The destination cloud list. */
  destination_clouds: z.array(taskCloudSchema),
  result: taskResultSchema.nullable(),
  created_at: z.number(),
  started_at: z.number().nullable(),
  finished_at: z.number().nullable(),
});
export type ServerTask = z.infer<typeof serverTaskSchema>;

/** A file the last run could not handle (spec: sourceFile {name, parent}, source.token_id). */
export const failedFileSchema = z.object({
  sourceFile: z.object({ name: z.string(), parent: z.string() }),
  source: z.object({ token_id: z.string() }),
  reason: z.string(),
  message: z.string(),
});
export type FailedFile = z.infer<typeof failedFileSchema>;

/** GET /api/tasks/{id}: the task with its failed files (the result list). */
export const taskDetailSchema = serverTaskSchema.extend({
  result_list: z.array(failedFileSchema),
  /** Failed files in all (result_list holds the first 1000). */
  result_total: z.number().int(),
});
export type TaskDetail = z.infer<typeof taskDetailSchema>;

/** One line of a dry run's plan. */
export const planItemSchema = z.object({
  action: z.enum(PLAN_ACTIONS),
  /** 'file' or 'folder'. */
  kind: z.string(),
  /** Which cloud changes: source (two-way syncs only) or target. */
  side: z.enum(['source', 'target']),
  source_path: z.string(),
  target_path: z.string(),
  reason: z.string(),
  size: z.number(),
  /** Symbolic links (reason `symbolic_link`): why it is left alone. */
  link: z.enum(LINK_ISSUES).optional(),
});
export type PlanItemView = z.infer<typeof planItemSchema>;

const totals = z.object({ count: z.number().int(), bytes: z.number() });

/** POST /api/tasks with dry_run: what a run would do, computed now. */
export const taskPlanSchema = z.object({
  summary: z.object({
    copy: totals,
    update: totals,
    delete: totals,
    skip: totals,
    conflict: totals,
    mkdir: totals,
  }),
  bytes_to_target: z.number(),
  bytes_to_source: z.number(),
  files_to_transfer: z.number().int(),
  /** Files below the source the filter lets through (all of them without a filter). */
  files_matched: z.number().int().optional(),
  deletes: z.object({ count: z.number().int(), files: z.number().int(), needs_confirmation: z.boolean() }),
  /** The items `plan_query` asked for (default the first 1000), in plan order. */
  items: z.array(planItemSchema),
  /** Items matching `plan_query.actions` (all items without it). */
  total_items: z.number().int(),
  /** Folders that could not be listed. */
  errors: z.array(z.object({ side: z.enum(['source', 'target']), path: z.string(), message: z.string() })),
  /**
   * Whether each side keeps the modification times a run gives the files it writes there (a
   * WebDAV server without X-OC-Mtime or PROPPATCH, say, does not: they show the transfer's time).
   */
  times_kept: z.object({ source: z.boolean(), target: z.boolean() }),
});
export type TaskPlan = z.infer<typeof taskPlanSchema>;

export const createTaskDataSchema = z.object({
  /** The created task; null for a dry run. */
  task: serverTaskSchema.nullable(),
  /** The plan of a dry run; null otherwise. */
  plan: taskPlanSchema.nullable(),
});
export type CreateTaskData = z.infer<typeof createTaskDataSchema>;

/** data of the 409004 prompt: which cloud lacks how much space. */
export const insufficientSpaceDataSchema = z.object({
  side: z.enum(['source', 'target']),
  cloud_id: z.string(),
  cloud_name: z.string(),
  needed: z.number(),
  available: z.number(),
});
export type InsufficientSpaceData = z.infer<typeof insufficientSpaceDataSchema>;

/** data of the 409005 prompt: the side that would lose more than half of its files, and how many of how many. */
export const deletionsPromptDataSchema = z.object({
  count: z.number().int(),
  total: z.number().int(),
  side: z.enum(['source', 'target']),
});
export type DeletionsPromptData = z.infer<typeof deletionsPromptDataSchema>;

/**
 * POST /api/tasks/list: `completed` 0 lists states 1, 2, 7, 8, 9; 1 lists 0, 3, 4, 5, 6, 10. The
 * Tasks page lists every task instead (no `completed`), or those in `states`.
 */
export const listTasksBodySchema = z.object({
  page: z.number().int().min(1).default(1),
  page_size: z.number().int().min(1).max(PAGE_SIZES.tasks).default(PAGE_SIZES.tasks),
  completed: z.union([z.literal(0), z.literal(1)]).optional(),
  /** Only tasks in these states (with `completed`, those of its list that are). */
  states: z.array(z.number().int().min(0).max(10)).min(1).max(11).optional(),
});
export type ListTasksBody = z.infer<typeof listTasksBodySchema>;
export const listTasksDataSchema = z.object({
  items: z.array(serverTaskSchema),
  total: z.number().int(),
});
export type ListTasksData = z.infer<typeof listTasksDataSchema>;

/**
 * PUT /api/tasks/{id}: switch the schedule off (1) or on (2), and (the Tasks page's Edit) change
 * the name, the schedule and what runs do. Every field is optional; the answer is the task.
 * Changing what runs do (sync_mode, same_name_policy, filter, conflict_resolution) is refused while
 * a run is queued or going (409006). When the task's next run would then delete files (a mirror
 * or two-way sync), it answers 409005 with `{count, total}` until sent again with
 * `confirm_deletions` (preview the plan first with POST /api/tasks/{id}/plan).
 */
export const updateTaskBodySchema = z
  .object({
    is_schedule: z.union([z.literal(1), z.literal(2)]).optional(),
    task_name: z.string().trim().min(1).max(MAX_TASK_NAME_LENGTH).optional(),
    /** A new schedule (switched on), or null to have none (the task then waits for Run now). */
    schedule: scheduleSchema.nullable().optional(),
    /** IANA zone the schedule is read in; default the task's, else the X-Timezone header. */
    time_zone: z.string().min(1).max(64).optional(),
    /** Syncs only. */
    sync_mode: syncModeSchema.optional(),
    same_name_policy: sameNamePolicySchema.optional(),
    filter: fileFilterSchema.nullable().optional(),
    conflict_resolution: z.enum(CONFLICT_RESOLUTIONS).optional(),
    confirm_deletions: z.boolean().optional(),
  })
  .strict();
export type UpdateTaskBody = z.infer<typeof updateTaskBodySchema>;

/**
 * POST /api/tasks/{id}/plan: what the task's next run would do with these changes (a dry run of
 * the edited task, with its two-way state), paged by `plan_query` as a create's dry run is.
 */
export const taskPlanBodySchema = updateTaskBodySchema
  .omit({ confirm_deletions: true, is_schedule: true })
  .extend({ plan_query: planQuerySchema.optional() })
  .strict();
export type TaskPlanBody = z.infer<typeof taskPlanBodySchema>;
export const taskPlanDataSchema = z.object({ plan: taskPlanSchema });
export type TaskPlanData = z.infer<typeof taskPlanDataSchema>;

export const taskIdParamSchema = z.object({ id: idSchema });
/**
 * GET /api/tasks/run/{id}. `resync=1` (two-way syncs only): this run merges both folders as they
 * are, as a first run does (nothing is deleted; files deleted on one side since the last run come
 * back), and its result becomes the base of the next runs. Given for one run, like a confirmation
 * to delete: the way past a run stopped because a side was missing or listed no files where the
 * last run left some (`result.error.code` side_missing or side_emptied).
 */
export const runTaskQuerySchema = z.object({ resync: z.enum(['0', '1']).optional() }).strict();
export type RunTaskQuery = z.infer<typeof runTaskQuerySchema>;
export const progressParamSchema = z.object({ task_id: idSchema });
export const cancelTransferQuerySchema = z.object({ task_id: idSchema });

/** GET /api/cloud-manager/poll-progress/{task_id}. Code 404 (unknown task) stops the client's polling. */
export const pollProgressDataSchema = z.object({
  /** The task state (0-10). */
  status: z.number().int(),
  progress: taskProgressSchema,
  total_counts: z.number().int(),
  finished_counts: z.number().int(),
});
export type PollProgressData = z.infer<typeof pollProgressDataSchema>;
