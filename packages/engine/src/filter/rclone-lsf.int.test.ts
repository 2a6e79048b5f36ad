import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FileFilter } from '@skyferry/contract';
import { openLocal } from '@skyferry/providers';
import { run, seededRandom as random } from '@skyferry/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planTransfer } from '../planner.ts';
import { FilterError } from './index.ts';
import { MemoryProvider } from '../testing/memory-provider.ts';
import { writeFileAt } from '../testing/backends.ts';

// The engine's filter against rclone itself: generated trees, generated rules, and what
// `rclone lsf -R --files-only` lists with the same flags must be what a one-way sync of the tree
// plans to copy. Not generated: "[!...]" (rclone's documentation calls it a negated class, rclone
// 1.60 matches "!" literally; the engine follows the documentation) and a pattern ending in "\".

const NOW = Date.now();
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;

const DIRS = ['a', 'b', 'dir', 'sub', 'd1', 'd2', 'A', 'Trash', 'x y', 'été', '.cache'];
const FILES = [
  'x.txt',
  'y.jpg',
  'Photo.JPG',
  'pic.jpeg',
  'secret1.jpg',
  'file.t1t',
  'file.txt',
  'a.bak',
  '[JP] clip.mkv',
  'notes.md',
  'v.7',
  'é.txt',
  'x y.txt',
  '.hidden',
  'README',
  'b.png',
  'ab-c',
];
const SIZES = [0, 100, 1023, 1024, 1025, 5000, 50_000];
const AGES = [HOUR, 3 * DAY, 40 * DAY, 400 * DAY];

const PATTERNS = [
  '*.txt',
  '*.jpg',
  '/*.jpg',
  '*.{jpg,png}',
  'dir/**',
  '/dir/**',
  'sub/',
  '/sub/',
  '*.t?t',
  '*.[a-m]*',
  '*\\[{JP,KR}\\]*',
  'secret*.jpg',
  '**/x.txt',
  'd?/*',
  '{d1,d2}/**',
  '{d1/**,d2/**}',
  '*.{{jpe?g}}',
  '/{{d[12]}}/**',
  '**',
  '*',
  'a/*.txt',
  '/a/b/*',
  'Trash/',
  '??[^[:punct:]]*',
  '*.\\d',
  'x y.txt',
  'é.txt',
  '*.JPG',
  'été/**',
  '.*',
  'a/**/x.txt',
  '/A/',
  'b/',
  '*.{{(?i)JPG}}',
  'README',
  '[[:upper:]]*',
];

/** Files in every tree, where folder rules implied by include rules decide (x/a/f.txt is not under a/ from the root). */
const FIXED_FILES = [
  'x/a/f.txt',
  'a/g.txt',
  'a/b/c.jpg',
  'x/a/b/y.jpg',
  'h.txt',
  'd1/q/r.txt',
  'd3/s.txt',
  'dir/t.txt',
];
const FIXED_CASES: string[][] = [
  ['--include=a/*.txt'],
  ['--include=/a/b/*'],
  ['--include=a/**/x.txt', '--include=a/*.txt'],
  ['--include={d1/**,d2/**}'],
  ['--include={d1,d2}/**'],
  ['--include=/dir/', '--include=*.jpg'],
  ['--filter=- /d1/', '--filter=+ *.txt', '--filter=- **'],
  ['--include=*.txt', '--exclude=x/'],
  ['--include=**/f.txt'],
  ['--filter=+ a/*.txt', '--filter=- **'],
  ['--filter=+ a/*.txt', '--filter=- *'],
  ['--include=*.{{jpe?g}}'],
  ['--include=/*.txt'],
  ['--ignore-case', '--include=A/*.TXT'],
  ['--filter=+ *.jpg', '--filter=!', '--filter=+ h.txt', '--filter=- *'],
];

/** The filter of a fixed case's flags. */
function filterOf(flags: string[]): FileFilter {
  const f: FileFilter = { mode: 'include', categories: [] };
  for (const flag of flags) {
    if (flag === '--ignore-case') f.ignore_case = true;
    const m = /^--(include|exclude|filter)=(.*)$/.exec(flag);
    if (!m) continue;
    const key = m[1] === 'filter' ? 'rules' : (m[1] as 'include' | 'exclude');
    (f[key] ??= []).push(m[2] as string);
  }
  return f;
}

interface Case {
  flags: string[];
  filter: FileFilter;
}

