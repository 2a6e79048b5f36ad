import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SMTPServer } from 'smtp-server';

/** One MIME part: headers (lower-case names, encoded words decoded), its decoded body, its parts. */
export interface MimePart {
  headers: Map<string, string>;
  body: string;
  parts: MimePart[];
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

/** Just enough MIME to read what nodemailer sends: headers, encoded words, multipart, QP and base64. */
export function parseMime(raw: string): MimePart {
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

/** The first part of a type ("text/plain", "text/html") in a message. */
export function partOf(mail: MimePart, type: string): MimePart | undefined {
  if ((mail.headers.get('content-type') ?? '').startsWith(type)) return mail;
  for (const p of mail.parts) {
    const found = partOf(p, type);
    if (found) return found;
  }
  return undefined;
}

/** A message as a test reads it. */
export interface ReadMail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

function readable(raw: string, to?: string): ReadMail {
  const mail = parseMime(raw);
  return {
    to: to ?? mail.headers.get('to') ?? '',
    subject: mail.headers.get('subject') ?? '',
    text: partOf(mail, 'text/plain')?.body ?? '',
    html: partOf(mail, 'text/html')?.body ?? '',
  };
}

/** Every message in a data dir's outbox, oldest first (the .eml files Skyferry writes without SMTP_URL). */
export function outbox(dataDir: string): ReadMail[] {
  const dir = join(dataDir, 'outbox');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.eml'))
    .sort()
    .map((f) => readable(readFileSync(join(dir, f), 'utf8')));
}

/** Waits until `find` returns a message (mail may leave after the answer), failing after `timeoutMs`. */
export async function waitForMail(
  read: () => ReadMail[],
  find: (mail: ReadMail) => boolean,
  timeoutMs = 10_000,
): Promise<ReadMail> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const found = read().find(find);
    if (found) return found;
    if (Date.now() > end) throw new Error('no such e-mail arrived');
    await sleep(50);
  }
}

/** The first http(s) link in a text. */
export function linkIn(text: string): string {
  const link = /https?:\/\/\S+/.exec(text)?.[0];
  if (!link) throw new Error(`no link in: ${text}`);
  return link;
}

/** A real SMTP server on 127.0.0.1 (smtp-server) that keeps what it receives. */
export class TestSmtp {
  private readonly server: SMTPServer;
  /** `smtp://127.0.0.1:<port>`, for SMTP_URL. */
  readonly url: string;
  /** What arrived, in order. */
  readonly received: ReadMail[];

  private constructor(server: SMTPServer, url: string, received: ReadMail[]) {
    this.server = server;
    this.url = url;
    this.received = received;
  }

  static async start(): Promise<TestSmtp> {
    const received: ReadMail[] = [];
    const server = new SMTPServer({
      disabledCommands: ['STARTTLS', 'AUTH'],
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          const to = session.envelope.rcptTo.map((r) => r.address).join(', ');
          received.push(readable(Buffer.concat(chunks).toString('utf8'), to));
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.server.address();
    return new TestSmtp(
      server,
      `smtp://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`,
      received,
    );
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
