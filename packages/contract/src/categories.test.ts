import { describe, expect, it } from 'vitest';
import {
  CLEANUP_CATEGORIES,
  CONFLICT_RESOLUTIONS,
  EXTENSIONS,
  FILTER_CATEGORIES,
  FILTER_CATEGORY_TYPES,
  FILTER_MODES,
  SAME_NAME_POLICIES,
  SYNC_MODES,
  TaskType,
  categoryOf,
  cleanupCategoryOf,
  extensionOf,
  fileFilterSchema,
  filterCategorySchema,
  isPhotoOrVideo,
  passesFilter,
  sameNamePolicySchema,
  syncModeSchema,
  type FileFilter,
  type FileType,
} from './index.ts';

describe('transfer vocabulary', () => {
  it('has task types 0 migrate and 1 sync', () => {
    expect(TaskType).toEqual({ migrate: 0, sync: 1 });
  });
  it('has the four sync modes', () => {
    expect(SYNC_MODES).toEqual(['two_way', 'one_way', 'mirror', 'incremental']);
    expect(syncModeSchema.safeParse('mirror').success).toBe(true);
    expect(syncModeSchema.safeParse('three_way').success).toBe(false);
  });
  it('has the four same-name policies', () => {
    expect(SAME_NAME_POLICIES).toEqual(['overwrite', 'skip', 'size_differs', 'size_differs_or_newer']);
    for (const p of SAME_NAME_POLICIES) expect(sameNamePolicySchema.parse(p)).toBe(p);
    expect(sameNamePolicySchema.safeParse('rename').success).toBe(false);
  });
  it('has the nine filter categories', () => {
    expect(FILTER_CATEGORIES).toEqual([
      'text',
      'ppt',
      'excel',
      'pdf',
      'audio',
      'picture',
      'video',
      'archive',
      'installer',
    ]);
    expect(filterCategorySchema.safeParse('web').success).toBe(false);
  });
  it('filters in include-only or exclude mode with at least one category', () => {
    expect(FILTER_MODES).toEqual(['include', 'exclude']);
    expect(fileFilterSchema.safeParse({ mode: 'include', categories: ['pdf'] }).success).toBe(true);
    expect(fileFilterSchema.safeParse({ mode: 'include', categories: [] }).success).toBe(false);
    expect(fileFilterSchema.safeParse({ mode: 'only', categories: ['pdf'] }).success).toBe(false);
    expect(fileFilterSchema.safeParse({ mode: 'exclude', categories: [...FILTER_CATEGORIES] }).success).toBe(true);
    expect(fileFilterSchema.safeParse({ mode: 'exclude', categories: [...FILTER_CATEGORIES, 'pdf'] }).success).toBe(
      false,
    );
  });
  it('resolves two-way conflicts in known ways', () => {
    expect(CONFLICT_RESOLUTIONS).toContain('keep_both');
  });
});

describe('extensionOf', () => {
  it.each([
    ['report.PDF', 'pdf'],
    ['archive.tar.gz', 'gz'],
    ['/a/b/photo.jpeg', 'jpeg'],
    ['C:\\Users\\me\\song.MP3', 'mp3'],
    ['folder.d/README', ''],
    ['folder.d\\README', ''],
    ['README', ''],
    ['.bashrc', ''],
    ['/home/me/.profile', ''],
    ['.hidden.txt', 'txt'],
    ['trailing.', ''],
    ['', ''],
    ['..', ''],
  ])('%s -> "%s"', (name, ext) => {
    expect(extensionOf(name)).toBe(ext);
  });
});

describe('categoryOf', () => {
  it.each<[string, FileType]>([
    ['letter.doc', 'document'],
    ['letter.docx', 'document'],
    ['novel.odt', 'document'],
    ['book.epub', 'document'],
    ['notes.txt', 'text'],
    ['README.md', 'text'],
    ['config.yaml', 'text'],
    ['subs.srt', 'text'],
    ['slides.ppt', 'ppt'],
    ['slides.pptx', 'ppt'],
    ['talk.key', 'ppt'],
    ['sheet.xls', 'excel'],
    ['sheet.xlsx', 'excel'],
    ['data.csv', 'excel'],
    ['paper.pdf', 'pdf'],
    ['photo.jpg', 'picture'],
    ['photo.JPEG', 'picture'],
    ['shot.png', 'picture'],
    ['iphone.HEIC', 'picture'],
    ['raw.cr2', 'picture'],
    ['logo.svg', 'picture'],
    ['song.mp3', 'audio'],
    ['song.FLAC', 'audio'],
    ['voice.m4a', 'audio'],
    ['clip.mp4', 'video'],
    ['clip.MOV', 'video'],
    ['film.mkv', 'video'],
    ['stream.webm', 'video'],
    ['backup.zip', 'archive'],
    ['backup.7z', 'archive'],
    ['backup.tar.gz', 'archive'],
    ['disk.iso', 'archive'],
    ['setup.exe', 'installer'],
    ['setup.MSI', 'installer'],
    ['app.dmg', 'installer'],
    ['pkg.deb', 'installer'],
    ['index.html', 'web'],
    ['page.htm', 'web'],
    ['app.apk', 'apk'],
    ['app.ipa', 'apk'],
    ['poster.psd', 'design'],
    ['logo.ai', 'design'],
    ['mock.sketch', 'design'],
    ['mock.fig', 'design'],
    ['data.bin', 'other'],
    ['Makefile', 'other'],
    ['.gitignore', 'other'],
    ['noext.', 'other'],
    ['/photos/2024/IMG_0001.JPG', 'picture'],
    ['/music.mp3/cover', 'other'],
  ])('%s is %s', (name, type) => {
    expect(categoryOf(name)).toBe(type);
  });

  it('maps every listed extension to its own type, in any case', () => {
    for (const [type, exts] of Object.entries(EXTENSIONS)) {
      for (const ext of exts) {
        expect(categoryOf(`file.${ext}`), ext).toBe(type);
        expect(categoryOf(`FILE.${ext.toUpperCase()}`), ext).toBe(type);
      }
    }
  });

  it('lists each extension under one type only, in lower case without a dot', () => {
    const all = Object.values(EXTENSIONS).flat();
    expect(new Set(all).size).toBe(all.length);
    for (const ext of all) expect(ext).toMatch(/^[a-z0-9]+$/);
  });

  it('covers every type of spec section 9', () => {
    expect(Object.keys(EXTENSIONS).sort()).toEqual(
      [
        'document',
        'text',
        'ppt',
        'excel',
        'pdf',
        'picture',
        'audio',
        'video',
        'archive',
        'installer',
        'web',
        'apk',
        'design',
      ].sort(),
    );
  });
});

