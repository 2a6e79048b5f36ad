import { describe, expect, it } from 'vitest';
import { LANGUAGES } from '@skyferry/contract';
import { MAIL_EN, MAIL_STRINGS, MAY_MATCH_ENGLISH, mailText, type MailKey } from './catalogue.ts';

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
const keys = Object.keys(MAIL_EN).sort() as MailKey[];

describe('mail catalogue', () => {
  it.each(LANGUAGES.filter((l) => l !== 'en'))(
    '%s has every key, the same placeholders, and real translations',
    (lang) => {
      const strings = MAIL_STRINGS[lang];
      expect(Object.keys(strings).sort()).toEqual(keys);
      const allowed = new Set<MailKey>(MAY_MATCH_ENGLISH[lang] ?? []);
      for (const key of keys) {
        expect(strings[key].trim(), `${lang}.${key}`).not.toBe('');
        expect(placeholders(strings[key]), `${lang}.${key}`).toEqual(placeholders(MAIL_EN[key]));
        if (!allowed.has(key)) expect(strings[key], `${lang}.${key} is still English`).not.toBe(MAIL_EN[key]);
      }
    },
  );

  it('fills placeholders', () => {
    expect(mailText('de', 'intro', { name: 'Fotos' })).toBe('Ihre Übertragungsaufgabe „Fotos“ ist beendet.');
    expect(mailText('ja', 'duration_hms', { h: 1, m: 2, s: 3 })).toBe('1時間2分3秒');
  });
});
