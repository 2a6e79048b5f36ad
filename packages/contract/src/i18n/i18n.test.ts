import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FORBIDDEN_NAME_CHARS, LANGUAGES, MESSAGES, message, type MessageKey } from '../index.ts';
import { en } from './en.ts';

/**
 * Every server message exists in every language, with the same placeholders, and is really
 * translated. Adding a key to en.ts means adding a real translation to every other file here.
 */

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
const keys = Object.keys(en).sort() as MessageKey[];
const others = LANGUAGES.filter((l) => l !== 'en');

/** At most this many messages of a language may read exactly as in English (short, international words). */
const MAX_IDENTICAL_TO_ENGLISH = 2;

describe('server messages', () => {
  it('has a message file for every language and no other', () => {
    const files = readdirSync(import.meta.dirname)
      .filter((f) => /^[a-z]{2}\.ts$/.test(f))
      .map((f) => f.slice(0, 2))
      .sort();
    expect(files).toEqual([...LANGUAGES].sort());
    expect(Object.keys(MESSAGES).sort()).toEqual([...LANGUAGES].sort());
  });

  it.each(others)('%s has exactly the keys of en', (lang) => {
    expect(Object.keys(MESSAGES[lang]).sort()).toEqual(keys);
  });

  it.each(others)('%s keeps the placeholders of every message', (lang) => {
    for (const key of keys) {
      expect(placeholders(MESSAGES[lang][key]), `${lang}.${key}`).toEqual(placeholders(en[key]));
    }
  });

  it.each(LANGUAGES)('%s has no empty message', (lang) => {
    for (const key of keys) expect(MESSAGES[lang][key].trim(), `${lang}.${key}`).not.toBe('');
  });

  it.each(others)(`%s is translated (at most ${MAX_IDENTICAL_TO_ENGLISH} messages read as in English)`, (lang) => {
    const same = keys.filter((key) => MESSAGES[lang][key] === en[key]);
    expect(same.length, `${lang} messages still in English: ${same.join(', ')}`).toBeLessThanOrEqual(
      MAX_IDENTICAL_TO_ENGLISH,
    );
  });

  it('leaves no translation marked pending', () => {
    for (const lang of LANGUAGES) {
      const text = readFileSync(join(import.meta.dirname, `${lang}.ts`), 'utf8');
      expect(text, lang).not.toMatch(/PENDING|TODO|FIXME/i);
    }
  });

  it.each(LANGUAGES)('%s lists every forbidden name character', (lang) => {
    const text = MESSAGES[lang].name_forbidden_chars;
    for (const ch of FORBIDDEN_NAME_CHARS) expect(text, `${lang}: ${ch}`).toContain(ch);
  });

  it('keeps the wording of the spec in English', () => {
    expect(en.cloud_auth_expired).toBe('Authorization has expired, please reauthorize.');
    expect(en.cloud_credentials_invalid).toBe('Your Bucket Name, ID or key is incorrect, please try again');
    expect(en.cloud_already_bound).toBe('This cloud drive has been bound');
    expect(en.insufficient_space).toBe('Insufficient space on {cloud_name}!');
    expect(en.traffic_needed).toBe('Not enough traffic available, need {size} in total');
    expect(en.cloud_operation_error).toBe('Cloud Drive operation error! [{code}]');
    expect(en.select_files_first).toBe('Please select files first');
    expect(en.unknown_error).toBe('An unknown error occurred');
    expect(en.email_format).toBe('Email format error.');
  });
});

describe('message()', () => {
  it('fills placeholders with strings and numbers', () => {
    expect(message('en', 'route_not_found', { method: 'GET', path: '/api/x' })).toBe(
      'There is no such API call: GET /api/x',
    );
    expect(message('en', 'confirm_deletions', { count: 3, total: 5 })).toBe(
      'This sync would delete 3 of 5 files on the target. Confirm to continue.',
    );
  });

  it('speaks the requested language', () => {
    expect(message('de', 'route_not_found', { method: 'GET', path: '/api/x' })).toContain('GET /api/x');
    expect(message('de', 'route_not_found', { method: 'GET', path: '/api/x' })).not.toBe(
      message('en', 'route_not_found', { method: 'GET', path: '/api/x' }),
    );
    expect(message('ja', 'insufficient_space', { cloud_name: 'Box' })).toContain('Box');
  });

  it('leaves a placeholder it has no value for, and ignores extra values', () => {
    expect(message('en', 'insufficient_space')).toBe('Insufficient space on {cloud_name}!');
    expect(message('en', 'not_found', { unused: 1 })).toBe('Not found.');
  });

  it('does not interpret replacement patterns in values', () => {
    expect(message('en', 'field_required', { field: '$& $1' })).toBe('$& $1 is required.');
  });
});
