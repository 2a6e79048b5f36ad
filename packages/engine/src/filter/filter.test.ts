import type { FileFilter } from '@skyferry/contract';
import { describe, expect, it } from 'vitest';
import { compileFilter, FilterError, parseAge, parseSize, passesPath, rulesFileLines } from './index.ts';

// Held to the examples of rclone's filtering documentation (https://rclone.org/filtering/, the
// version Debian ships with rclone 1.60: /usr/share/doc/rclone/MANUAL.md.gz).

const NOW = Date.UTC(2026, 0, 31, 12);
const filter = (f: Partial<FileFilter>): FileFilter => ({ mode: 'include', categories: [], ...f });

/** The files of `paths` a filter lets through, as a walk of the tree would find them. */
function through(f: Partial<FileFilter>, paths: string[], size = 0, modTime?: Date): string[] {
  const m = compileFilter(filter(f), NOW);
  if (!m) return paths;
  return paths.filter((p) => passesPath(m, p, { size, modTime }));
}

describe('filter patterns: the table of examples', () => {
  // [description, pattern, matches, does not match]
  const table: [string, string, string[], string[]][] = [
    ['Wildcard', '*.jpg', ['/file.jpg', '/dir/file.jpg'], ['/file.png', '/dir/file.png']],
    ['Rooted', '/*.jpg', ['/file.jpg', '/file2.jpg'], ['/file.png', '/dir/file.jpg']],
    ['Alternates', '*.{jpg,png}', ['/file.jpg', '/dir/file.png'], ['/file.gif', '/dir/file.gif']],
    ['Path Wildcard', 'dir/**', ['/dir/anyfile', '/subdir/dir/subsubdir/anyfile'], ['file.png', '/subdir/file.png']],
    ['Any Char', '*.t?t', ['/file.txt', '/dir/file.tzt'], ['/file.qxt', '/dir/file.png']],
    ['Range', '*.[a-z]', ['/file.a', '/dir/file.b'], ['/file.0', '/dir/file.1']],
    ['Escape', '*.\\?\\?\\?', ['/file.???', '/dir/file.???'], ['/file.abc', '/dir/file.def']],
    ['Class', '*.\\d\\d\\d', ['/file.012', '/dir/file.345'], ['/file.abc', '/dir/file.def']],
    ['Regexp', '*.{{jpe?g}}', ['/file.jpeg', '/dir/file.jpg'], ['/file.png', '/dir/file.jpeeg']],
    // The table also lists /dir/file.jpg as not matching, but by the page's own transformation
    // (/{{regexp}} becomes ^(regexp)$) .* crosses the slash, and rclone lists dir/file.jpg too.
    ['Rooted Regexp', '/{{.*\\.jpe?g}}', ['/file.jpeg', '/file.jpg', '/dir/file.jpg'], ['/file.png']],
    // "If it does not start with / then it is matched starting at the end of the path/file name
    // but it only matches a complete path element."
    ['Path element', 'file.jpg', ['file.jpg', 'directory/file.jpg'], ['afile.jpg', 'directory/afile.jpg']],
    ['Top level', '/file.jpg', ['file.jpg'], ['afile.jpg', 'directory/file.jpg']],
    ['Case', 'potato', ['potato'], ['POTATO']],
    ['Regexp flags', '*.{{(?i)jpg}}', ['file.jpg', 'file.JPG'], ['file.png']],
    ['Regexp without separators', '{{start[^/]*end\\.jpg}}', ['startXend.jpg'], ['start/end.jpg']],
    ['Escaped brackets', '*\\[{JP,KR,HK}\\]*', ['a [JP] b.mkv', 'x/[HK].mkv'], ['a [US] b.mkv', 'a JP b.mkv']],
    ['ASCII class', '??[^[:punct:]]*', ['abc', 'ab1.txt'], ['ab.txt', 'ab-c']],
  ];
  it.each(table)('%s: %s', (_d, pattern, yes, no) => {
    // As an exclude rule (no folder rules implied) the pattern alone decides.
    for (const p of yes) expect(through({ exclude: [pattern] }, [p]), `${pattern} matches ${p}`).toEqual([]);
    for (const p of no) expect(through({ exclude: [pattern] }, [p]), `${pattern} does not match ${p}`).toEqual([p]);
  });

  it('ignores case with --ignore-case', () => {
    expect(through({ exclude: ['potato'], ignore_case: true }, ['potato', 'POTATO', 'tomato'])).toEqual(['tomato']);
    expect(through({ include: ['zaphod.txt'], ignore_case: true }, ['Zaphod.txt'])).toEqual(['Zaphod.txt']);
    expect(through({ include: ['zaphod.txt'] }, ['Zaphod.txt'])).toEqual([]);
  });

  it('refuses malformed patterns and rules, naming them', () => {
    for (const bad of ['a[b', 'a{b', 'a}b', 'a]b', '{a,{b,c}}', 'a[]]', 'x{{a(}}', '[[:nope:]]']) {
      expect(() => compileFilter(filter({ include: [bad] })), bad).toThrow(FilterError);
    }
    for (const bad of ['x', '+x', ' + x', '-', '+']) {
      const e = (() => {
        try {
          compileFilter(filter({ rules: [bad] }));
        } catch (err) {
          return err;
        }
      })();
      expect(e, bad).toBeInstanceOf(FilterError);
      expect((e as FilterError).rule).toBe(bad);
    }
  });
});

