import { z } from 'zod';

/** Task types: 0 migrate, otherwise sync. */
export const TaskType = { migrate: 0, sync: 1 } as const;

export const SYNC_MODES = ['two_way', 'one_way', 'mirror', 'incremental'] as const;
export type SyncMode = (typeof SYNC_MODES)[number];
export const syncModeSchema = z.enum(SYNC_MODES);

/** Same-name policies: transfer anyway; skip; only if size differs; only if size differs or the source is newer. */
export const SAME_NAME_POLICIES = ['overwrite', 'skip', 'size_differs', 'size_differs_or_newer'] as const;
export type SameNamePolicy = (typeof SAME_NAME_POLICIES)[number];
export const sameNamePolicySchema = z.enum(SAME_NAME_POLICIES);
/**
 * The one default same-name policy: what a task created without one uses (the API), what the web
 * app's settings start from and what the engine plans with when none is given.
 */
export const DEFAULT_SAME_NAME_POLICY: SameNamePolicy = 'size_differs_or_newer';

/** The nine filter categories. */
export const FILTER_CATEGORIES = [
  'text',
  'ppt',
  'excel',
  'pdf',
  'audio',
  'picture',
  'video',
  'archive',
  'installer',
] as const;
export type FilterCategory = (typeof FILTER_CATEGORIES)[number];
export const filterCategorySchema = z.enum(FILTER_CATEGORIES);

export const FILTER_MODES = ['include', 'exclude'] as const;
export type FilterMode = (typeof FILTER_MODES)[number];
export const fileFilterSchema = z.object({
  mode: z.enum(FILTER_MODES),
  categories: z.array(filterCategorySchema).min(1).max(FILTER_CATEGORIES.length),
});
export type FileFilter = z.infer<typeof fileFilterSchema>;

/** How a two-way sync resolves a file changed on both sides. */
export const CONFLICT_RESOLUTIONS = ['keep_both', 'newer', 'larger', 'source'] as const;
export type ConflictResolution = (typeof CONFLICT_RESOLUTIONS)[number];
