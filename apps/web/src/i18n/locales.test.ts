import { LANGUAGES } from '@skyferry/contract';
import { describe, expect, it } from 'vitest';
import { NAMESPACES, resources } from './index.ts';

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
 * Values that are the same word in another language (brand names, file formats, loanwords used by
 * that language's own software) may equal the English text. Anything else equal to English is an
 * untranslated copy.
 */
const SAME_AS_ENGLISH_ALLOWED = new Set([
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
  'Photos',
  'Videos',
  'Tip',
  'Later',
  'Version {{version}}',
  '© {{year}} Skyferry',
  '{{n}} / {{max}}',
  'Hallo',
]);

const en = Object.fromEntries(NAMESPACES.map((ns) => [ns, flatten(resources.en?.[ns] as Tree)]));

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
          const mine = flatten(tree ?? {});
          const reference = en[ns] ?? new Map<string, string>();
          expect([...mine.keys()].sort()).toEqual([...reference.keys()].sort());
          for (const [key, english] of reference) {
            const value = mine.get(key);
            expect(typeof value === 'string' && value.trim() !== '', `${lang}:${ns}:${key} is empty`).toBe(true);
            expect(placeholders(value ?? ''), `${lang}:${ns}:${key} placeholders`).toEqual(placeholders(english));
          }
        });

        if (lang !== 'en') {
          it(`${ns}: translated, not copied from English`, () => {
            const mine = flatten((resources[lang]?.[ns] as Tree | undefined) ?? {});
            const copies = [...(en[ns] ?? new Map<string, string>())]
              .filter(([key, english]) => mine.get(key) === english && !SAME_AS_ENGLISH_ALLOWED.has(english))
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
    for (const [file, text] of Object.entries(sources)) {
      const fileNs = /useTranslation\(\s*'([\w-]+)'\s*\)/.exec(text)?.[1] ?? 'common';
      for (const match of text.matchAll(/\bt\(\s*'([\w.-]+(?::[\w.-]+)?)'/g)) {
        const raw = match[1] ?? '';
        const [ns, key] = raw.includes(':') ? (raw.split(':') as [string, string]) : [fileNs, raw];
        used += 1;
        const table = en[ns];
        if (!table) {
          missing.push(`${file}: ${raw} (no namespace ${ns})`);
          continue;
        }
        // A key may name a subtree only when it is used with returnObjects; plain use needs a leaf.
        if (!table.has(key)) missing.push(`${file}: ${ns}:${key}`);
      }
    }
    expect(missing).toEqual([]);
    expect(used).toBeGreaterThan(150);
  });
});
