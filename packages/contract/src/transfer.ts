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
/** Most patterns one list of a filter holds. */
export const MAX_FILTER_RULES = 500;
const filterPatternSchema = z
  .string()
  .min(1)
  .max(2048)
  .refine((s) => !/[\r\n]/.test(s), 'one pattern a line');
/** A size: bytes, or rclone's syntax ("50k", "1.5G"; KiB without a suffix). */
const filterSizeSchema = z.union([z.number().int().min(0), z.string().trim().min(1).max(32)]);
/** An age: rclone's duration ("7d", "2h30m"; seconds without a suffix) or a date ("2024-01-31"). */
const filterAgeSchema = z.string().trim().min(1).max(64);

/**
 * Which files a transfer takes: the nine categories (`mode` include: only these, exclude: all but
 * these) and rclone's filter language (https://rclone.org/filtering/): `include`/`exclude` patterns
 * (--include, --exclude; any include ends the rules with "- **"), `rules` ("+ pattern", "- pattern"
 * or "!", as --filter), file sizes and ages. A file passes when every part lets it through; the
 * engine (packages/engine/src/filter) is the one place that judges them.
 */
export const fileFilterSchema = z
  .object({
    mode: z.enum(FILTER_MODES).default('include'),
    categories: z.array(filterCategorySchema).max(FILTER_CATEGORIES.length).default([]),
    include: z.array(filterPatternSchema).max(MAX_FILTER_RULES).optional(),
    exclude: z.array(filterPatternSchema).max(MAX_FILTER_RULES).optional(),
    rules: z.array(filterPatternSchema).max(MAX_FILTER_RULES).optional(),
    /** Files smaller than this are left out (--min-size). */
    min_size: filterSizeSchema.optional(),
    /** Files larger than this are left out (--max-size). */
    max_size: filterSizeSchema.optional(),
    /** Files modified more recently than this are left out (--min-age). */
    min_age: filterAgeSchema.optional(),
    /** Files modified longer ago than this are left out (--max-age). */
    max_age: filterAgeSchema.optional(),
    /** Patterns match whatever the case of letters (--ignore-case). */
    ignore_case: z.boolean().optional(),
  })
  .refine((f) => filterHasCriteria(f), 'a filter needs categories, patterns, a size or an age');
export type FileFilter = z.infer<typeof fileFilterSchema>;

/**
 * The rules of a rules text (an `--include-from`/`--exclude-from`/`--filter-from` file, the web
 * app's rules box): one a line, blank lines and lines starting with # or ; skipped, spaces round
 * each line dropped.
 */
export function rulesFileLines(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    out.push(line);
  }
  return out;
}

/** Whether a filter says anything (categories, patterns, a size or an age). */
export function filterHasCriteria(f: {
  categories?: readonly unknown[];
  include?: readonly unknown[];
  exclude?: readonly unknown[];
  rules?: readonly unknown[];
  min_size?: unknown;
  max_size?: unknown;
  min_age?: unknown;
  max_age?: unknown;
}): boolean {
  return (
    (f.categories?.length ?? 0) > 0 ||
    (f.include?.length ?? 0) > 0 ||
    (f.exclude?.length ?? 0) > 0 ||
    (f.rules?.length ?? 0) > 0 ||
    f.min_size !== undefined ||
    f.max_size !== undefined ||
    f.min_age !== undefined ||
    f.max_age !== undefined
  );
}

/** How a two-way sync resolves a file changed on both sides. */
export const CONFLICT_RESOLUTIONS = ['keep_both', 'newer', 'larger', 'source'] as const;
export type ConflictResolution = (typeof CONFLICT_RESOLUTIONS)[number];
