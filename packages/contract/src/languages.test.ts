import { describe, expect, it } from 'vitest';
import {
  DEFAULT_LANGUAGE,
  HEADERS,
  LANGUAGES,
  LANGUAGE_NAMES,
  LANGUAGE_STORAGE_KEY,
  isRtl,
  languageFromHeader,
  pickLanguage,
  toLanguage,
} from './index.ts';

describe('languages', () => {
  it('are en, ar, br, de, es, fr, it, ja, ko, nl with English the default', () => {
    expect(LANGUAGES).toEqual(['en', 'ar', 'br', 'de', 'es', 'fr', 'it', 'ja', 'ko', 'nl']);
    expect(DEFAULT_LANGUAGE).toBe('en');
  });
  it('keep the choice under the local-storage key "Language"', () => {
    expect(LANGUAGE_STORAGE_KEY).toBe('Language');
  });
  it('have a native name each', () => {
    expect(Object.keys(LANGUAGE_NAMES).sort()).toEqual([...LANGUAGES].sort());
    expect(LANGUAGE_NAMES.de).toBe('Deutsch');
    expect(LANGUAGE_NAMES.ja).toBe('日本語');
    for (const name of Object.values(LANGUAGE_NAMES)) expect(name).toMatch(/\S/);
  });
  it('are right-to-left only for Arabic', () => {
    expect(LANGUAGES.filter(isRtl)).toEqual(['ar']);
  });
});

describe('toLanguage', () => {
  it.each([
    ['en', 'en'],
    ['en-US', 'en'],
    ['EN-gb', 'en'],
    ['de_DE', 'de'],
    ['fr-CA', 'fr'],
    ['ja-JP', 'ja'],
    ['ko', 'ko'],
    ['nl-BE', 'nl'],
    ['es-419', 'es'],
    ['it', 'it'],
    ['ar-EG', 'ar'],
    ['pt', 'br'],
    ['pt-BR', 'br'],
    ['pt-PT', 'br'],
    ['PT', 'br'],
    ['br', 'br'],
    [' de ', 'de'],
  ] as const)('%j is %s', (tag, lang) => {
    expect(toLanguage(tag)).toBe(lang);
  });
  it('is undefined for languages we do not have', () => {
    for (const tag of ['zh-CN', 'ru', 'xx', '', '*', null, undefined])
      expect(toLanguage(tag), String(tag)).toBeUndefined();
  });
});

describe('pickLanguage: stored, then browser, then en', () => {
  it('prefers the stored choice', () => {
    expect(pickLanguage('de', ['fr-FR', 'ja'])).toBe('de');
    expect(pickLanguage('br', ['en'])).toBe('br');
  });
  it('falls back to the first supported browser language when nothing usable is stored', () => {
    expect(pickLanguage(null, ['fr-FR', 'ja'])).toBe('fr');
    expect(pickLanguage(undefined, ['zh-CN', 'ru', 'ja-JP', 'de'])).toBe('ja');
    expect(pickLanguage('klingon', ['ko-KR'])).toBe('ko');
    expect(pickLanguage('', ['pt-BR'])).toBe('br');
  });
  it('ends with English', () => {
    expect(pickLanguage(null, [])).toBe('en');
    expect(pickLanguage('xx', ['zh', 'ru'])).toBe('en');
  });
});

describe('languageFromHeader', () => {
  it.each([
    [undefined, 'en'],
    ['', 'en'],
    ['de', 'de'],
    ['de-DE,de;q=0.9,en;q=0.8', 'de'],
    ['en-GB,en;q=0.9,ar;q=0.8', 'en'],
    ['fr;q=0.5, de;q=0.9', 'de'],
    ['fr; q=0.5, ja ;q=0.7', 'ja'],
    ['xx, pt-BR;q=0.8', 'br'],
    ['zh-CN,zh;q=0.9', 'en'],
    ['*', 'en'],
    ['es, it', 'es'],
    ['it;q=0.8, es;q=0.8', 'it'],
    ['de;q=0, fr;q=0.1', 'fr'],
    ['de;q=0', 'en'],
    ['ko;q=abc, nl', 'nl'],
    ['ja;Q=0.2, ko;q=0.3', 'ko'],
    ['nl;level=1;q=0.4, es;q=0.3', 'nl'],
  ] as const)('%j picks %s', (header, lang) => {
    expect(languageFromHeader(header)).toBe(lang);
  });
});

describe('request headers (spec section 7)', () => {
  it('names every header of the main client', () => {
    expect(Object.keys(HEADERS).sort()).toEqual(
      [
        'authorization',
        'tempAuthorization',
        'language',
        'timezone',
        'platform',
        'pid',
        'timestamp',
        'version',
        'tempDebug',
        'uid',
        'email',
        'uuid',
      ].sort(),
    );
  });
  it('uses distinct lower-case header names', () => {
    const names = Object.values(HEADERS);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[a-z][a-z-]*$/);
    expect(HEADERS.authorization).toBe('authorization');
  });
});
