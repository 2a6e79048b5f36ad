import { describe, expect, it } from 'vitest';
import { LANGUAGES } from '@skyferry/contract';
import {
  SUPPORT_MAIL_EN,
  SUPPORT_MAIL_STRINGS,
  ticketAckEmail,
  ticketReplyEmail,
  type SupportMailKey,
} from './support-mail.ts';

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
const keys = Object.keys(SUPPORT_MAIL_EN).sort() as SupportMailKey[];

describe('support mail catalogue', () => {
  it.each(LANGUAGES.filter((l) => l !== 'en'))(
    '%s has every key, the same placeholders, and real translations',
    (lang) => {
      const strings = SUPPORT_MAIL_STRINGS[lang];
      expect(Object.keys(strings).sort()).toEqual(keys);
      for (const key of keys) {
        expect(strings[key].trim(), `${lang}.${key}`).not.toBe('');
        expect(placeholders(strings[key]), `${lang}.${key}`).toEqual(placeholders(SUPPORT_MAIL_EN[key]));
        expect(strings[key], `${lang}.${key} is still English`).not.toBe(SUPPORT_MAIL_EN[key]);
      }
    },
  );

  it('quotes the sender’s text escaped, keeps the subject on one line, right to left in Arabic', () => {
    const mail = ticketAckEmail({
      language: 'ar',
      title: 'a\r\nBcc: x@evil.example',
      contents: '<img src=x onerror=alert(1)>',
      appUrl: 'https://sky.example',
    });
    expect(mail.subject).not.toMatch(/[\r\n]/);
    expect(mail.html).toContain('dir="rtl"');
    expect(mail.html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(mail.html).not.toContain('<img');
    expect(mail.text).toContain('<img src=x onerror=alert(1)>');
    const reply = ticketReplyEmail({
      language: 'ja',
      title: 't',
      reply: 'line 1\nline 2',
      appUrl: 'https://sky.example',
    });
    expect(reply.subject).toBe('メッセージへの回答: t');
    expect(reply.text).toContain('line 1\nline 2');
  });

  it('spells "email" one way in English', () => {
    expect(Object.values(SUPPORT_MAIL_EN).filter((text) => /e-mail/i.test(text))).toEqual([]);
  });
});
