import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailer } from './mailer.ts';
import { transferFinishedEmail, type TransferSummary } from './transfer-finished.ts';

interface Received {
  from: string;
  to: string[];
  user: string | undefined;
  raw: string;
}

interface Part {
  headers: Map<string, string>;
  body: string;
  parts: Part[];
}

/** Just enough MIME to read what nodemailer sends: headers, encoded words, multipart, QP and base64. */
function parseMime(raw: string): Part {
  const split = raw.search(/\r?\n\r?\n/);
  const head = raw.slice(0, split).replace(/\r?\n[ \t]+/g, ' ');
  const rest = raw.slice(split).replace(/^\r?\n\r?\n/, '');
  const headers = new Map<string, string>();
  for (const line of head.split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i > 0) headers.set(line.slice(0, i).toLowerCase(), decodeWords(line.slice(i + 1).trim()));
  }
  const type = headers.get('content-type') ?? 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (type.startsWith('multipart/') && boundary) {
    const chunks = rest.split(`--${boundary}`).slice(1, -1);
    return { headers, body: '', parts: chunks.map((c) => parseMime(c.replace(/^\r?\n/, ''))) };
  }
  const encoding = (headers.get('content-transfer-encoding') ?? '7bit').toLowerCase();
  let bytes: Buffer;
  if (encoding === 'base64') bytes = Buffer.from(rest.replace(/\s+/g, ''), 'base64');
  else if (encoding === 'quoted-printable') {
    const soft = rest.replace(/=\r?\n/g, '');
    bytes = Buffer.from(
      soft.replace(/=([0-9A-F]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16))),
      'latin1',
    );
  } else bytes = Buffer.from(rest, 'utf8');
  return { headers, body: bytes.toString('utf8').replace(/\r\n/g, '\n'), parts: [] };
}

function decodeWords(value: string): string {
  return value.replace(/=\?utf-8\?([bq])\?([^?]*)\?=\s*/gi, (_m, kind: string, text: string) => {
    if (kind.toLowerCase() === 'b') return Buffer.from(text, 'base64').toString('utf8');
    const bytes = text
      .replace(/_/g, ' ')
      .replace(/=([0-9A-F]{2})/gi, (_x, h: string) => String.fromCharCode(parseInt(h, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  });
}

const partOf = (mail: Part, type: string): Part | undefined => {
  if ((mail.headers.get('content-type') ?? '').startsWith(type)) return mail;
  for (const p of mail.parts) {
    const found = partOf(p, type);
    if (found) return found;
  }
  return undefined;
};

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
