import { randomUUID } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import nodemailer from 'nodemailer';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Where answers go (the sender of a support ticket), when not the From address. */
  replyTo?: string;
  /** Files sent along (a support ticket's log files and screenshots). */
  attachments?: Array<{ filename: string; content: Buffer; contentType: string }>;
}

export interface SentMail {
  messageId: string;
  /** "smtp" or the .eml file written to the outbox. */
  deliveredTo: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<SentMail>;
  close(): void;
}

export interface MailerOptions {
  /** smtp:// or smtps:// URL with optional user:password; absent: write .eml files to `outboxDir`. */
  smtpUrl: string | undefined;
  from: string;
  outboxDir: string;
}

/**
 * Sends e-mail through SMTP (`SMTP_URL`), or, without it, writes each message as an .eml file to
 * the outbox folder of the data dir (readable by any mail client; kept private to the server user).
 */
export function createMailer(options: MailerOptions): Mailer {
  if (options.smtpUrl) {
    const transport = nodemailer.createTransport(options.smtpUrl);
    return {
      async send(message) {
        const info = await transport.sendMail({ from: options.from, ...message });
        return { messageId: String(info.messageId), deliveredTo: 'smtp' };
      },
      close() {
        transport.close();
      },
    };
  }
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    async send(message) {
      const info = await transport.sendMail({ from: options.from, ...message });
      await mkdir(options.outboxDir, { recursive: true, mode: 0o700 });
      const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomUUID().slice(0, 8)}.eml`;
      const file = join(options.outboxDir, name);
      // Written under a temporary name first so a reader never sees half a message.
      await writeFile(`${file}.tmp`, info.message, { mode: 0o600 });
      await rename(`${file}.tmp`, file);
      return { messageId: String(info.messageId), deliveredTo: file };
    },
    close() {
      transport.close();
    },
  };
}
