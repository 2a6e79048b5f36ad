import { FILTER_CATEGORY_TYPES, categoryOf, filterHasCriteria, type FileFilter } from '@skyferry/contract';
import { FilterError } from './glob.ts';
import { RuleSet } from './rules.ts';
import { parseAge, parseSize } from './units.ts';

export { FilterError, globToRegExp } from './glob.ts';
export { RuleSet, type RuleSource } from './rules.ts';
export { rulesFileLines } from '@skyferry/contract';
export { parseAge, parseSize } from './units.ts';

/** What the filter needs to know of a file. */
export interface FilterFile {
  size: number;
  modTime?: Date;
}

/**
 * A filter ready to judge entries by their path relative to the transfer's root ("dir/a.jpg", no
 * leading slash). The one implementation behind server tasks, the web app's dry run and the CLI.
 */
export interface FileMatcher {
  /** Whether a file passes: its categories, rules, size and age. */
  file(path: string, f: FilterFile): boolean;
  /** Whether a folder is walked (folder rules; the root always is). */
  dir(path: string): boolean;
  /** The filter as given. */
  readonly filter: FileFilter;
}

/** A path relative to a root as rules see it: "/a/b" and "a/b" are "a/b". */
function relative(path: string): string {
  return path.startsWith('/') ? path.slice(1) : path;
}

/**
 * Compiles a filter; null when it filters nothing. Ages count back from `now` (a run's start).
 * Throws FilterError naming the rule or value that is not valid.
 */
export function compileFilter(filter: FileFilter | null | undefined, now = Date.now()): FileMatcher | null {
  if (!filter || !filterHasCriteria(filter)) return null;
  const categories = filter.categories ?? [];
  const include = filter.mode !== 'exclude';
  const rules = RuleSet.of({
    include: filter.include,
    exclude: filter.exclude,
    rules: filter.rules,
    ignoreCase: filter.ignore_case,
  });
  const minSize = filter.min_size !== undefined ? parseSize(filter.min_size, `min_size ${filter.min_size}`) : undefined;
  const maxSize = filter.max_size !== undefined ? parseSize(filter.max_size, `max_size ${filter.max_size}`) : undefined;
  // --max-age 2d: only files modified at or after now-2d; --min-age 2d: only at or before it.
  const newest = filter.min_age !== undefined ? parseAge(filter.min_age, now, `min_age ${filter.min_age}`) : undefined;
  const oldest = filter.max_age !== undefined ? parseAge(filter.max_age, now, `max_age ${filter.max_age}`) : undefined;
  if (newest !== undefined && oldest !== undefined && oldest >= newest)
    throw new FilterError(`min_age ${filter.min_age}`, 'min_age must be less than max_age');
  const rulesEmpty = rules.empty;
  return {
    filter,
    file(path, f) {
      const rel = relative(path);
      if (categories.length > 0) {
        const type = categoryOf(rel);
        const inAny = categories.some((c) => FILTER_CATEGORY_TYPES[c].includes(type));
        if (inAny !== include) return false;
      }
      if (minSize !== undefined && f.size < minSize) return false;
      if (maxSize !== undefined && f.size > maxSize) return false;
      if (f.modTime && (newest !== undefined || oldest !== undefined)) {
        const t = f.modTime.getTime();
        if (newest !== undefined && t > newest) return false;
        if (oldest !== undefined && t < oldest) return false;
      }
      return rulesEmpty || rules.file(rel);
    },
    dir(path) {
      const rel = relative(path);
      return rel === '' || rulesEmpty || rules.dir(rel);
    },
  };
}

/** Whether a file deep in a tree passes: every folder above it is walked, and the file passes. */
export function passesPath(m: FileMatcher, path: string, f: FilterFile): boolean {
  const rel = relative(path);
  for (let i = rel.indexOf('/'); i >= 0; i = rel.indexOf('/', i + 1)) if (!m.dir(rel.slice(0, i))) return false;
  return m.file(rel, f);
}
