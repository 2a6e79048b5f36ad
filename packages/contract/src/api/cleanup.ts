import { z } from 'zod';
import { CLEANUP_CATEGORIES } from '../categories.ts';
import { CLEANUP_IMODE_DEFAULT, LARGE_FILE_THRESHOLD_DEFAULT, PAGE_SIZES } from '../constants.ts';
import { cloudPathSchema, idSchema } from './common.ts';

/**
 * Clean-up ("Free up storage", spec sections 2, 3, 4, 6 and 7). A scan of one connected cloud
 * folder runs on the server's workers as a task: `imode` is a bit set (1 empty folders, 2
 * duplicate files, 4 large files; default 7, all three). Each user keeps the latest scan of each
 * cloud; starting a new one (a rescan) cancels a running one and clears the old results.
 *
 * Results are paged (page_size 20 by default), filtered by category (All, Videos, Audios,
 * Documents, Others, pictures; empty folders are Others) and sorted by size or date, ascending or descending. Deleting moves
 * items to the cloud's trash where it has one (`has_trash`), otherwise deletes them for good; a
 * file changed since the scan, or a folder no longer empty, is left alone and reported in `failed`.
 * The last remaining copy of a duplicate group is removed only when every remaining copy is
 * selected by id and `delete_all_copies` is true (else 400 "Select every copy explicitly...").
 *
 * With billing on (test or a payment provider), a user without a licence sees only the first
 * page of each result list (the 20 largest; `limited` true, `total` still the full count), may
 * delete only those, and may not delete all (403001). Times are ms since the epoch.
 */

export const CLEANUP_IMODE = { emptyFolders: 1, duplicates: 2, largeFiles: 4 } as const;
/** Most results of one page. */
export const MAX_CLEANUP_PAGE_SIZE = 100;
/** Most items one delete call names, and the most one "delete all" call removes (it reports `remaining`). */
export const MAX_CLEANUP_DELETE = 500;

export const cleanupCategorySchema = z.enum(CLEANUP_CATEGORIES);
export const cleanupKindSchema = z.enum(['empty_folders', 'duplicate_files', 'large_files']);
export type CleanupKind = z.infer<typeof cleanupKindSchema>;

/** POST /api/cleanup/run. `large_threshold` in bytes (default 100 MB). Answers `{ task_id }`. */
export const runCleanupBodySchema = z
  .object({
    cloud_id: idSchema,
    path: cloudPathSchema.default('/'),
    imode: z.number().int().min(1).max(7).default(CLEANUP_IMODE_DEFAULT),
    large_threshold: z
      .number()
      .int()
      .min(1)
      .max(2 ** 50)
      .default(LARGE_FILE_THRESHOLD_DEFAULT),
  })
  .strict();
export type RunCleanupBody = z.input<typeof runCleanupBodySchema>;
export const runCleanupDataSchema = z.object({ task_id: z.string() });
export type RunCleanupData = z.infer<typeof runCleanupDataSchema>;

const categoryCounts = {
  image: z.number().int(),
  video: z.number().int(),
  audio: z.number().int(),
  document: z.number().int(),
  other: z.number().int(),
};

/** Duplicate results: files in groups, groups, bytes freed by keeping one copy of each, files by type. */
export const duplicateSummarySchema = z.object({
  count: z.number().int(),
  group_count: z.number().int(),
  size: z.number(),
  ...categoryCounts,
});
/** Large-file results: files, their bytes, files by type. */
export const largeSummarySchema = z.object({ count: z.number().int(), size: z.number(), ...categoryCounts });
/** Empty-folder results: every empty folder, nested ones included. */
export const emptySummarySchema = z.object({ count: z.number().int() });
export type DuplicateSummary = z.infer<typeof duplicateSummarySchema>;
export type LargeSummary = z.infer<typeof largeSummarySchema>;

export const cleanupPhaseSchema = z.enum(['waiting', 'listing', 'hashing', 'finishing']);
export type CleanupPhaseName = z.infer<typeof cleanupPhaseSchema>;

/** The clean-up task (spec section 3) with its live progress and result counts. */
export const cleanupTaskSchema = z.object({
  task_id: z.string(),
  /** Skyferry's id of the connected cloud (`Cloud.id`). */
  cloud_id: z.string(),
  path: z.string(),
  /** Files listed so far (the whole scan once finished). */
  total_count: z.number().int(),
  /** ms the scan has taken (so far, while scanning). */
  runtime: z.number(),
  imode: z.number().int(),
  large_threshold: z.number(),
  /** Results this user may still delete; -1 without a limit (premium, or billing off). */
  free_del_num: z.number().int(),
  /** CleanupStatus: 0 completed, 1 scanning, 3 failed, 4 canceled (the client shows -1 while starting). */
  status: z.number().int(),
  /** The folder being listed or the file being read. */
  filename: z.string(),
  /** While scanning: what it is doing; null once finished. */
  phase: cleanupPhaseSchema.nullable(),
  /** 0-100 while reading files to compare them; null while listing (the total is not known yet). */
  percentage: z.number().nullable(),
  folder_count: z.number().int(),
  /** Bytes of the files listed, and bytes read to tell duplicates apart. */
  total_size: z.number(),
  bytes_read: z.number(),
  duplicate: duplicateSummarySchema,
  large: largeSummarySchema,
  empty: emptySummarySchema,
  /** Whether deleting moves results to the cloud's trash (false: they are deleted for good). */
  has_trash: z.boolean(),
  /** The caller sees only the first results (billing on, no licence). */
  limited: z.boolean(),
  /** Folders or files the scan could not read (skipped). */
  error_count: z.number().int(),
  /** Why a failed scan stopped: not_found, auth_expired, permission, unavailable, internal... */
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  created_at: z.number(),
  finished_at: z.number().nullable(),
});
export type CleanupTask = z.infer<typeof cleanupTaskSchema>;

