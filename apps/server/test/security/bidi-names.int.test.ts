import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasBidiControls, type CreateTaskData } from '@skyferry/contract';
import { startTestApp, type TestApp } from '../support/app.ts';
import { caller, connectLocal, waitForState, writeTree } from '../support/tasks.ts';

/**
 * Names with bidirectional-text controls ("invoice\u202Egpj.exe" shows as "invoiceexe.jpg") in the
 * e-mail a finished transfer sends: in the subject, the plain text and the HTML, every control is
 * shown as a visible mark ("[U+202E]") and each name is isolated (plain text: FSI ... PDI around a
 * name without controls; HTML: <bdi>), so none can disguise itself or reorder the text around it.
 */

const RLO = '\u202E';
const RLI = '\u2067';
const LRM = '\u200E';

/** The message's subject, plain text and HTML, decoded from the .eml nodemailer wrote. */
function parseMail(raw: string): { subject: string; text: string; html: string } {
  const utf8 = (bytes: number[]) => Buffer.from(bytes).toString('utf8');
  const qpBytes = (s: string, underscoreIsSpace: boolean) => {
    const out: number[] = [];
    for (let i = 0; i < s.length; i++) {
      const c = s[i] ?? '';
      if (c === '=' && /^[0-9A-F]{2}$/i.test(s.slice(i + 1, i + 3))) {
        out.push(parseInt(s.slice(i + 1, i + 3), 16));
        i += 2;
      } else if (c === '_' && underscoreIsSpace) out.push(0x20);
      else out.push(...Buffer.from(c, 'utf8'));
    }
    return out;
  };
  const [head = '', ...rest] = raw.split(/\r?\n\r?\n/);
  const unfolded = head.replace(/\r?\n[ \t]+/g, ' ');
  const subjectLine = /^Subject: (.*)$/im.exec(unfolded)?.[1] ?? '';
  // Encoded words (RFC 2047), joined: the white space between two of them is not part of the text.
  let subject = '';
  let pending: number[] = [];
  for (const piece of subjectLine.split(/(=\?UTF-8\?[QB]\?[^?]*\?=)/i)) {
    const word = /^=\?UTF-8\?([QB])\?([^?]*)\?=$/i.exec(piece);
    if (word) {
      const [, enc = 'Q', data = ''] = word;
      pending.push(...(enc.toUpperCase() === 'B' ? [...Buffer.from(data, 'base64')] : qpBytes(data, true)));
    } else if (!(pending.length > 0 && /^\s*$/.test(piece))) {
      subject += utf8(pending) + piece;
      pending = [];
    }
  }
  subject += utf8(pending);
  const boundary = /boundary="?([^";\s]+)"?/i.exec(unfolded)?.[1] ?? '';
  const body = rest.join('\n\n');
  const parts: Record<string, string> = {};
  for (const part of body.split(`--${boundary}`)) {
    const [partHead = '', ...partBody] = part.replace(/^\r?\n/, '').split(/\r?\n\r?\n/);
    const type = /Content-Type: ([^;\s]+)/i.exec(partHead)?.[1]?.toLowerCase();
    if (!type) continue;
    const content = partBody.join('\n\n');
    const encoding = /Content-Transfer-Encoding: (\S+)/i.exec(partHead)?.[1]?.toLowerCase();
    parts[type] =
      encoding === 'base64'
        ? Buffer.from(content, 'base64').toString('utf8')
        : encoding === 'quoted-printable'
          ? utf8(qpBytes(content.replace(/=\r?\n/g, ''), false))
          : content;
  }
  return { subject, text: parts['text/plain'] ?? '', html: parts['text/html'] ?? '' };
}

/** The text with every isolate of a control-free name (FSI ... PDI) opened up; what controls are left are unisolated. */
const openIsolates = (text: string) => text.replace(/\u2068([^\u2068\u2069]*)\u2069/g, '$1');

describe('names with bidi controls in the transfer e-mail', () => {
  let t: TestApp;
  const call = caller(() => t);

  beforeAll(async () => {
    t = await startTestApp({ env: { SKYFERRY_WORKERS: '1' } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('shows every control as a mark and isolates every name, in the subject, the text and the HTML', async () => {
    const user = await t.signUp();
    await call('POST', '/api/users/notify-email', {
      headers: user.headers,
      body: { notify_email: 'me@example.org', remind_me: 1 },
    });
    const srcDir = t.makeLocalFolder('source');
    writeTree(srcDir, { [`Reports${RLI}x/invoice${RLO}gpj.exe`]: 'MZ' });
    const src = await connectLocal(call, user.headers, srcDir, `Laptop${RLO}pot`);
    const dst = await connectLocal(call, user.headers, t.makeLocalFolder('target'), `Archive${LRM}`);
    const created = await call<CreateTaskData>('POST', '/api/tasks', {
      headers: user.headers,
      body: {
        task_type: 0,
        task_name: `invoice${RLO}gpj.exe`,
        from_cloud: { cloud_id: src.id, paths: [`/Reports${RLI}x`] },
        to_cloud: { cloud_id: dst.id, path: '/' },
      },
    });
    expect(created.code, created.msg).toBe(0);
    const { task } = await waitForState(call, user.headers, created.data.task?.id ?? '');
    expect(task.state).toBe(0);

    const outbox = join(t.dataDir, 'outbox');
    let raw = '';
    for (const deadline = Date.now() + 10_000; !raw && Date.now() < deadline; await sleep(50)) {
      const files = existsSync(outbox) ? readdirSync(outbox).filter((f) => f.endsWith('.eml')) : [];
      raw = files.map((f) => readFileSync(join(outbox, f), 'utf8'))[0] ?? '';
    }
    const mail = parseMail(raw);
    expect(mail.subject).toContain('invoice[U+202E]gpj.exe');
    for (const line of [
      'Task: \u2068invoice[U+202E]gpj.exe\u2069',
      'From: \u2068Laptop[U+202E]pot (' + srcDir + ')\u2069 \u2068/Reports[U+2067]x\u2069',
      'To: \u2068Archive[U+200E] (' + join(t.localRoot, 'target') + ')\u2069 /',
    ]) {
      expect(mail.text.split('\n')).toContain(line);
    }
    const mark = (code: string) => `<span style="color:#e03131;font-family:monospace">[U+${code}]</span>`;
    expect(mail.html).toContain(`<bdi>invoice${mark('202E')}gpj.exe</bdi>`);
    expect(mail.html).toContain(`<bdi>/Reports${mark('2067')}x</bdi>`);
    expect(mail.html).toContain(`<bdi>Laptop${mark('202E')}pot (${srcDir})</bdi>`);
    // No control is left anywhere but the isolates around names (and those hold none).
    for (const part of [mail.subject, mail.text, mail.html]) {
      expect(part.length).toBeGreaterThan(10);
      expect(hasBidiControls(openIsolates(part)), JSON.stringify(part.slice(0, 200))).toBe(false);
    }
  });
});
