import { LANGUAGES, type Language } from '@skyferry/contract';
import { beforeAll, describe, expect, it } from 'vitest';
import { i18n, initI18n, PLURAL_LOCALE } from './index.ts';
import { NAMESPACES, resources } from './resources.ts';
import { mayEqualEnglish } from './same-as-english.ts';

type Tree = Record<string, unknown>;

function flatten(tree: Tree, prefix = ''): Map<string, string> {
  const out = new Map<string, string>();
  for (const [key, value] of Object.entries(tree)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (value !== null && typeof value === 'object') for (const [k, v] of flatten(value as Tree, path)) out.set(k, v);
    else out.set(path, value as string);
  }
  return out;
}

const placeholders = (text: string) => [...text.matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1]).sort();

/** A value with nothing to translate: only placeholders, digits, spaces and punctuation ("{{n}} / {{max}}"). */
const nothingToTranslate = (text: string) => !/\p{L}/u.test(text.replace(/\{\{\s*\w+\s*\}\}/g, ''));

/** The plural categories i18next uses for a language (Intl's, by the language's real locale). */
const pluralCategories = (lang: Language) =>
  new Intl.PluralRules(PLURAL_LOCALE[lang] ?? lang).resolvedOptions().pluralCategories.slice().sort();

const en = Object.fromEntries(NAMESPACES.map((ns) => [ns, flatten(resources.en?.[ns] as Tree)]));

/** i18next plural forms: `key_one`, `key_other`... Languages have different sets of them. */
const PLURAL = /_(zero|one|two|few|many|other)$/;
const baseKey = (key: string) => key.replace(PLURAL, '');

/** Keys grouped by their base (a plural group or a single key), with every form's text. */
function groups(table: Map<string, string>): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  for (const [key, value] of table) {
    const base = baseKey(key);
    if (!out.has(base)) out.set(base, new Map());
    out.get(base)?.set(key, value);
  }
  return out;
}

