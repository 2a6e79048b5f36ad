import type { Language } from '@skyferry/contract';

/**
 * The only texts a translation may leave as they are in English. The translations test fails on
 * any other value that equals the English one, so a copied string cannot pass for translated.
 *
 * NAMES: names of services, products and file formats, the same in every language.
 */
export const NAMES: ReadonlySet<string> = new Set([
  'Skyferry',
  '© {{year}} Skyferry',
  'Google Drive',
  'Google Photos',
  'OneDrive',
  'OneDrive for Business',
  'Dropbox',
  'Dropbox Business',
  'Box',
  'Amazon S3',
  'Wasabi',
  'Backblaze B2',
  'WebDAV',
  'SFTP',
  'FTP',
  'Nextcloud',
  'ownCloud',
  'Excel',
  'PDF',
  'PPT',
  'OK',
  'Premium',
]);

/**
 * Per language, words that language writes as English does (checked by a speaker: "Audio" in
 * German, "Password" in Italian). Add here rather than copy English text into a language file.
 */
export const SAME_IN: Readonly<Partial<Record<Language, readonly string[]>>> = {
  br: ['Apps'],
  de: ['Apps', 'Audio', 'Details', 'Editor', 'Format', 'Minute', 'Version {{version}}', 'Videos'],
  es: ['Apps', 'Audio', 'Error', 'General', 'No'],
  fr: ['Apps', 'Audio', 'Notification', 'Photos', 'Version {{version}}'],
  it: ['Account', 'Apps', 'Audio', 'No', 'Password', '{{name}} (app)'],
  nl: ['Account', 'Apps', 'Audio', 'Later', 'Tip', '{{name}} (app)'],
};

/** Whether `lang` may show `english` as it is. */
export function mayEqualEnglish(lang: Language, english: string): boolean {
  return NAMES.has(english) || (SAME_IN[lang]?.includes(english) ?? false);
}
