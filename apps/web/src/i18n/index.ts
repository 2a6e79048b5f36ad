import i18n from 'i18next';
import { initReactI18next } from 'react-i18next';
import { LANGUAGES, LANGUAGE_STORAGE_KEY, isRtl, pickLanguage, plainName, type Language } from '@skyferry/contract';

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

export async function initI18n(lang: Language = initialLanguage()): Promise<typeof i18n> {
  if (!i18n.isInitialized) {
    await i18n.use(initReactI18next).init({
      resources,
      lng: lang,
      fallbackLng: 'en',
      supportedLngs: [...LANGUAGES],
      ns: NAMESPACES,
      defaultNS: 'common',
      // React escapes markup; every value is passed through the names rule (bidi controls shown as
      // marks, right-to-left names isolated), as values are often names users chose.
      interpolation: { escapeValue: true, escape: plainName },
      returnNull: false,
    });
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
