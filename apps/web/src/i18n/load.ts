import { LANGUAGE_STORAGE_KEY, pickLanguage, type Language } from '@skyferry/contract';

/**
 * Translations live in locales/<lang>/<namespace>.json, one namespace per feature, so features
 * can be translated independently. Every language has every key (a test checks), so only the
 * interface language is loaded: each language's index.ts is a chunk of its own.
 */
export type LanguageBundle = Record<string, Record<string, unknown>>;

const languages = import.meta.glob<LanguageBundle>('./locales/*/index.ts', { import: 'default' });

const loaded = new Map<Language, Promise<LanguageBundle>>();

/** Loads one language's namespaces (once; a failed load is tried again next time). */
export function loadLanguage(lang: Language): Promise<LanguageBundle> {
  let bundle = loaded.get(lang);
  if (!bundle) {
    const load = languages[`./locales/${lang}/index.ts`];
    bundle = load ? load() : Promise.reject(new Error(`no translations for ${lang}`));
    bundle.catch(() => loaded.delete(lang));
    loaded.set(lang, bundle);
  }
  return bundle;
}

function storedLanguage(): string | null {
  try {
    return localStorage.getItem(LANGUAGE_STORAGE_KEY);
  } catch {
    return null;
  }
}

export function initialLanguage(): Language {
  return pickLanguage(
    storedLanguage(),
    typeof navigator === 'undefined' ? [] : (navigator.languages ?? [navigator.language]),
  );
}