describe('how filter rules are applied', () => {
  const tree = [
    'file1.jpg',
    'file2.avi',
    'file3.png',
    'secret17.jpg',
    'notes.txt',
    'dir/readme.md',
    'dir/deep/x.bin',
    'dir/Trash/old.doc',
    'sub/pic.jpg',
    'sub/secret1.jpg',
  ];

  it('--filter-from: first match wins (the first sample file)', () => {
    const rules = rulesFileLines(`# a sample filter rule file
- secret*.jpg
+ *.jpg
+ *.png
+ file2.avi
- /dir/Trash/**
+ /dir/**
# exclude everything else
- *
`);
    expect(through({ rules }, tree)).toEqual([
      'file1.jpg',
      'file2.avi',
      'file3.png',
      'dir/readme.md',
      'dir/deep/x.bin',
      'sub/pic.jpg',
    ]);
  });

  it('--filter-from: the alternative sample', () => {
    const rules = ['- secret*.jpg', '+ *.jpg', '+ *.png', '+ file2.avi', '- *'];
    expect(through({ rules }, ['file1.jpg', 'file3.png', 'file2.avi', 'secret17.jpg', 'other.doc'])).toEqual([
      'file1.jpg',
      'file3.png',
      'file2.avi',
    ]);
  });

  it('! clears the rules before it', () => {
    const rules = rulesFileLines('+ *.jpg\n+ *.gif\n!\n+ 42.doc\n- *\n');
    expect(through({ rules }, ['a.jpg', 'b.gif', '42.doc', 'c.txt'])).toEqual(['42.doc']);
  });

  it('folder rules: nothing in an excluded folder is listed, whatever the rules below say', () => {
    const rules = ['- /dir1/', '- /dir2/', '+ *.pdf', '- **'];
    const paths = ['a.pdf', 'b.txt', 'dir1/c.pdf', 'dir2/x/d.pdf', 'dir3/e.pdf', 'dir3/f.doc'];
    expect(through({ rules }, paths)).toEqual(['a.pdf', 'dir3/e.pdf']);
  });

  it('"- *" leaves out the folders no earlier rule lets in (rclone lists no x/a/f.txt)', () => {
    expect(through({ rules: ['+ a/*.txt', '- *'] }, ['a/g.txt', 'x/a/f.txt', 'h.txt'])).toEqual(['a/g.txt']);
    expect(through({ rules: ['+ a/*.txt', '- **'] }, ['a/g.txt', 'x/a/f.txt', 'h.txt'])).toEqual(['a/g.txt']);
    expect(through({ rules: ['+ a/*.txt', '- *.md'] }, ['a/g.txt', 'x/a/f.txt', 'h.txt'])).toEqual([
      'a/g.txt',
      'x/a/f.txt',
      'h.txt',
    ]);
  });

  it('--exclude-from and --include-from read one pattern a line, skipping remarks', () => {
    const exclude = rulesFileLines('# a sample exclude rule file\n*.bak\nfile2.jpg\n');
    expect(exclude).toEqual(['*.bak', 'file2.jpg']);
    expect(through({ exclude }, ['a.bak', 'file2.jpg', 'x/file2.jpg', 'file1.jpg'])).toEqual(['file1.jpg']);
    const include = rulesFileLines('  # a sample include rule file\n; also a remark\n  *.jpg  \nfile2.avi\n\n');
    expect(include).toEqual(['*.jpg', 'file2.avi']);
    expect(through({ include }, ['a.jpg', 'd/b.jpg', 'file2.avi', 'file3.avi'])).toEqual([
      'a.jpg',
      'd/b.jpg',
      'file2.avi',
    ]);
  });

  it('--include implies "- **" at the end; a + rule of --filter does not', () => {
    expect(through({ include: ['*.{png,jpg}'] }, ['a.png', 'b.jpg', 'c.gif', 'd/e.png'])).toEqual([
      'a.png',
      'b.jpg',
      'd/e.png',
    ]);
    expect(through({ rules: ['+ *.{png,jpg}'] }, ['a.png', 'c.gif'])).toEqual(['a.png', 'c.gif']);
  });

  it('rclone copy /vol1 remote: --include "{A,B}/**" takes A and B only', () => {
    expect(through({ include: ['{A,B}/**'] }, ['A/x', 'A/y/z', 'B/w', 'C/v', 'top'])).toEqual(['A/x', 'A/y/z', 'B/w']);
  });

  it('--include /directory/ matches no files', () => {
    expect(through({ include: ['/directory/'] }, ['directory/a', 'directory/b/c', 'x'])).toEqual([]);
  });

  it('--exclude /dir/** leaves out the root folder dir and everything below it', () => {
    expect(through({ exclude: ['/dir/**'] }, ['dir/a', 'dir/b/c', 'x/dir/d', 'e'])).toEqual(['x/dir/d', 'e']);
    // Excluding "dir/" is the same as excluding "dir/**".
    expect(through({ exclude: ['/dir/'] }, ['dir/a', 'dir/b/c', 'x/dir/d', 'e'])).toEqual(['x/dir/d', 'e']);
  });

  it('copies F:\\data excluding the contents of excl (--exclude=/excl/**)', () => {
    expect(through({ exclude: ['/excl/**'] }, ['excl/123.jpg', 'excl/456.jpg', 'incl/document.pdf'])).toEqual([
      'incl/document.pdf',
    ]);
  });

  it('an include rule /a/*.jpg implies the folder rule /a/', () => {
    const m = compileFilter(filter({ include: ['/a/*.jpg'] }))!;
    expect(m.dir('a')).toBe(true);
    expect(m.dir('b')).toBe(false);
    expect(m.dir('a/b')).toBe(false);
    expect(through({ include: ['/a/*.jpg'] }, ['a/x.jpg', 'a/b/y.jpg', 'b/x.jpg', 'x.jpg'])).toEqual(['a/x.jpg']);
  });

  it('{dir1/**,dir2/**} matches below dir1 and dir2 only, but cannot leave dir3 unwalked', () => {
    const m = compileFilter(filter({ include: ['{dir1/**,dir2/**}'] }))!;
    expect(m.dir('dir3')).toBe(true);
    expect(through({ include: ['{dir1/**,dir2/**}'] }, ['dir1/a', 'dir2/b/c', 'dir3/d'])).toEqual([
      'dir1/a',
      'dir2/b/c',
    ]);
    const split = compileFilter(filter({ include: ['{dir1,dir2}/**'] }))!;
    expect(split.dir('dir3')).toBe(false);
    expect(split.dir('dir1')).toBe(true);
  });

  it('--exclude "*.bak" excludes all .bak files', () => {
    expect(through({ rules: ['- *.bak'] }, ['a.bak', 'x/b.bak', 'c.txt'])).toEqual(['c.txt']);
  });
});

