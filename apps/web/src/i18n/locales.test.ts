import { LANGUAGES } from '@skyferry/contract';
import { describe, expect, it } from 'vitest';
import { NAMESPACES, resources } from './resources.ts';
import { SAME_AS_ENGLISH } from './same-as-english.ts';

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

/**
 * A value may equal the English text when it is the same word in that language (listed in
 * `same-as-english.ts`, which any feature may extend) or when it is made only of names such as
 * "WebDAV", "SFTP", "S3", placeholders and punctuation. Anything else equal to English is an
 * untranslated copy.
 */
function mayEqualEnglish(english: string): boolean {
  if (SAME_AS_ENGLISH.has(english)) return true;
  return english
    .split(/\s+/)
    .every((word) => /^(\{\{\w+\}\}|[^\p{L}]*)$/u.test(word) || /^\p{L}.*(\p{Lu}|\d)/u.test(word));
}

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
            if (plural) expect(forms.has(`${base}_other`), `${lang}:${ns}:${base}_other is missing`).toBe(true);
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
              .filter(([key, english]) => mine.get(key) === english && !mayEqualEnglish(english))
              .map(([key]) => key);
            expect(copies).toEqual([]);
          });
        }
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
