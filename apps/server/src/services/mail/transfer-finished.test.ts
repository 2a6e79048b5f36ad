import { describe, expect, it } from 'vitest';
import { formatDuration, transferFinishedEmail, type TransferSummary } from './transfer-finished.ts';

const summary: TransferSummary = {
  taskName: 'Photos to Backup',
  taskType: 0,
  outcome: 'partial',
  startedAt: Date.UTC(2026, 2, 29, 0, 30, 0), // 01:30 in Berlin, before the clocks go forward
  endedAt: Date.UTC(2026, 2, 29, 1, 32, 5), // 03:32:05 in Berlin, after
  from: { cloud: 'Google Drive (ann@example.com)', paths: ['/Photos', '/Camera'] },
  to: { cloud: 'WebDAV (nas.local)', path: '/Backup' },
  added: 1234,
  updated: 5,
  deleted: 0,
  failed: 2,
  bytesMoved: 1.5 * 1024 ** 3,
};
const locale = { language: 'en' as const, timeZone: 'Europe/Berlin', appUrl: 'https://sky.example.com' };

describe('transfer-finished e-mail', () => {
  it('tells every figure in plain text, in the user time zone', () => {
    const mail = transferFinishedEmail(summary, locale);
    expect(mail.subject).toBe('[Skyferry] Partially Success: Photos to Backup');
    expect(mail.text).toContain('Your transfer task "Photos to Backup" has ended.');
    for (const line of [
      'Task: Photos to Backup',
      'Type: Migration',
      'Result: Partially Success',
      'Start: 2026/03/29 01:30:00 (Europe/Berlin)',
      'End: 2026/03/29 03:32:05 (Europe/Berlin)',
      'Duration: 1 h 2 min 5 s',
      'From: Google Drive (ann@example.com) /Photos, /Camera',
      'To: WebDAV (nas.local) /Backup',
      'Files added: 1,234',
      'Files updated: 5',
      'Files deleted: 0',
      'Files failed: 2',
      'Data moved: 1.50 GB',
      'Open Skyferry: https://sky.example.com',
    ]) {
      expect(mail.text.split('\n')).toContain(line);
    }
    expect(mail.text).toContain('see which files failed');
  });

  it('leaves out the failed-files hint when nothing failed', () => {
    const mail = transferFinishedEmail({ ...summary, outcome: 'success', failed: 0 }, locale);
    expect(mail.subject).toBe('[Skyferry] Success: Photos to Backup');
    expect(mail.text).not.toContain('see which files failed');
  });

  it('speaks the user language, right to left for Arabic', () => {
    const de = transferFinishedEmail({ ...summary, taskType: 1, outcome: 'failed' }, { ...locale, language: 'de' });
    expect(de.subject).toBe('[Skyferry] Fehlgeschlagen: Photos to Backup');
    expect(de.text).toContain('Art: Synchronisierung');
    expect(de.text).toContain('Hinzugefügte Dateien: 1.234');
    expect(de.text).toContain('Dauer: 1 Std. 2 Min. 5 Sek.');
    expect(de.html).toContain('lang="de" dir="ltr"');
    const ja = transferFinishedEmail({ ...summary, outcome: 'canceled' }, { ...locale, language: 'ja' });
    expect(ja.subject).toBe('【Skyferry】キャンセル済み：Photos to Backup');
    expect(ja.text).toContain('所要時間: 1時間2分5秒');
    const ar = transferFinishedEmail(summary, { ...locale, language: 'ar' });
    expect(ar.html).toContain('lang="ar" dir="rtl"');
    expect(ar.text).toContain('النتيجة: نجحت جزئيًا');
  });

  it('escapes what the user typed in the HTML part and keeps the subject on one line', () => {
    const mail = transferFinishedEmail({ ...summary, taskName: '<img src=x onerror=alert(1)>\r\nBcc: x@y' }, locale);
    expect(mail.html).not.toContain('<img');
    expect(mail.html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(mail.subject).not.toMatch(/[\r\n]/);
    expect(mail.html).toContain('<th');
    expect(mail.html).toContain('1.50 GB');
  });

  it('formats durations by their largest unit', () => {
    expect(formatDuration(5_000, 'en')).toBe('5 s');
    expect(formatDuration(65_000, 'fr')).toBe('1 min 5 s');
    expect(formatDuration(3_600_000, 'ko')).toBe('1시간 0분 0초');
  });
});