describe('size and age filters', () => {
  it('sizes are KiB by default; B, K, M, G, T and P are binary units', () => {
    expect(parseSize('50k')).toBe(50 * 1024);
    expect(parseSize('100')).toBe(100 * 1024);
    expect(parseSize('1G')).toBe(2 ** 30);
    expect(parseSize('10B')).toBe(10);
    expect(parseSize('2M')).toBe(2 * 2 ** 20);
    expect(parseSize('1T')).toBe(2 ** 40);
    expect(parseSize('1P')).toBe(2 ** 50);
    expect(parseSize('1.5k')).toBe(1536);
    expect(parseSize(1234)).toBe(1234);
    expect(() => parseSize('ten')).toThrow(FilterError);
    expect(() => parseSize('-1k')).toThrow(FilterError);
  });

  it('--min-size 50k keeps files of 50 KiB or larger; --max-size 1G of 1 GiB or smaller', () => {
    const min = compileFilter(filter({ min_size: '50k' }))!;
    expect(min.file('a', { size: 50 * 1024 })).toBe(true);
    expect(min.file('a', { size: 50 * 1024 - 1 })).toBe(false);
    const max = compileFilter(filter({ max_size: '1G' }))!;
    expect(max.file('a', { size: 2 ** 30 })).toBe(true);
    expect(max.file('a', { size: 2 ** 30 + 1 })).toBe(false);
  });

  it('durations are seconds by default, with ms, s, m, h, d, w, M and y; dates too', () => {
    expect(parseAge('2d', NOW)).toBe(NOW - 2 * 86_400_000);
    expect(parseAge('3600', NOW)).toBe(NOW - 3_600_000);
    expect(parseAge('300ms', NOW)).toBe(NOW - 300);
    expect(parseAge('2h45m', NOW)).toBe(NOW - (2 * 60 + 45) * 60_000);
    expect(parseAge('-1.5h', NOW)).toBe(NOW + 1.5 * 3_600_000);
    expect(parseAge('1w', NOW)).toBe(NOW - 7 * 86_400_000);
    expect(parseAge('1M', NOW)).toBe(NOW - 30 * 86_400_000);
    expect(parseAge('1y', NOW)).toBe(NOW - 365 * 86_400_000);
    expect(parseAge('2006-01-02T15:04:05Z', NOW)).toBe(Date.UTC(2006, 0, 2, 15, 4, 5));
    expect(parseAge('2006-01-02T15:04:05+07:00', NOW)).toBe(Date.UTC(2006, 0, 2, 8, 4, 5));
    expect(parseAge('2006-01-02', NOW)).toBe(new Date(2006, 0, 2).getTime());
    expect(parseAge('2006-01-02 15:04:05', NOW)).toBe(new Date(2006, 0, 2, 15, 4, 5).getTime());
    expect(() => parseAge('yesterday', NOW)).toThrow(FilterError);
  });

  it('--max-age 2d keeps files 2 days old or less; --min-age 2d files 2 days old or more', () => {
    const day = 86_400_000;
    const young = new Date(NOW - day);
    const old = new Date(NOW - 3 * day);
    expect(through({ max_age: '2d' }, ['young'], 1, young)).toEqual(['young']);
    expect(through({ max_age: '2d' }, ['old'], 1, old)).toEqual([]);
    expect(through({ min_age: '2d' }, ['young'], 1, young)).toEqual([]);
    expect(through({ min_age: '2d' }, ['old'], 1, old)).toEqual(['old']);
    // Ages apply to files only, never to folders.
    expect(compileFilter(filter({ max_age: '2d' }), NOW)!.dir('any')).toBe(true);
  });
});

describe('patterns, sizes, ages and the nine categories together', () => {
  it('a file passes only when every part lets it through', () => {
    const f = filter({ mode: 'include', categories: ['picture'], exclude: ['private/'], min_size: '1k' });
    const m = compileFilter(f, NOW)!;
    expect(passesPath(m, 'a/photo.jpg', { size: 4096 })).toBe(true);
    expect(passesPath(m, 'a/photo.jpg', { size: 10 })).toBe(false);
    expect(passesPath(m, 'private/photo.jpg', { size: 4096 })).toBe(false);
    expect(passesPath(m, 'a/notes.txt', { size: 4096 })).toBe(false);
  });

  it('the category filter alone judges by file type', () => {
    const m = compileFilter({ mode: 'exclude', categories: ['installer', 'archive'] })!;
    expect(m.file('setup.exe', { size: 1 })).toBe(false);
    expect(m.file('d/a.zip', { size: 1 })).toBe(false);
    expect(m.file('a.txt', { size: 1 })).toBe(true);
    expect(compileFilter({ mode: 'include', categories: [] })).toBeNull();
    expect(compileFilter(null)).toBeNull();
  });
});
