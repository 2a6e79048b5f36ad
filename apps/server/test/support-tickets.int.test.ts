import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Code,
  type FieldErrorsData,
  type MyTicketsData,
  type OperatorTicket,
  type OperatorTicketsData,
  type SupportFormData,
  type TicketCreatedData,
  type VersionData,
} from '@skyferry/contract';
import { startTestApp, type SignedUpUser, type TestApp, type TestVisitor } from './support/app.ts';
import { TestSmtp, waitForMail } from './support/mail.ts';
import { caller } from './support/tasks.ts';

const SUPPORT = 'help@support.example';
const Q = '?channel=3&lang=en&product_id=1&version=0.1.0';

/** A valid ticket; `over` replaces fields. */
function ticket(over: Record<string, unknown> = {}) {
  return {
    title: 'Sync stops',
    contents: 'My sync stops after 10 files.',
    email: 'sender@example.com',
    name: 'Ana',
    product_id: 1,
    product_version: '0.1.0',
    via: { platform: 'web', channel: 3, source: { from: 'feedback', to: 'support' } },
    ticket_form_id: 1,
    custom_fields: [{ id: 1, value: 'transfer' }],
    ...over,
  };
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`support tickets and the operator inbox [${dialect}]`, () => {
    let t: TestApp;
    let smtp: TestSmtp;
    let operator: SignedUpUser;
    let user: SignedUpUser;
    let visitor: TestVisitor;
    const call = caller(() => t);
    /** Each test sends from its own network address, so the per-address limit of one does not touch another. */
    let ipCounter = 10;
    const freshIp = () => ({ 'x-forwarded-for': `198.51.100.${++ipCounter}` });

    beforeAll(async () => {
      smtp = await TestSmtp.start();
      t = await startTestApp({ dialect, env: { SMTP_URL: smtp.url, SUPPORT_EMAIL: SUPPORT } });
      operator = await t.signUp();
      user = await t.signUp(undefined, undefined, { operator: false });
      visitor = await t.visitor();
    });
    afterAll(async () => {
      await t?.close();
      await smtp?.stop();
    });

    it('answers the dynamic form in the language of the query, to a visitor with a bearer temporary token', async () => {
      const res = await call<SupportFormData>('GET', `/v1/support/forms/dynamic?channel=3&lang=de`, {
        headers: { authorization: `Bearer ${visitor.tempToken}` },
      });
      expect(res.code).toBe(0);
      expect(res.data.ticket_form_id).toBe(1);
      const [first] = res.data.custom_fields;
      expect(first?.type).toBe('tagger');
      expect(first?.title).toBe('Problemart');
      expect(first?.custom_field_options.map((o) => o.value)).toContain('transfer');
      expect(first?.custom_field_options.find((o) => o.value === 'bug')?.name).toBe('Etwas funktioniert nicht');
      // Nobody at all: please log in.
      const none = await call('GET', '/v1/support/forms/dynamic');
      expect([none.status, none.code]).toEqual([401, Code.UNAUTHENTICATED]);
    });

    it('refuses a bad ticket naming each field, in the caller’s language; 312212 for a malformed e-mail', async () => {
      const bad = await call<FieldErrorsData>('POST', `/v1/support/tickets?channel=3&lang=fr`, {
        headers: { ...visitor.headers, ...freshIp() },
        body: ticket({ email: 'not-an-address', contents: '   ', custom_fields: [] }),
      });
      expect([bad.status, bad.code]).toEqual([400, Code.EMAIL_FORMAT]);
      expect(bad.data.fields).toEqual({
        email: "Format d'e-mail incorrect.",
        problem_type: 'Le type de problème ne peut pas être vide',
        contents: 'Les détails ne peuvent pas être vides',
      });
      expect(bad.msg).toBe(bad.data.fields.email);
      const empty = await call<FieldErrorsData>('POST', `/v1/support/tickets${Q}`, {
        headers: { ...visitor.headers, ...freshIp() },
        body: ticket({ email: '' }),
      });
      expect([empty.status, empty.code, empty.msg]).toEqual([400, Code.BAD_REQUEST, 'Email cannot be empty']);
      expect(empty.data.fields).toEqual({ email: 'Email cannot be empty' });
      const unknownType = await call<FieldErrorsData>('POST', `/v1/support/tickets${Q}`, {
        headers: { ...visitor.headers, ...freshIp() },
        body: ticket({ custom_fields: [{ id: 1, value: 'free tickets' }] }),
      });
      expect(unknownType.data.fields).toEqual({ problem_type: 'Choose one of the listed problem types.' });
      // Nothing was stored.
      const stored = await t.ctx.db.kysely.selectFrom('support_tickets').selectAll().execute();
      expect(stored).toEqual([]);
    });

    it('refuses hostile input with a 4xx, never a 5xx', async () => {
      for (const body of [
        { ...ticket(), contents: 'x'.repeat(10_001) },
        { ...ticket(), contents: 'bell\u0007' },
        { ...ticket(), email: ['a@b.c'] },
        { ...ticket(), custom_fields: 'transfer' },
        'not json at all',
      ]) {
        const res = await t.app.inject({
          method: 'POST',
          url: `/v1/support/tickets${Q}`,
          headers: { ...visitor.headers, ...freshIp(), 'content-type': 'application/json' },
          payload: typeof body === 'string' ? body : JSON.stringify(body),
        });
        expect(res.statusCode, res.body).toBeGreaterThanOrEqual(400);
        expect(res.statusCode, res.body).toBeLessThan(500);
      }
      const huge = await t.app.inject({
        method: 'POST',
        url: `/v1/support/tickets${Q}`,
        headers: { ...visitor.headers, 'content-type': 'application/json' },
        payload: JSON.stringify(ticket({ contents: 'y'.repeat(9 * 1024 * 1024) })),
      });
      expect(huge.statusCode).toBe(413);
    });

    let visitorTicket = '';
    let userTicket = '';
    const hostile = '<script>alert(1)</script> & "quotes"\nsecond line';

    it('keeps a visitor’s ticket, mails it to SUPPORT_EMAIL and acknowledges it to the sender, as text', async () => {
      const res = await call<TicketCreatedData>('POST', `/v1/support/tickets${Q}`, {
        headers: { authorization: `Bearer ${visitor.tempToken}`, ...freshIp() },
        body: ticket({ email: 'Visitor@Example.com', title: 'Visitor <b>title</b>', contents: hostile }),
      });
      expect(res.code).toBe(0);
      expect(res.msg).toBe('Thank you! Your message has been sent to the operator of this server.');
      visitorTicket = res.data.id;
      const row = await t.ctx.db.kysely
        .selectFrom('support_tickets')
        .selectAll()
        .where('id', '=', visitorTicket)
        .executeTakeFirstOrThrow();
      expect(row).toMatchObject({
        email: 'visitor@example.com',
        contents: hostile.trim(),
        user_id: null,
        status: 'open',
      });
      expect(row.visitor_id).toBe(await t.ctx.tokens.authenticateVisitor(visitor.tempToken));

      const toSupport = await waitForMail(
        () => smtp.received,
        (m) => m.to === SUPPORT && m.text.includes(hostile),
      );
      expect(toSupport.subject).toBe('[Skyferry support] Visitor <b>title</b>');
      expect(toSupport.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot;');
      expect(toSupport.html).not.toContain('<script>');
      const ack = await waitForMail(
        () => smtp.received,
        (m) => m.to === 'visitor@example.com',
      );
      expect(ack.subject).toBe('We received your message: Visitor <b>title</b>');
      expect(ack.text).toContain(hostile);
      expect(ack.html).not.toContain('<script>');
    });

    it('keeps a signed-in user’s ticket under their account, in their language', async () => {
      const res = await call<TicketCreatedData>('POST', `/v1/support/tickets?channel=3&lang=es`, {
        headers: { ...user.headers, ...freshIp() },
        body: ticket({ email: user.email, title: 'No puedo conectar', custom_fields: [{ id: 1, value: 'connect' }] }),
      });
      expect(res.code).toBe(0);
      expect(res.msg).toBe('¡Gracias! Tu mensaje se ha enviado al operador de este servidor.');
      userTicket = res.data.id;
      const ack = await waitForMail(
        () => smtp.received,
        (m) => m.to === user.email,
      );
      expect(ack.subject).toBe('Hemos recibido tu mensaje: No puedo conectar');
      const mine = await call<MyTicketsData>('GET', '/api/support/tickets', { headers: user.headers });
      expect(mine.data.items.map((i) => [i.id, i.problem_type, i.status])).toEqual([[userTicket, 'connect', 'open']]);
    });

    it('lists both in the operator’s inbox; only the operator reads it', async () => {
      const inbox = await call<OperatorTicketsData>('GET', '/api/operator/tickets?status=open', {
        headers: operator.headers,
      });
      expect(inbox.code).toBe(0);
      expect(inbox.data.items.map((i) => i.id)).toEqual([userTicket, visitorTicket]);
      expect(inbox.data.items.map((i) => [i.visitor, i.uid])).toEqual([
        [false, user.uid],
        [true, null],
      ]);
      expect(inbox.data.counts).toEqual({ open: 2, answered: 0, closed: 0 });
      for (const url of ['/api/operator/tickets', `/api/operator/tickets/${userTicket}`]) {
        const notOperator = await call('GET', url, { headers: user.headers });
        expect([notOperator.status, notOperator.code]).toEqual([403, Code.OPERATOR_REQUIRED]);
        const asVisitor = await call('GET', url, { headers: visitor.headers });
        expect(asVisitor.code).toBe(Code.UNAUTHENTICATED);
      }
      const reply = await call('POST', `/api/operator/tickets/${userTicket}/reply`, {
        headers: user.headers,
        body: { body: 'I answer myself' },
      });
      expect(reply.code).toBe(Code.OPERATOR_REQUIRED);
      const missing = await call('GET', '/api/operator/tickets/nope', { headers: operator.headers });
      expect([missing.status, missing.code]).toEqual([404, Code.NOT_FOUND]);
    });

    it('mails the operator’s reply to the sender, marks the ticket answered and shows it in the user’s list', async () => {
      const answer = 'Reconnect the drive under Manage.\n<i>Thanks</i>';
      const res = await call<OperatorTicket>('POST', `/api/operator/tickets/${userTicket}/reply`, {
        headers: operator.headers,
        body: { body: answer },
      });
      expect(res.code).toBe(0);
      expect(res.data.status).toBe('answered');
      expect(res.data.replies.map((r) => r.body)).toEqual([answer]);
      const mail = await waitForMail(
        () => smtp.received,
        (m) => m.to === user.email && m.subject === 'Respuesta a tu mensaje: No puedo conectar',
      );
      expect(mail.text).toContain(answer);
      expect(mail.html).toContain('&lt;i&gt;Thanks&lt;/i&gt;');
      const mine = await call<MyTicketsData>('GET', '/api/support/tickets', { headers: user.headers });
      expect(mine.data.items[0]?.replies.map((r) => r.body)).toEqual([answer]);
      // Nobody else sees it.
      const others = await call<MyTicketsData>('GET', '/api/support/tickets', { headers: operator.headers });
      expect(others.data.items).toEqual([]);
      const empty = await call('POST', `/api/operator/tickets/${userTicket}/reply`, {
        headers: operator.headers,
        body: { body: '   ' },
      });
      expect([empty.status, empty.code]).toEqual([400, Code.BAD_REQUEST]);

      const closed = await call<OperatorTicket>('PUT', `/api/operator/tickets/${userTicket}/status`, {
        headers: operator.headers,
        body: { status: 'closed' },
      });
      expect(closed.data.status).toBe('closed');
      const counts = await call<OperatorTicketsData>('GET', '/api/operator/tickets', { headers: operator.headers });
      expect(counts.data.counts).toEqual({ open: 1, answered: 0, closed: 1 });
      const bad = await call('PUT', `/api/operator/tickets/${userTicket}/status`, {
        headers: operator.headers,
        body: { status: 'deleted' },
      });
      expect(bad.status).toBe(400);
    });

    it('limits tickets per identity, per network address and per sender address', async () => {
      // Per identity: a fresh visitor sends 5 an hour, from any address.
      const v = await t.visitor();
      for (let i = 0; i < 5; i++) {
        const ok = await call('POST', `/v1/support/tickets${Q}`, {
          headers: { ...v.headers, ...freshIp() },
          body: ticket({ email: `v${i}@example.com` }),
        });
        expect(ok.code, JSON.stringify(ok)).toBe(0);
      }
      const sixth = await call('POST', `/v1/support/tickets${Q}`, {
        headers: { ...v.headers, ...freshIp() },
        body: ticket({ email: 'v6@example.com' }),
      });
      expect([sixth.status, sixth.code]).toEqual([429, Code.RATE_LIMITED]);
      // Per address: fresh visitors (identities are free to get) from one address send 20 an hour.
      const ip = { 'x-forwarded-for': '203.0.113.99' };
      for (let i = 0; i < 20; i++) {
        const fresh = await t.visitor();
        const ok = await call('POST', `/v1/support/tickets${Q}`, {
          headers: { ...fresh.headers, ...ip },
          body: ticket({ email: `ip${i}@example.com` }),
        });
        expect(ok.code).toBe(0);
      }
      const overIp = await call('POST', `/v1/support/tickets${Q}`, {
        headers: { ...(await t.visitor()).headers, ...ip },
        body: ticket({ email: 'ip-last@example.com' }),
      });
      expect(overIp.code).toBe(Code.RATE_LIMITED);
      // Per sender address: one mailbox gets at most 5 acknowledgements an hour, whoever sends.
      for (let i = 0; i < 5; i++) {
        const ok = await call('POST', `/v1/support/tickets${Q}`, {
          headers: { ...(await t.visitor()).headers, ...freshIp() },
          body: ticket({ email: 'victim@example.com' }),
        });
        expect(ok.code).toBe(0);
      }
      const flood = await call('POST', `/v1/support/tickets${Q}`, {
        headers: { ...(await t.visitor()).headers, ...freshIp() },
        body: ticket({ email: 'VICTIM@example.com' }),
      });
      expect(flood.code).toBe(Code.RATE_LIMITED);
    });

    it('keeps tickets when the account that sent them is deleted', async () => {
      const gone = await t.signUp(undefined, undefined, { operator: false });
      const sent = await call<TicketCreatedData>('POST', `/v1/support/tickets${Q}`, {
        headers: { ...gone.headers, ...freshIp() },
        body: ticket({ email: gone.email }),
      });
      const del = await call('POST', '/api/account/delete', {
        headers: gone.headers,
        body: { password: gone.password },
      });
      expect(del.code, JSON.stringify(del)).toBe(0);
      const kept = await call<OperatorTicket>('GET', `/api/operator/tickets/${sent.data.id}`, {
        headers: operator.headers,
      });
      expect([kept.code, kept.data.uid, kept.data.email]).toEqual([0, null, gone.email]);
    });

    it('keeps a ticket’s log file and screenshot for the operator, and refuses other files', async () => {
      const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('pixels')]);
      const log = Buffer.from('2026-11-28 error: sync stopped\n');
      const res = await call<TicketCreatedData>('POST', `/v1/support/tickets${Q}`, {
        headers: { ...(await t.visitor()).headers, ...freshIp() },
        body: ticket({
          email: 'files@example.com',
          attachments: [
            { file_name: 'skyferry.log', content_type: 'text/plain', data: log.toString('base64') },
            { file_name: 'screen.png', content_type: 'image/png', data: png.toString('base64') },
          ],
        }),
      });
      expect(res.code, JSON.stringify(res)).toBe(0);
      const detail = await call<OperatorTicket>('GET', `/api/operator/tickets/${res.data.id}`, {
        headers: operator.headers,
      });
      expect(detail.data.attachments.map((a) => [a.file_name, a.content_type, a.size])).toEqual([
        ['screen.png', 'image/png', png.length],
        ['skyferry.log', 'text/plain', log.length],
      ]);
      const shot = detail.data.attachments[0];
      const download = await t.app.inject({
        method: 'GET',
        url: `/api/operator/tickets/${res.data.id}/attachments/${shot?.id}`,
        headers: operator.headers,
      });
      expect(download.statusCode).toBe(200);
      expect(download.rawPayload.equals(png)).toBe(true);
      expect(download.headers['content-disposition']).toBe("attachment; filename*=UTF-8''screen.png");
      expect(download.headers['x-content-type-options']).toBe('nosniff');
      const notOperator = await call('GET', `/api/operator/tickets/${res.data.id}/attachments/${shot?.id}`, {
        headers: user.headers,
      });
      expect(notOperator.code).toBe(Code.OPERATOR_REQUIRED);
      const mailed = await waitForMail(
        () => smtp.received,
        (m) => m.to === SUPPORT && m.text.includes('files@'),
      );
      expect(mailed.subject).toBe('[Skyferry support] Sync stops');

      for (const bad of [
        {
          file_name: 'fake.png',
          content_type: 'image/png',
          data: Buffer.from('<svg onload=alert(1)>').toString('base64'),
        },
        { file_name: 'run.exe', content_type: 'text/plain', data: log.toString('base64') },
        { file_name: 'a.log', content_type: 'text/plain', data: Buffer.from([0x41, 0x00, 0x42]).toString('base64') },
        { file_name: 'a.log', content_type: 'text/plain', data: 'not base64!' },
        {
          file_name: 'big.log',
          content_type: 'text/plain',
          data: Buffer.alloc(2 * 1024 * 1024 + 1, 65).toString('base64'),
        },
      ]) {
        const refused = await call<FieldErrorsData>('POST', `/v1/support/tickets${Q}`, {
          headers: { ...(await t.visitor()).headers, ...freshIp() },
          body: ticket({ email: 'files@example.com', attachments: [bad] }),
        });
        expect(refused.status, bad.file_name).toBeGreaterThanOrEqual(400);
        expect(refused.status, bad.file_name).toBeLessThan(500);
        if (refused.status === 400 && refused.data) {
          expect(refused.data.fields.attachments).toContain(bad.file_name);
        }
      }
    });

    it('answers the release notes of a version, and the server’s own version', async () => {
      const res = await call<VersionData>('GET', '/api/version/latest');
      expect(res.code).toBe(0);
      expect(res.data.version).toBe(res.data.latest);
      expect(res.data.whats_new_content).toContain('Feedback');
      const named = await call<VersionData>(`GET`, `/api/version/v${res.data.latest}`);
      expect(named.data.whats_new_content).toBe(res.data.whats_new_content);
      const unknown = await call('GET', '/api/version/99.0.0', { headers: { 'x-language': 'nl' } });
      expect([unknown.status, unknown.code, unknown.msg]).toEqual([
        404,
        Code.NOT_FOUND,
        'Er zijn geen release-opmerkingen voor versie 99.0.0.',
      ]);
    });
  });
}