describe('FILTER_CATEGORY_TYPES', () => {
  it('covers each of the nine categories with at least one type', () => {
    expect(Object.keys(FILTER_CATEGORY_TYPES).sort()).toEqual([...FILTER_CATEGORIES].sort());
    for (const types of Object.values(FILTER_CATEGORY_TYPES)) expect(types.length).toBeGreaterThan(0);
  });
  it('puts no type in two categories', () => {
    const all = Object.values(FILTER_CATEGORY_TYPES).flat();
    expect(new Set(all).size).toBe(all.length);
  });
});

describe('passesFilter', () => {
  it('passes everything with no filter', () => {
    expect(passesFilter('a.exe', null)).toBe(true);
    expect(passesFilter('a.exe', undefined)).toBe(true);
    expect(passesFilter('a.exe', { mode: 'include', categories: [] })).toBe(true);
  });

  it('in include mode passes only the chosen categories', () => {
    const filter: FileFilter = { mode: 'include', categories: ['picture', 'video'] };
    expect(passesFilter('a.JPG', filter)).toBe(true);
    expect(passesFilter('/x/y/clip.mp4', filter)).toBe(true);
    expect(passesFilter('a.pdf', filter)).toBe(false);
    expect(passesFilter('noext', filter)).toBe(false);
    expect(passesFilter('.jpg', filter)).toBe(false);
  });

  it('in exclude mode passes everything but the chosen categories', () => {
    const filter: FileFilter = { mode: 'exclude', categories: ['installer', 'archive'] };
    expect(passesFilter('setup.exe', filter)).toBe(false);
    expect(passesFilter('app.apk', filter)).toBe(false);
    expect(passesFilter('a.zip', filter)).toBe(false);
    expect(passesFilter('a.txt', filter)).toBe(true);
    expect(passesFilter('Makefile', filter)).toBe(true);
  });

  it('counts documents and text under the text document category', () => {
    const filter: FileFilter = { mode: 'include', categories: ['text'] };
    expect(passesFilter('a.docx', filter)).toBe(true);
    expect(passesFilter('a.txt', filter)).toBe(true);
    expect(passesFilter('a.pdf', filter)).toBe(false);
    expect(passesFilter('a.xlsx', filter)).toBe(false);
  });

  it.each([
    ['text', 'memo.rtf'],
    ['ppt', 'deck.pptx'],
    ['excel', 'budget.xlsx'],
    ['pdf', 'doc.PDF'],
    ['audio', 'a.wav'],
    ['picture', 'b.webp'],
    ['video', 'c.avi'],
    ['archive', 'd.rar'],
    ['installer', 'e.pkg'],
  ] as const)('include %s passes %s and exclude %s drops it', (category, name) => {
    expect(passesFilter(name, { mode: 'include', categories: [category] })).toBe(true);
    expect(passesFilter(name, { mode: 'exclude', categories: [category] })).toBe(false);
    for (const other of FILTER_CATEGORIES) {
      if (other === category) continue;
      expect(passesFilter(name, { mode: 'include', categories: [other] }), `${name} in ${other}`).toBe(false);
    }
  });
});

describe('cleanupCategoryOf', () => {
  it('has the categories of the free-up screen', () => {
    expect(CLEANUP_CATEGORIES).toEqual(['all', 'video', 'audio', 'document', 'picture', 'other']);
  });
  it.each([
    ['a.mp4', 'video'],
    ['a.MKV', 'video'],
    ['a.mp3', 'audio'],
    ['a.png', 'picture'],
    ['a.HEIC', 'picture'],
    ['a.docx', 'document'],
    ['a.txt', 'document'],
    ['a.pptx', 'document'],
    ['a.xlsx', 'document'],
    ['a.pdf', 'document'],
    ['a.zip', 'other'],
    ['a.exe', 'other'],
    ['a.html', 'other'],
    ['a.psd', 'other'],
    ['Makefile', 'other'],
    ['.env', 'other'],
    ['/deep/path/to/film.MOV', 'video'],
  ])('%s is %s', (name, category) => {
    expect(cleanupCategoryOf(name)).toBe(category);
  });
});

describe('isPhotoOrVideo', () => {
  it('accepts only pictures and videos for a photos cloud', () => {
    expect(isPhotoOrVideo('a.JPG')).toBe(true);
    expect(isPhotoOrVideo('a.mov')).toBe(true);
    expect(isPhotoOrVideo('a.mp3')).toBe(false);
    expect(isPhotoOrVideo('a.pdf')).toBe(false);
    expect(isPhotoOrVideo('jpg')).toBe(false);
  });
});
