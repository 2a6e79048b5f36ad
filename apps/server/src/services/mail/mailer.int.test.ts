import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMime, partOf } from '../../../test/support/mail.ts';
import { createMailer } from './mailer.ts';
import { transferFinishedEmail, type TransferSummary } from './transfer-finished.ts';

interface Received {
  from: string;
  to: string[];
  user: string | undefined;
  raw: string;
}

const summary: TransferSummary = {
  taskName: 'Fotos <2025> & Urlaub',
  taskType: 0,
  outcome: 'success',
  startedAt: Date.UTC(2026, 0, 2, 9, 0, 0),
  endedAt: Date.UTC(2026, 0, 2, 9, 0, 42),
  from: { cloud: 'Dropbox (jo@example.de)', paths: ['/Fotos'] },
  to: { cloud: 'S3 (archiv)', path: '/Sicherung' },
  added: 12,
  updated: 3,
  deleted: 1,
  failed: 0,
  bytesMoved: 10 * 1024 * 1024,
};

describe('mail delivery', () => {
  const received: Received[] = [];
  let server: SMTPServer;
  let port = 0;

  beforeAll(async () => {
    server = new SMTPServer({
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      authMethods: ['PLAIN', 'LOGIN'],
      onAuth(auth, _session, callback) {
        if (auth.username === 'skyferry' && auth.password === 's3cret p@ss')
          return callback(null, { user: auth.username });
        return callback(new Error('invalid credentials'));
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            user: typeof session.user === 'string' ? session.user : undefined,
            raw: Buffer.concat(chunks).toString('utf8'),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.server.address();
    port = typeof address === 'object' && address ? address.port : 0;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('delivers the transfer-finished e-mail to an SMTP server, authenticated, with text and HTML in the user language', async () => {
    const mailer = createMailer({
      smtpUrl: `smtp://skyferry:${encodeURIComponent('s3cret p@ss')}@127.0.0.1:${port}`,
      from: 'Skyferry <no-reply@skyferry.test>',
      outboxDir: '/nonexistent',
    });
    const content = transferFinishedEmail(summary, {
      language: 'de',
      timeZone: 'Europe/Berlin',
      appUrl: 'http://127.0.0.1:8080',
    });
    const sent = await mailer.send({ to: 'jo@example.de', ...content });
    mailer.close();
    expect(sent.deliveredTo).toBe('smtp');
    expect(received).toHaveLength(1);
    const got = received[0]!;
    expect(got).toMatchObject({ from: 'no-reply@skyferry.test', to: ['jo@example.de'], user: 'skyferry' });
    const mail = parseMime(got.raw);
    expect(mail.headers.get('subject')).toBe('[Skyferry] Erfolgreich: Fotos <2025> & Urlaub');
    expect(mail.headers.get('to')).toBe('jo@example.de');
    const text = partOf(mail, 'text/plain')?.body ?? '';
    const html = partOf(mail, 'text/html')?.body ?? '';
    for (const line of [
      'Ihre Übertragungsaufgabe „Fotos <2025> & Urlaub“ ist beendet.',
      'Aufgabe: Fotos <2025> & Urlaub',
      'Ergebnis: Erfolgreich',
      'Beginn: 2026/01/02 10:00:00 (Europe/Berlin)',
      'Ende: 2026/01/02 10:00:42 (Europe/Berlin)',
      'Dauer: 42 Sek.',
      'Von: Dropbox (jo@example.de) /Fotos',
      'Nach: S3 (archiv) /Sicherung',
      'Hinzugefügte Dateien: 12',
      'Aktualisierte Dateien: 3',
      'Gelöschte Dateien: 1',
      'Fehlgeschlagene Dateien: 0',
      'Übertragene Daten: 10.00 MB',
    ]) {
      expect(text.split('\n')).toContain(line);
    }
    expect(html).toContain('Fotos &lt;2025&gt; &amp; Urlaub');
    expect(html).toContain('Übertragene Daten');
    expect(html).toContain('10.00 MB');
  });

  it('refuses to send with wrong SMTP credentials', async () => {
    const mailer = createMailer({
      smtpUrl: `smtp://skyferry:wrong@127.0.0.1:${port}`,
      from: 'Skyferry <no-reply@skyferry.test>',
      outboxDir: '/nonexistent',
    });
    const before = received.length;
    await expect(mailer.send({ to: 'jo@example.de', subject: 's', text: 't', html: '<p>t</p>' })).rejects.toThrow();
    mailer.close();
    expect(received).toHaveLength(before);
  });

  it('without SMTP, writes a private .eml file to the outbox', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skyferry-outbox-'));
    try {
      const outbox = join(dir, 'outbox');
      const mailer = createMailer({ smtpUrl: undefined, from: 'Skyferry <no-reply@skyferry.test>', outboxDir: outbox });
      const content = transferFinishedEmail(summary, { language: 'ja', timeZone: 'Asia/Tokyo', appUrl: 'http://x' });
      const sent = await mailer.send({ to: 'jo@example.de', ...content });
      const files = readdirSync(outbox);
      expect(files).toHaveLength(1);
      expect(files[0]).toMatch(/\.eml$/);
      expect(sent.deliveredTo).toBe(join(outbox, files[0]!));
      expect(statSync(sent.deliveredTo).mode & 0o777).toBe(0o600);
      const mail = parseMime(readFileSync(sent.deliveredTo, 'utf8'));
      expect(mail.headers.get('subject')).toBe('【Skyferry】成功：Fotos <2025> & Urlaub');
      expect(partOf(mail, 'text/plain')?.body).toContain('開始: 2026/01/02 18:00:00 (Asia/Tokyo)');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
