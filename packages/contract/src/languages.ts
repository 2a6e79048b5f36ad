export const LANGUAGES = ['en', 'ar', 'br', 'de', 'es', 'fr', 'it', 'ja', 'ko', 'nl'] as const;
export type Language = (typeof LANGUAGES)[number];
export const DEFAULT_LANGUAGE: Language = 'en';
/** Local-storage key of the chosen language. */
export const LANGUAGE_STORAGE_KEY = 'Language';

export const LANGUAGE_NAMES: Record<Language, string> = {
  en: 'English',
  ar: 'العربية',
  br: 'Português (Brasil)',
  de: 'Deutsch',
  es: 'Español',
  fr: 'Français',
  it: 'Italiano',
  ja: '日本語',
  ko: '한국어',
  nl: 'Nederlands',
};

export function isRtl(lang: Language): boolean {
  return lang === 'ar';
}

/** Maps a browser or header language tag to one of ours (pt maps to br); undefined when unsupported. */
export function toLanguage(tag: string | null | undefined): Language | undefined {
  if (!tag) return undefined;
  const primary = tag.trim().toLowerCase().split(/[-_]/)[0] ?? '';
  if (primary === 'pt') return 'br';
  return (LANGUAGES as readonly string[]).includes(primary) ? (primary as Language) : undefined;
}

/** The language to use: the stored choice, then the browser's, then English. */
export function pickLanguage(stored: string | null | undefined, browser: readonly string[]): Language {
  const fromStored = toLanguage(stored);
  if (fromStored) return fromStored;
  for (const tag of browser) {
    const lang = toLanguage(tag);
    if (lang) return lang;
  }
  return DEFAULT_LANGUAGE;
}

/**
 * Picks our language from an Accept-Language or X-Language header value: tags in order of their
 * q-value (ties keep header order), `q=0` meaning "not acceptable"; English when none is ours.
 */
export function languageFromHeader(value: string | undefined): Language {
  if (!value) return DEFAULT_LANGUAGE;
  const tags = value
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.split(';').map((s) => s.trim());
      const qParam = params.find((p) => /^q\s*=/i.test(p));
      const q = qParam === undefined ? 1 : Number(qParam.replace(/^q\s*=\s*/i, ''));
      return { tag, q: Number.isFinite(q) ? q : 0, index };
    })
    .filter((t) => t.tag !== '' && t.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index)
    .map((t) => t.tag);
  return pickLanguage(undefined, tags);
}
