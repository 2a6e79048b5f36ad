import { describe, expect, it } from 'vitest';
import { LANGUAGES } from '@skyferry/contract';
import { PAGE_STRINGS } from './strings.ts';

/**
 * The account pages (sign in, sign up, sign out) read in every language of the product: every text
 * present and really translated. A text may equal the English one only where that language uses
 * the English word as it is (listed here per language).
 */
const SAME_AS_ENGLISH: Partial<Record<string, readonly string[]>> = {
  // Italian writes "Email" and "Password".
  it: ['email', 'password'],
};

describe('account page texts', () => {
  const en = PAGE_STRINGS.en;
  const keys = Object.keys(en).sort();

  it('exist for every language with the keys of English, none empty', () => {
    expect(Object.keys(PAGE_STRINGS).sort()).toEqual([...LANGUAGES].sort());
    for (const lang of LANGUAGES) {
      const texts = PAGE_STRINGS[lang] as unknown as Record<string, string>;
      expect(Object.keys(texts).sort(), lang).toEqual(keys);
      for (const key of keys) expect(texts[key]?.trim(), `${lang}.${key}`).not.toBe('');
    }
  });

  it.each(LANGUAGES.filter((l) => l !== 'en'))('%s is translated, not copied from English', (lang) => {
    const texts = PAGE_STRINGS[lang] as unknown as Record<string, string>;
    const english = en as unknown as Record<string, string>;
    const allowed = new Set(SAME_AS_ENGLISH[lang] ?? []);
    const copies = keys.filter((key) => texts[key] === english[key] && !allowed.has(key));
    expect(copies).toEqual([]);
  });
});