describe('translations', () => {
  it('has the shell namespaces and every language', () => {
    expect(NAMESPACES).toEqual(
      expect.arrayContaining(['common', 'shell', 'auth', 'startup', 'messages', 'guide', 'home', 'settings']),
    );
    expect(Object.keys(resources).sort()).toEqual([...LANGUAGES].sort());
  });

  for (const lang of LANGUAGES) {
    describe(lang, () => {
      for (const ns of NAMESPACES) {
        it(`${ns}: same keys as English, every value a non-empty string with the same placeholders`, () => {
          const tree = resources[lang]?.[ns] as Tree | undefined;
          expect(tree, `${lang}/${ns}.json is missing`).toBeDefined();
          const mine = groups(flatten(tree ?? {}));
          const reference = groups(en[ns] ?? new Map<string, string>());
          expect([...mine.keys()].sort()).toEqual([...reference.keys()].sort());
          for (const [base, englishForms] of reference) {
            const forms = mine.get(base) ?? new Map<string, string>();
            const plural = [...englishForms.keys()].some((k) => PLURAL.test(k));
            if (plural) {
              // Exactly the forms the language's plural rules pick from: Arabic's six, Japanese's one.
              const own = [...forms.keys()].map((k) => PLURAL.exec(k)?.[1] ?? '(none)').sort();
              expect(own, `${lang}:${ns}:${base} plural forms`).toEqual(pluralCategories(lang));
            }
            const allowed = new Set([...englishForms.values()].flatMap(placeholders));
            for (const [key, value] of forms) {
              expect(typeof value === 'string' && value.trim() !== '', `${lang}:${ns}:${key} is empty`).toBe(true);
              if (plural) {
                // A plural form may leave out {{count}} ("one file"), but brings no placeholder of its own.
                for (const p of placeholders(value)) expect(allowed.has(p), `${lang}:${ns}:${key} {{${p}}}`).toBe(true);
              } else {
                expect(placeholders(value), `${lang}:${ns}:${key} placeholders`).toEqual(
                  placeholders(englishForms.get(key) ?? ''),
                );
              }
            }
          }
        });

        if (lang !== 'en') {
          it(`${ns}: translated, not copied from English`, () => {
            const mine = flatten((resources[lang]?.[ns] as Tree | undefined) ?? {});
            const copies = [...(en[ns] ?? new Map<string, string>())]
              .filter(
                ([key, english]) =>
                  mine.get(key) === english && !nothingToTranslate(english) && !mayEqualEnglish(lang, english),
              )
              .map(([key]) => `${key}: ${mine.get(key) ?? ''}`);
            expect(copies).toEqual([]);
          });
        }

        it(`${ns}: no "(s)"-style plurals, no letter glued to an opening bracket`, () => {
          const bad = [...flatten((resources[lang]?.[ns] as Tree | undefined) ?? {})]
            .filter(
              ([, text]) =>
                /\p{L}\((s|e|es|en|n|ns|i|e\)\(s)\)/u.test(text) ||
                /\p{L}\/(e|i|s|en)\b/u.test(text) ||
                /\p{Script=Latin}\(/u.test(text),
            )
            .map(([key, text]) => `${key}: ${text}`);
          expect(bad).toEqual([]);
        });
      }
    });
  }
});

/** Sources of the app, to find the translation keys the code uses. */
const sources = import.meta.glob<string>(['../**/*.{ts,tsx}', '!../**/*.test.{ts,tsx}', '!../test/**'], {
  query: '?raw',
  import: 'default',
  eager: true,
});

describe('English wording', () => {
  const all = NAMESPACES.flatMap((ns) => [...(en[ns] ?? new Map<string, string>())].map(([k, v]) => [`${ns}:${k}`, v]));

  it('spells "email" one way and asks "Are you sure you want to", never "Are you sure to"', () => {
    expect(all.filter(([, v]) => /e-mail/i.test(v ?? ''))).toEqual([]);
    expect(all.filter(([, v]) => /are you sure to\b/i.test(v ?? ''))).toEqual([]);
    expect(all.filter(([, v]) => /\bAudios\b/.test(v ?? ''))).toEqual([]);
  });

  it('counts things through plural forms: a value naming a count of things is a plural group', () => {
    // A count before a plural noun ("3 items", "1 items") must come from key_one / key_other.
    const counted = all.filter(
      ([key, v]) => /\{\{(count|n)\}\} (\p{L}+ )?\p{L}+s\b/u.test(v ?? '') && !PLURAL.test(key ?? ''),
    );
    expect(counted).toEqual([]);
  });
});

describe('plural forms through i18next', () => {
  beforeAll(async () => {
    await initI18n('en');
    for (const lang of LANGUAGES)
      for (const ns of NAMESPACES) i18n.addResourceBundle(lang, ns, resources[lang]?.[ns] ?? {}, true, true);
  });

  it('picks each language’s own form: Arabic two and few, Brazilian Portuguese one (not Breton), French many', async () => {
    const t = (lang: string, count: number) => i18n.getFixedT(lang, 'explorer')('deleted', { count });
    expect(t('en', 1)).toBe('Deleted 1 item.');
    expect(t('en', 3)).toBe('Deleted 3 items.');
    expect(t('br', 1)).toBe('1 item excluído.');
    expect(t('br', 2)).toBe('2 itens excluídos.');
    expect(t('ar', 2)).toBe('تم حذف عنصرين.');
    expect(t('ar', 5)).toBe('تم حذف 5 عناصر.');
    expect(t('ar', 11)).toBe('تم حذف 11 عنصرًا.');
    expect(t('fr', 1)).toBe('1 élément supprimé.');
    expect(t('fr', 1_000_000)).toBe('1000000 éléments supprimés.');
    expect(t('ja', 1)).toBe('1 件を削除しました。');
  });
});

describe('translation keys used in the code', () => {
  it('exist in English (and so, by the tests above, in every language)', () => {
    const missing: string[] = [];
    let used = 0;
    const exists = (ns: string, key: string) => {
      const table = en[ns];
      return table !== undefined && (table.has(key) || table.has(`${key}_other`));
    };
    for (const [file, text] of Object.entries(sources)) {
      // The namespaces `t` is bound to in this file: useTranslation('ns' | ['a', 'b']) or getFixedT(_, 'ns').
      const bound = [
        ...[...text.matchAll(/useTranslation\(\s*'([\w-]+)'/g)].map((m) => m[1] ?? ''),
        ...[...text.matchAll(/useTranslation\(\s*\[([^\]]*)\]/g)].flatMap((m) =>
          [...(m[1] ?? '').matchAll(/'([\w-]+)'/g)].map((x) => x[1] ?? ''),
        ),
        ...[...text.matchAll(/getFixedT\([^,]*,\s*'([\w-]+)'/g)].map((m) => m[1] ?? ''),
      ];
      if (/useTranslation\(\s*\)/.test(text)) bound.push('common');
      for (const match of text.matchAll(/\bt\(\s*'([\w.-]+(?::[\w.-]+)?)'/g)) {
        const raw = match[1] ?? '';
        if (raw.includes(':')) {
          const [ns, key] = raw.split(':') as [string, string];
          used += 1;
          if (!exists(ns, key)) missing.push(`${file}: ${raw}`);
        } else if (bound.length > 0) {
          // Where `t` comes from elsewhere (a parameter), the file cannot say its namespace: not checked.
          used += 1;
          if (!bound.some((ns) => exists(ns, raw))) missing.push(`${file}: ${bound.join('|')}:${raw}`);
        }
      }
    }
    expect(missing).toEqual([]);
    expect(used).toBeGreaterThan(150);
  });
});
