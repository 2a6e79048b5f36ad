import i18n from 'i18next';
import { initReactI18next } from 'react-i18next';
import { LANGUAGES, LANGUAGE_STORAGE_KEY, isRtl, pickLanguage, type Language } from '@skyferry/contract';

/**
 * Translations live in locales/<lang>/<namespace>.json, one namespace per feature, so features
 * can be translated independently. Every language has every key (a test checks).
 */
const files = import.meta.glob<{ default: Record<string, unknown> }>('./locales/*/*.json', { eager: true });

export const resources: Record<string, Record<string, Record<string, unknown>>> = {};
for (const [path, mod] of Object.entries(files)) {
  const match = /\.\/locales\/([^/]+)\/([^/]+)\.json$/.exec(path);
  if (!match) continue;
  const [, lang, ns] = match as unknown as [string, string, string];
  (resources[lang] ??= {})[ns] = mod.default;
}
export const NAMESPACES = Object.keys(resources.en ?? {});

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

function applyDocumentLanguage(lang: Language): void {
  if (typeof document === 'undefined') return;
  document.documentElement.lang = lang === 'br' ? 'pt-BR' : lang;
  document.documentElement.dir = isRtl(lang) ? 'rtl' : 'ltr';
}

/**
 * Plural rules by the language's real locale: Skyferry's `br` is Brazilian Portuguese, which
 * Intl would read as Breton (one, two, few, many, other) and pick the wrong `_one`/`_many` form.
 */
export const PLURAL_LOCALE: Partial<Record<Language, string>> = { br: 'pt-BR' };

/** i18next chooses `key_one`, `key_few`... with Intl.PluralRules of the code it is given. */
function applyPluralLocales(): void {
  const resolver = i18n.services.pluralResolver as {
    getRule: (code: string, options?: object) => Intl.PluralRules | undefined;
  };
  const getRule = resolver.getRule.bind(resolver);
  resolver.getRule = (code, options) => getRule(PLURAL_LOCALE[code as Language] ?? code, options);
}

export async function initI18n(lang: Language = initialLanguage()): Promise<typeof i18n> {
  if (!i18n.isInitialized) {
    await i18n.use(initReactI18next).init({
      resources,
      lng: lang,
      fallbackLng: 'en',
      supportedLngs: [...LANGUAGES],
      ns: NAMESPACES,
      defaultNS: 'common',
      interpolation: { escapeValue: false },
      returnNull: false,
    });
    applyPluralLocales();
  } else {
    await i18n.changeLanguage(lang);
  }
  applyDocumentLanguage(lang);
  return i18n;
}

/** Switches the interface language and remembers it under the `Language` key. */
export async function setLanguage(lang: Language): Promise<void> {
  try {
    localStorage.setItem(LANGUAGE_STORAGE_KEY, lang);
  } catch {
    // storage unavailable: the choice lasts for this session
  }
  await i18n.changeLanguage(lang);
  applyDocumentLanguage(lang);
}

export { i18n };
