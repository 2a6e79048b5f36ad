import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { FILTER_CATEGORIES, rulesFileLines, type FileFilter, type FilterCategory } from '@skyferry/contract';
import { compileFilter, FilterError } from '@skyferry/engine';
import { UsageError } from './errors.ts';
import { FILTER_OPTIONS } from './help.js';
import type { CliIo } from './io.ts';

// The filter flags of the transfer commands and check (help.js lists them): rclone's
// (https://rclone.org/filtering/) and the nine file types. The engine judges them
// (packages/engine/src/filter), as it does a server task's filter.

/**
 * The arguments with a filter flag's value that starts with "-" ("--filter '- *.bak'",
 * "--exclude-from -") joined to its flag, as parseArgs takes them only so.
 */
export function joinFilterValues(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const next = argv[i + 1];
    const name = arg.startsWith('--') ? arg.slice(2) : '';
    const option = FILTER_OPTIONS[name];
    if (option?.type === 'string' && next !== undefined && next.startsWith('-') && !next.startsWith('--')) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

/** The filter flags as parseArgs hands them over. */
interface FilterValues {
  include?: string[];
  exclude?: string[];
  filter?: string[];
  'include-from'?: string[];
  'exclude-from'?: string[];
  'filter-from'?: string[];
  'min-size'?: string;
  'max-size'?: string;
  'min-age'?: string;
  'max-age'?: string;
  'ignore-case'?: boolean;
  types?: string;
  'exclude-types'?: string;
}

/** Whether a value of --include/--exclude is a list of the nine file types (then it selects them, as --types does). */
function typeList(value: string): FilterCategory[] | null {
  const words = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (words.length === 0 || !words.every((w) => (FILTER_CATEGORIES as readonly string[]).includes(w))) return null;
  return [...new Set(words)] as FilterCategory[];
}

function parseTypes(text: string, flag: string): FilterCategory[] {
  const list = typeList(text);
  if (!list) {
    const bad = text
      .split(',')
      .map((s) => s.trim())
      .filter((w) => !(FILTER_CATEGORIES as readonly string[]).includes(w));
    throw new UsageError(
      `--${flag}: unknown file type ${bad.join(', ') || '(none)'}; use ${FILTER_CATEGORIES.join(', ')}`,
    );
  }
  return list;
}

/** The rules of `--*-from` files ("-" is standard input), in the order given. */
async function rulesFrom(files: string[] | undefined, flag: string, io: CliIo): Promise<string[]> {
  const out: string[] = [];
  for (const file of files ?? []) {
    let text: string;
    try {
      text = file === '-' ? await readAll(io.stdin) : await readFile(resolve(io.cwd, file), 'utf8');
    } catch (err) {
      throw new UsageError(`--${flag} ${file}: ${(err as Error).message}`);
    }
    out.push(...rulesFileLines(text));
  }
  return out;
}

async function readAll(stream: NodeJS.ReadableStream | undefined): Promise<string> {
  if (!stream) return '';
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

/** The filter of a command's flags, or null; a usage error names a rule or value the engine cannot use. */
export async function filterOf(values: FilterValues, io: CliIo): Promise<FileFilter | null> {
  const include: string[] = [];
  const exclude: string[] = [];
  let types: { mode: 'include' | 'exclude'; categories: FilterCategory[] } | null = null;
  const setTypes = (mode: 'include' | 'exclude', categories: FilterCategory[], flag: string) => {
    if (types && types.mode !== mode)
      throw new UsageError(`--${flag}: only these types and all but these types cannot be used together`);
    types = { mode, categories: [...new Set([...(types?.categories ?? []), ...categories])] };
  };
  if (values.types !== undefined) setTypes('include', parseTypes(values.types, 'types'), 'types');
  if (values['exclude-types'] !== undefined)
    setTypes('exclude', parseTypes(values['exclude-types'], 'exclude-types'), 'exclude-types');
  for (const v of values.include ?? []) {
    const list = typeList(v);
    if (list) setTypes('include', list, 'include');
    else include.push(v);
  }
  for (const v of values.exclude ?? []) {
    const list = typeList(v);
    if (list) setTypes('exclude', list, 'exclude');
    else exclude.push(v);
  }
  include.push(...(await rulesFrom(values['include-from'], 'include-from', io)));
  exclude.push(...(await rulesFrom(values['exclude-from'], 'exclude-from', io)));
  const rules = [...(values.filter ?? []), ...(await rulesFrom(values['filter-from'], 'filter-from', io))];
  const chosen = types as { mode: 'include' | 'exclude'; categories: FilterCategory[] } | null;
  const filter: FileFilter = { mode: chosen?.mode ?? 'include', categories: chosen?.categories ?? [] };
  if (include.length > 0) filter.include = include;
  if (exclude.length > 0) filter.exclude = exclude;
  if (rules.length > 0) filter.rules = rules;
  if (values['min-size'] !== undefined) filter.min_size = values['min-size'];
  if (values['max-size'] !== undefined) filter.max_size = values['max-size'];
  if (values['min-age'] !== undefined) filter.min_age = values['min-age'];
  if (values['max-age'] !== undefined) filter.max_age = values['max-age'];
  if (values['ignore-case']) filter.ignore_case = true;
  try {
    return compileFilter(filter) ? filter : null;
  } catch (err) {
    if (err instanceof FilterError) throw new UsageError(`filter: ${err.message}`);
    throw err;
  }
}
