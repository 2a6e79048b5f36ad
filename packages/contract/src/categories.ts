import type { FileFilter, FilterCategory } from './transfer.ts';

/** File types by extension (spec section 9). */
export type FileType =
  | 'document'
  | 'text'
  | 'ppt'
  | 'excel'
  | 'pdf'
  | 'picture'
  | 'audio'
  | 'video'
  | 'archive'
  | 'installer'
  | 'web'
  | 'apk'
  | 'design'
  | 'other';

export const EXTENSIONS: Record<Exclude<FileType, 'other'>, readonly string[]> = {
  document: ['doc', 'docx', 'docm', 'dot', 'dotx', 'odt', 'ott', 'rtf', 'wps', 'wpd', 'pages', 'epub', 'mobi'],
  text: ['txt', 'md', 'markdown', 'log', 'ini', 'cfg', 'conf', 'json', 'xml', 'yaml', 'yml', 'tex', 'srt', 'nfo'],
  ppt: ['ppt', 'pptx', 'pptm', 'pps', 'ppsx', 'pot', 'potx', 'odp', 'key', 'dps'],
  excel: ['xls', 'xlsx', 'xlsm', 'xlsb', 'xlt', 'xltx', 'csv', 'tsv', 'ods', 'numbers', 'et'],
  pdf: ['pdf'],
  picture: [
    'jpg',
    'jpeg',
    'png',
    'gif',
    'bmp',
    'webp',
    'tif',
    'tiff',
    'heic',
    'heif',
    'svg',
    'ico',
    'raw',
    'cr2',
    'cr3',
    'nef',
    'arw',
    'dng',
    'orf',
    'rw2',
    'avif',
    'jfif',
  ],
  audio: ['mp3', 'wav', 'flac', 'aac', 'm4a', 'ogg', 'oga', 'opus', 'wma', 'aiff', 'aif', 'ape', 'amr', 'mid', 'midi'],
  video: [
    'mp4',
    'm4v',
    'mov',
    'avi',
    'mkv',
    'wmv',
    'flv',
    'webm',
    'mpg',
    'mpeg',
    '3gp',
    'ts',
    'mts',
    'm2ts',
    'vob',
    'rmvb',
    'rm',
    'ogv',
  ],
  archive: ['zip', 'rar', '7z', 'tar', 'gz', 'tgz', 'bz2', 'tbz2', 'xz', 'txz', 'zst', 'lz', 'lzma', 'cab', 'iso', 'z'],
  installer: ['exe', 'msi', 'dmg', 'pkg', 'deb', 'rpm', 'appimage', 'msix', 'appx', 'snap', 'flatpak'],
  web: ['html', 'htm', 'xhtml', 'mht', 'mhtml', 'css', 'js'],
  apk: ['apk', 'xapk', 'aab', 'ipa'],
  design: ['psd', 'ai', 'sketch', 'fig', 'xd', 'indd', 'cdr', 'eps', 'dwg', 'dxf', 'afdesign', 'afphoto'],
};

const BY_EXTENSION = new Map<string, FileType>();
for (const [type, exts] of Object.entries(EXTENSIONS) as [FileType, readonly string[]][]) {
  for (const ext of exts) BY_EXTENSION.set(ext, type);
}

/** The extension of a file name or path (slash or backslash separated), lower-cased, without the dot; '' when none. */
export function extensionOf(fileName: string): string {
  const base = fileName.slice(Math.max(fileName.lastIndexOf('/'), fileName.lastIndexOf('\\')) + 1);
  const dot = base.lastIndexOf('.');
  if (dot <= 0 || dot === base.length - 1) return '';
  return base.slice(dot + 1).toLowerCase();
}

/** The file type of a name by its extension; 'other' when unknown. */
export function categoryOf(fileName: string): FileType {
  return BY_EXTENSION.get(extensionOf(fileName)) ?? 'other';
}

/** Which file types each of the nine filter categories covers. */
export const FILTER_CATEGORY_TYPES: Record<FilterCategory, readonly FileType[]> = {
  text: ['text', 'document'],
  ppt: ['ppt'],
  excel: ['excel'],
  pdf: ['pdf'],
  audio: ['audio'],
  picture: ['picture'],
  video: ['video'],
  archive: ['archive'],
  installer: ['installer', 'apk'],
};

/** Whether a file passes a transfer's file-type filter (no filter passes everything). */
export function passesFilter(fileName: string, filter: FileFilter | null | undefined): boolean {
  if (!filter || filter.categories.length === 0) return true;
  const type = categoryOf(fileName);
  const inAny = filter.categories.some((c) => FILTER_CATEGORY_TYPES[c].includes(type));
  return filter.mode === 'include' ? inAny : !inAny;
}

/** Clean-up result categories (spec section 2: All, Videos, Audios, Documents, Others and pictures). */
export const CLEANUP_CATEGORIES = ['all', 'video', 'audio', 'document', 'picture', 'other'] as const;
export type CleanupCategory = (typeof CLEANUP_CATEGORIES)[number];

export function cleanupCategoryOf(fileName: string): Exclude<CleanupCategory, 'all'> {
  const type = categoryOf(fileName);
  switch (type) {
    case 'video':
      return 'video';
    case 'audio':
      return 'audio';
    case 'picture':
      return 'picture';
    case 'document':
    case 'text':
    case 'ppt':
    case 'excel':
    case 'pdf':
      return 'document';
    default:
      return 'other';
  }
}

/** Only pictures and videos go to a photos cloud. */
export function isPhotoOrVideo(fileName: string): boolean {
  const type = categoryOf(fileName);
  return type === 'picture' || type === 'video';
}