/** GET /api/cleanup/task: the caller's latest scan (of one cloud when `cloud_id` is given), or null. */
export const cleanupTaskQuerySchema = z.object({ cloud_id: idSchema.optional() });
export const cleanupTaskDataSchema = cleanupTaskSchema.nullable();
export const cleanupTaskParamSchema = z.object({ task_id: idSchema });

/** Query of the three result lists. */
export const cleanupListQuerySchema = z.object({
  task_id: idSchema,
  page: z.coerce.number().int().min(1).default(1),
  page_size: z.coerce.number().int().min(1).max(MAX_CLEANUP_PAGE_SIZE).default(PAGE_SIZES.cleanup),
  /** Files only (duplicates and large files). */
  category: cleanupCategorySchema.default('all'),
  /** size (empty folders: how many they hold), date (modified), or name (path). */
  sort_by: z.enum(['size', 'date', 'name']).default('size'),
  order: z.enum(['asc', 'desc']).default('desc'),
});
export type CleanupListQuery = z.input<typeof cleanupListQuerySchema>;

/** One result: a file or an empty folder, with path, size, modified date and category. */
export const cleanupItemSchema = z.object({
  id: z.string(),
  path: z.string(),
  name: z.string(),
  size: z.number(),
  /** ms; null when the service does not say. */
  modified: z.number().nullable(),
  category: z.enum(['video', 'audio', 'document', 'picture', 'other']),
});
export type CleanupItem = z.infer<typeof cleanupItemSchema>;
export const emptyFolderItemSchema = cleanupItemSchema.extend({
  /** Empty folders inside it (removed with it). */
  nested_count: z.number().int(),
});
export type EmptyFolderItem = z.infer<typeof emptyFolderItemSchema>;

/** A group of files with the same content; `files` in path order. */
export const duplicateGroupSchema = z.object({
  group_id: z.string(),
  /** `<hash type>:<hex>`. */
  hash: z.string(),
  /** Bytes of each copy. */
  size: z.number(),
  /** The category of the group (of its first file). */
  category: cleanupItemSchema.shape.category,
  files: z.array(cleanupItemSchema),
});
export type DuplicateGroupItem = z.infer<typeof duplicateGroupSchema>;

const pageMeta = {
  /** Every result of the list (with the category filter), also when `limited`. */
  total: z.number().int(),
  page: z.number().int(),
  page_size: z.number().int(),
  /** True when the caller sees only the first results; `visible_total` says how many. */
  limited: z.boolean(),
  visible_total: z.number().int(),
};
export const emptyFoldersPageSchema = z.object({ items: z.array(emptyFolderItemSchema), ...pageMeta });
/**
 * Duplicate files page by group: `total` counts groups. `surplus_count` and `surplus_size` are the
 * copies beyond one per group in the whole result (every page, with the category filter), and
 * their bytes: what deleting all (or the smart filter) removes.
 */
export const duplicateFilesPageSchema = z.object({
  items: z.array(duplicateGroupSchema),
  ...pageMeta,
  surplus_count: z.number().int(),
  surplus_size: z.number(),
});
export const largeFilesPageSchema = z.object({ items: z.array(cleanupItemSchema), ...pageMeta });
export type EmptyFoldersPage = z.infer<typeof emptyFoldersPageSchema>;
export type DuplicateFilesPage = z.infer<typeof duplicateFilesPageSchema>;
export type LargeFilesPage = z.infer<typeof largeFilesPageSchema>;

/**
 * DELETE on the three result paths: the selected items (`ids`), or with `all` every remaining
 * result of the list (in `category` when given), at most MAX_CLEANUP_DELETE per call (call again
 * while `remaining` > 0). For duplicates, `all` keeps one copy of each group: the newest (default)
 * or the oldest (`keep`).
 */
export const deleteCleanupBodySchema = z
  .object({
    task_id: idSchema,
    ids: z.array(idSchema).max(MAX_CLEANUP_DELETE).default([]),
    all: z.boolean().optional(),
    category: cleanupCategorySchema.optional(),
    keep: z.enum(['newest', 'oldest']).optional(),
    delete_all_copies: z.boolean().optional(),
  })
  .strict();
export type DeleteCleanupBody = z.input<typeof deleteCleanupBodySchema>;

export const deleteCleanupDataSchema = z.object({
  /** Results removed now (or found already gone). */
  deleted: z.number().int(),
  /** Bytes that left the cloud for good now (not those moved to its trash, nor those found already gone). */
  freed: z.number(),
  /** Whether they went to the cloud's trash. */
  trashed: z.boolean(),
  /** Bytes moved to the cloud's trash now: restorable, and still in the cloud until the trash is emptied. */
  in_trash: z.number(),
  /** Results left alone: changed since the scan, no longer empty, or the service refused. */
  failed: z.array(
    z.object({
      id: z.string(),
      path: z.string(),
      /** not_found: the id is no result of this list (unknown, another list's, or deleted already); its path is ''. */
      reason: z.enum(['changed', 'not_empty', 'last_copy', 'not_found', 'error']),
      message: z.string(),
    }),
  ),
  /** With `all`: results still to delete (call again). */
  remaining: z.number().int(),
  /** The task with its counts after the deletion. */
  task: cleanupTaskSchema,
});
export type DeleteCleanupData = z.infer<typeof deleteCleanupDataSchema>;
