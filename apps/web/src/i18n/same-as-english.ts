/**
 * Texts that are the same in other languages as in English: brand and product names, file formats
 * and words those languages use as they are. The translations test accepts these as translated.
 * Add to this list rather than copying English text into a language file.
 */
export const SAME_AS_ENGLISH: ReadonlySet<string> = new Set([
  'Skyferry',
  'Premium',
  'Apps',
  'App',
  'Account',
  'Audio',
  'Excel',
  'PDF',
  'PPT',
  'OK',
  'No',
  'Error',
  'General',
  'Notification',
  'Video',
  'Videos',
  'Photos',
  'Tip',
  'Later',
  'Hallo',
  'Version {{version}}',
  '© {{year}} Skyferry',
  '{{n}} / {{max}}',
  'Google Drive',
  'Google Photos',
  'Dropbox',
  'Dropbox Business',
  'Box',
  'Wasabi',
  'Backblaze B2',
  'Amazon S3',
  'Minute',
  // The Tasks page: a range of rows, and a schedule with its time zone (placeholders only).
  '{{from}}–{{to}}',
  '{{schedule}} ({{zone}})',
]);
