import i18n from 'i18next';
import { initReactI18next } from 'react-i18next';
import { LANGUAGES, LANGUAGE_STORAGE_KEY, isRtl, plainName, type Language } from '@skyferry/contract';
import { rememberShellLanguage } from '../lib/shell-hints.ts';
import { initialLanguage, loadLanguage } from './load.ts';

export { initialLanguage, loadLanguage };

/** Adds a language's translations to i18next the first time it is chosen. */
async function ensureLanguage(lang: Language): Promise<void> {
  if (i18n.hasResourceBundle(lang, 'common')) return;
  const bundle = await loadLanguage(lang);
  for (const [ns, resources] of Object.entries(bundle)) i18n.addResourceBundle(lang, ns, resources, true, true);
}

function applyDocumentLanguage(lang: Language): void {
  if (typeof document === 'undefined') return;
  document.documentElement.lang = lang === 'br' ? 'pt-BR' : lang;
  document.documentElement.dir = isRtl(lang) ? 'rtl' : 'ltr';
  rememberShellLanguage(lang);
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
    const bundle = await loadLanguage(lang);
    await i18n.use(initReactI18next).init({
      resources: { [lang]: bundle },
      lng: lang,
      // Every language has every key: nothing falls back, so English is not loaded beside another.
      fallbackLng: false,
      supportedLngs: [...LANGUAGES],
      ns: Object.keys(bundle),
      defaultNS: 'common',
      // React escapes markup; every value is passed through the names rule (bidi controls shown as
      // marks, right-to-left names isolated), as values are often names users chose.
      interpolation: { escapeValue: true, escape: plainName },
      returnNull: false,
    });
    applyPluralLocales();
  } else {
    await ensureLanguage(lang);
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
  await ensureLanguage(lang);
  await i18n.changeLanguage(lang);
  applyDocumentLanguage(lang);
}

export { i18n };