function makeCase(r: () => number): Case {
  const flags: string[] = [];
  const filter: FileFilter = { mode: 'include', categories: [] };
  const n = (max: number) => Math.floor(r() * (max + 1));
  const include = Array.from({ length: r() < 0.4 ? n(2) : 0 }, () => pick(r, PATTERNS));
  const exclude = Array.from({ length: r() < 0.5 ? n(2) : 0 }, () => pick(r, PATTERNS));
  const rules = Array.from({ length: r() < 0.6 ? n(4) : 0 }, () =>
    r() < 0.05 ? '!' : `${r() < 0.5 ? '+' : '-'} ${pick(r, PATTERNS)}`,
  );
  for (const p of include) flags.push(`--include=${p}`);
  for (const p of exclude) flags.push(`--exclude=${p}`);
  for (const l of rules) flags.push(`--filter=${l}`);
  if (include.length) filter.include = include;
  if (exclude.length) filter.exclude = exclude;
  if (rules.length) filter.rules = rules;
  if (r() < 0.25) {
    filter.min_size = pick(r, ['1k', '1025b', '100B', '4.9k']);
    flags.push(`--min-size=${filter.min_size}`);
  }
  if (r() < 0.25) {
    filter.max_size = pick(r, ['1k', '5000B', '48k', '0']);
    flags.push(`--max-size=${filter.max_size}`);
  }
  if (r() < 0.2) {
    filter.max_age = pick(r, ['2d', '1w', '1y', '30d']);
    flags.push(`--max-age=${filter.max_age}`);
  }
  if (r() < 0.2) {
    filter.min_age = pick(r, ['2d', '1w', '1y', '6h']);
    flags.push(`--min-age=${filter.min_age}`);
  }
  if (r() < 0.15) {
    filter.ignore_case = true;
    flags.push('--ignore-case');
  }
  return { flags, filter };
}

/** Files of a generated tree: up to three folders deep. */
function makeTree(r: () => number, count: number): { rel: string; size: number; age: number }[] {
  const out = new Map<string, { rel: string; size: number; age: number }>();
  while (out.size < count) {
    const depth = Math.floor(r() * 4);
    const parts = Array.from({ length: depth }, () => pick(r, DIRS));
    const rel = [...parts, pick(r, FILES)].join('/');
    out.set(rel, { rel, size: pick(r, SIZES), age: pick(r, AGES) });
  }
  return [...out.values()];
}

/** What rclone lists, or null when it refuses the flags. */
async function rcloneFiles(root: string, flags: string[]): Promise<string[] | null> {
  const out = await run('rclone', ['lsf', '-R', '--files-only', '--config', '/dev/null', ...flags, root]).catch(
    () => null,
  );
  return out === null
    ? null
    : out
        .split('\n')
        .filter((l) => l !== '')
        .sort();
}

/** What a one-way sync plans to copy, or null when the engine refuses the filter. */
async function engineFiles(root: string, filter: FileFilter): Promise<string[] | null> {
  const source = await openLocal({ path: root }, { localRoots: [root] });
  const plan = await planTransfer({
    source,
    target: new MemoryProvider(),
    mode: 'one_way',
    sourcePaths: ['/'],
    targetPath: '/t',
    filter,
    now: new Date(NOW),
  }).catch((e: unknown) => {
    if (e instanceof FilterError) return null;
    throw e;
  });
  if (!plan) return null;
  return plan.items
    .filter((i) => i.action === 'copy' && i.kind === 'file')
    .map((i) => i.rel.slice(1))
    .sort();
}

describe('the filter against rclone lsf', () => {
  const roots: string[] = [];
  beforeAll(async () => {
    for (const seed of [1, 2, 3]) {
      const r = random(seed);
      const root = await mkdtemp(join(tmpdir(), 'skyferry-filter-'));
      for (const rel of FIXED_FILES) await writeFileAt(root, rel, 'x', new Date(NOW - DAY));
      for (const f of makeTree(r, 60)) await writeFileAt(root, f.rel, 'x'.repeat(f.size), new Date(NOW - f.age));
      roots.push(root);
    }
  });
  afterAll(async () => {
    for (const root of roots) await rm(root, { recursive: true, force: true });
  });

  it.each(FIXED_CASES.map((flags) => [flags.join(' '), flags] as const))(
    'lists the same files for %s',
    async (_, flags) => {
      for (const root of roots) {
        const want = await rcloneFiles(root, flags);
        expect(want?.length).toBeGreaterThan(0);
        expect(await engineFiles(root, filterOf(flags))).toEqual(want);
      }
    },
  );

  it('lists the same files for generated rules on generated trees', async () => {
    const r = random(42);
    let compared = 0;
    let nonTrivial = 0;
    for (let i = 0; i < 150; i++) {
      const c = makeCase(r);
      if (c.flags.length === 0) continue;
      const root = roots[i % roots.length] as string;
      const [want, got] = await Promise.all([rcloneFiles(root, c.flags), engineFiles(root, c.filter)]);
      expect(got, `rclone lsf ${c.flags.map((f) => `'${f}'`).join(' ')}`).toEqual(want);
      compared++;
      if (want && want.length > 0 && want.length < 60) nonTrivial++;
    }
    expect(compared).toBeGreaterThan(120);
    // Most cases keep some files and leave out others.
    expect(nonTrivial).toBeGreaterThan(60);
  }, 180_000);
});
