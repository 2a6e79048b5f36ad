import { describe, expect, it } from 'vitest';
import { LANGUAGES, MESSAGES } from '@skyferry/contract';
import { PAGE_STRINGS } from '../../account-pages/strings.ts';
import { MAIL_EN } from './catalogue.ts';
import { ACCOUNT_MAIL_EN, ACCOUNT_MAIL_STRINGS, type AccountMailKey } from './account-catalogue.ts';
import { accountEmail } from './account-mail.ts';

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
const keys = Object.keys(ACCOUNT_MAIL_EN).sort() as AccountMailKey[];

describe('account mail catalogue', () => {
  it.each(LANGUAGES.filter((l) => l !== 'en'))(
    '%s has every key, the same placeholders, and real translations',
    (lang) => {
      const strings = ACCOUNT_MAIL_STRINGS[lang];
      expect(Object.keys(strings).sort()).toEqual(keys);
      for (const key of keys) {
        expect(strings[key].trim(), `${lang}.${key}`).not.toBe('');
        expect(placeholders(strings[key]), `${lang}.${key}`).toEqual(placeholders(ACCOUNT_MAIL_EN[key]));
        expect(strings[key], `${lang}.${key} is still English`).not.toBe(ACCOUNT_MAIL_EN[key]);
      }
    },
  );

  it('writes the reset e-mail with its link as text and as an escaped button, right to left in Arabic', () => {
    const link = 'https://sky.example/account/reset?token=sk_pr_abc&lang=ar';
    const mail = accountEmail({
      kind: 'password_reset',
      language: 'ar',
      email: 'a<b>@example.com',
      link,
      minutes: 60,
      appUrl: 'https://sky.example',
    });
    expect(mail.subject).toBe('تعيين كلمة مرور جديدة لـ Skyferry');
    expect(mail.text.split('\n')).toContain(link);
    expect(mail.html).toContain('dir="rtl"');
    expect(mail.html).toContain('a&lt;b&gt;@example.com');
    expect(mail.html).toContain(`href="${link.replace(/&/g, '&amp;')}"`);
    // A mail that reports a change carries no link.
    const told = accountEmail({ kind: 'email_changed', language: 'en', email: 'new@example.com', link, appUrl: 'x' });
    expect(told.text).not.toContain(link);
    expect(told.text).toContain('new@example.com');
  });

  it('spells "email" one way in every English text of the server: messages, account pages, e-mails', () => {
    const english = [
      ...Object.values(MESSAGES.en),
      ...Object.values(PAGE_STRINGS.en),
      ...Object.values(MAIL_EN),
      ...Object.values(ACCOUNT_MAIL_EN),
    ];
    expect(english.filter((text) => /e-mail/i.test(text))).toEqual([]);
  });
});
