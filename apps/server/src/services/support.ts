import {
  message,
  SUPPORT_ATTACHMENTS,
  SUPPORT_LIMITS,
  type AttachmentInfo,
  type TicketAttachment,
  type FieldErrorsData,
  type Language,
  type MessageKey,
  type MyTicketsData,
  type OperatorTicket,
  type OperatorTicketsData,
  type SupportCustomField,
  type SupportFormData,
  type Ticket,
  type TicketBody,
  type TicketCreatedData,
  type TicketStatus,
  toLanguage,
} from '@skyferry/contract';
import type { Logger } from 'pino';
import { ApiError, errors } from '../http/errors.ts';
import type { RateLimitsRepository } from '../repositories/rate-limits.ts';
import type { AttachmentRow, ReplyRow, SupportRepository, TicketRow } from '../repositories/support.ts';
import { addressKey, checkEmail, isLoopback } from './accounts.ts';
import type { Authorization, Caller } from './authorization.ts';
import { newId, sha256Hex } from './crypto.ts';
import { ticketAckEmail, ticketReplyEmail, ticketToSupportEmail, type Mailer } from './mail/index.ts';

/** The form's id: Skyferry has one feedback form. */
export const TICKET_FORM_ID = 1;
/** The id of the problem-type field. */
export const PROBLEM_TYPE_FIELD_ID = 1;

/** The default problem types (values), labelled in the caller's language. */
const DEFAULT_PROBLEM_TYPES: ReadonlyArray<[string, MessageKey]> = [
  ['transfer', 'pt_transfer'],
  ['connect', 'pt_connect'],
  ['account', 'pt_account'],
  ['bug', 'pt_bug'],
  ['idea', 'pt_idea'],
  ['other', 'pt_other'],
];

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const JPEG = Buffer.from([0xff, 0xd8, 0xff]);

/**
 * A ticket's file checked: base64 of at most 2 MB, a name whose extension fits its type, and content
 * of that type (PNG or JPEG signature; a text file is UTF-8 without NUL). undefined when refused.
 */
export function checkAttachment(a: TicketAttachment): { name: string; bytes: Buffer } | undefined {
  // eslint-disable-next-line no-control-regex
  const name = a.file_name.replace(/[\u0000-\u001f\u007f/\\]/g, '_').trim();
  const extensions: readonly string[] = SUPPORT_ATTACHMENTS.types[a.content_type];
  if (!name || !extensions.some((ext) => name.toLowerCase().endsWith(ext))) return undefined;
  const text = a.data.replace(/\s+/g, '');
  if (!BASE64.test(text) || text.length % 4 !== 0) return undefined;
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length === 0 || bytes.length > SUPPORT_ATTACHMENTS.maxBytes) return undefined;
  if (a.content_type === 'image/png' && !bytes.subarray(0, 8).equals(PNG)) return undefined;
  if (a.content_type === 'image/jpeg' && !bytes.subarray(0, 3).equals(JPEG)) return undefined;
  if (a.content_type === 'text/plain') {
    if (bytes.includes(0)) return undefined;
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      return undefined;
    }
  }
  return { name, bytes };
}

/** Who sends a ticket: a signed-in account or a visitor with a temporary identity. */
export type TicketSender = { kind: 'user'; userId: string } | { kind: 'visitor'; visitorId: string };

export interface SupportDeps {
  repo: SupportRepository;
  limits: RateLimitsRepository;
  authz: Authorization;
  mailer: Mailer;
  /** SUPPORT_EMAIL: where every ticket is mailed; undefined: the inbox only. */
  supportEmail: string | undefined;
  /** SKYFERRY_SUPPORT_PROBLEM_TYPES: the operator's problem types; undefined: the defaults; []: no field. */
  problemTypes: readonly string[] | undefined;
  publicUrl: string;
  log: Logger;
  now?: () => number;
}

/**
 * Feedback tickets: the dynamic form, sending (visitors and users, limited per identity, per
 * network address and per sender address), the sender's view with the operator's replies, and the
 * operator's inbox (list, read, reply by e-mail, status). Texts are kept and mailed as plain text.
 */
export class SupportService {
  private readonly d: SupportDeps;
  private readonly now: () => number;

  constructor(deps: SupportDeps) {
    this.d = deps;
    this.now = deps.now ?? Date.now;
  }

  /** GET /v1/support/forms/dynamic. */
  form(language: Language): SupportFormData {
    const types = this.d.problemTypes;
    const options =
      types === undefined
        ? DEFAULT_PROBLEM_TYPES.map(([value, key]) => ({ value, name: message(language, key) }))
        : types.map((name) => ({ value: name, name }));
    const fields: SupportCustomField[] =
      options.length === 0
        ? []
        : [
            {
              id: PROBLEM_TYPE_FIELD_ID,
              type: 'tagger',
              title: message(language, 'problem_type'),
              required: true,
              custom_field_options: options,
            },
          ];
    return { ticket_form_id: TICKET_FORM_ID, custom_fields: fields };
  }

  /** Every problem with a ticket at once: the first as the envelope's code and message, each under its field. */
  private validate(
    input: TicketBody,
    language: Language,
  ): { email: string; problemType: string | null; files: Array<{ a: TicketAttachment; name: string; bytes: Buffer }> } {
    const fields: Record<string, string> = {};
    let first: ApiError | undefined;
    const fail = (field: string, err: ApiError) => {
      first ??= err;
      fields[field] = message(language, err.key, err.params);
    };
    let email = '';
    try {
      email = checkEmail(input.email);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      fail('email', err);
    }
    const form = this.form(language);
    const tagger = form.custom_fields[0]?.type === 'tagger' ? form.custom_fields[0] : undefined;
    let problemType: string | null = null;
    if (tagger) {
      const value = input.custom_fields?.find((f) => f.id === tagger.id)?.value.trim() ?? '';
      if (value === '') fail('problem_type', errors.badRequest('problem_type_empty'));
      else if (!tagger.custom_field_options.some((o) => o.value === value)) {
        fail('problem_type', errors.badRequest('problem_type_invalid'));
      } else problemType = value;
    }
    if (input.contents.trim() === '') fail('contents', errors.badRequest('details_empty'));
    const files: Array<{ a: TicketAttachment; name: string; bytes: Buffer }> = [];
    for (const a of input.attachments ?? []) {
      const ok = checkAttachment(a);
      if (!ok) {
        fail('attachments', errors.badRequest('attachment_invalid', { name: a.file_name.slice(0, 100) }));
        break;
      }
      files.push({ a, ...ok });
    }
    if (first) {
      const data: FieldErrorsData = { fields };
      const e: ApiError = first;
      throw new ApiError(e.code, e.key, e.params, data);
    }
    return { email, problemType, files };
  }

  /** One more ticket under a limit, or 429001 (nothing is counted when refused). */
  private async count(keys: Array<[string, number]>): Promise<void> {
    const now = this.now();
    for (const [key, max] of keys) {
      if ((await this.d.limits.get(key, now)).count >= max) throw errors.rateLimited();
    }
    for (const [key] of keys) await this.d.limits.hit(key, SUPPORT_LIMITS.windowMs, now);
  }

  /** POST /v1/support/tickets: stores the ticket, mails it to SUPPORT_EMAIL and acknowledges it to the sender. */
  async createTicket(
    sender: TicketSender,
    input: TicketBody,
    client: { ip: string; language: Language; base: string },
  ): Promise<TicketCreatedData> {
    const { email, problemType, files } = this.validate(input, client.language);
    const who = sender.kind === 'user' ? `user:${sender.userId}` : `visitor:${sender.visitorId}`;
    const keys: Array<[string, number]> = [
      [`ticket:id:${who}`, SUPPORT_LIMITS.perIdentity],
      [`ticket:email:${sha256Hex(email)}`, SUPPORT_LIMITS.perEmail],
    ];
    if (!isLoopback(client.ip)) keys.push([`ticket:ip:${addressKey(client.ip)}`, SUPPORT_LIMITS.perAddress]);
    await this.count(keys);
    const now = this.now();
    const contents = input.contents.trim();
    const title = (input.title?.trim() || contents.split('\n')[0] || '').slice(0, SUPPORT_LIMITS.title).trim();
    const row: TicketRow = {
      id: newId(),
      user_id: sender.kind === 'user' ? sender.userId : null,
      visitor_id: sender.kind === 'visitor' ? sender.visitorId : null,
      email,
      name: input.name?.trim() ?? '',
      title,
      contents,
      problem_type: problemType,
      custom_fields: JSON.stringify((input.custom_fields ?? []).filter((f) => f.id !== PROBLEM_TYPE_FIELD_ID)),
      language: client.language,
      platform: input.via?.platform ?? '',
      product_version: input.product_version ?? '',
      status: 'open',
      created_at: now,
      updated_at: now,
    };
    const attachments: AttachmentRow[] = files.map((f) => ({
      id: newId(),
      ticket_id: row.id,
      file_name: f.name,
      content_type: f.a.content_type,
      size: f.bytes.length,
      data: f.bytes.toString('base64'),
    }));
    await this.d.repo.insertTicket(row, attachments);
    this.d.log.info({ ticket: row.id, sender: sender.kind, files: attachments.length }, 'support ticket received');
    await this.mailOut(row, sender, client.base, files);
    return { id: row.id, status: 'open' };
  }

  /** Mail failures are logged: the ticket is stored and shows in the inbox either way. */
  private async mailOut(
    row: TicketRow,
    sender: TicketSender,
    base: string,
    files: ReadonlyArray<{ a: TicketAttachment; name: string; bytes: Buffer }>,
  ): Promise<void> {
    const appUrl = base.replace(/\/+$/, '');
    if (this.d.supportEmail) {
      try {
        await this.d.mailer.send({
          to: this.d.supportEmail,
          ...ticketToSupportEmail({
            id: row.id,
            title: row.title,
            contents: row.contents,
            email: row.email,
            name: row.name,
            sender: sender.kind === 'user' ? `account ${sender.userId}` : 'visitor',
            problemType: row.problem_type,
            platform: row.platform,
            version: row.product_version,
            language: row.language,
            inboxUrl: `${appUrl}/settings?tab=inbox`,
          }),
          attachments: files.map((f) => ({ filename: f.name, content: f.bytes, contentType: f.a.content_type })),
        });
      } catch (err) {
        this.d.log.warn({ err, ticket: row.id }, 'support ticket not mailed to SUPPORT_EMAIL');
      }
    }
    try {
      await this.d.mailer.send({
        to: row.email,
        ...ticketAckEmail({ language: this.languageOf(row), title: row.title, contents: row.contents, appUrl }),
      });
    } catch (err) {
      this.d.log.warn({ err, ticket: row.id }, 'support acknowledgement not sent');
    }
  }

  private languageOf(row: TicketRow): Language {
    return toLanguage(row.language) ?? 'en';
  }

  private toTicket(row: TicketRow, replies: readonly ReplyRow[]): Ticket {
    return {
      id: row.id,
      title: row.title,
      contents: row.contents,
      email: row.email,
      problem_type: row.problem_type,
      status: row.status as TicketStatus,
      created_at: Number(row.created_at),
      updated_at: Number(row.updated_at),
      replies: replies
        .filter((r) => r.ticket_id === row.id)
        .map((r) => ({ id: r.id, body: r.body, created_at: Number(r.created_at) })),
    };
  }

  private toOperatorTicket(
    row: TicketRow,
    replies: readonly ReplyRow[],
    files: ReadonlyArray<Omit<AttachmentRow, 'data'>>,
  ): OperatorTicket {
    const attachments: AttachmentInfo[] = files
      .filter((f) => f.ticket_id === row.id)
      .map((f) => ({ id: f.id, file_name: f.file_name, content_type: f.content_type, size: Number(f.size) }));
    return {
      ...this.toTicket(row, replies),
      attachments,
      name: row.name,
      uid: row.user_id,
      visitor: row.user_id === null && row.visitor_id !== null,
      language: row.language,
      platform: row.platform,
      product_version: row.product_version,
    };
  }

  /** GET /api/support/tickets: the signed-in user's own tickets (the latest 50) with the replies. */
  async myTickets(userId: string): Promise<MyTicketsData> {
    const rows = await this.d.repo.ticketsOfUser(userId, 50);
    const replies = await this.d.repo.repliesOf(rows.map((r) => r.id));
    return { items: rows.map((r) => this.toTicket(r, replies)) };
  }

  /** GET /api/operator/tickets. */
  async list(
    caller: Caller | undefined,
    query: { status?: TicketStatus | undefined; page: number; page_size: number },
  ): Promise<OperatorTicketsData> {
    await this.d.authz.requireOperator(caller);
    const [rows, counts] = await Promise.all([
      this.d.repo.page(query.status, (query.page - 1) * query.page_size, query.page_size),
      this.d.repo.countByStatus(),
    ]);
    const ids = rows.map((r) => r.id);
    const [replies, files] = await Promise.all([this.d.repo.repliesOf(ids), this.d.repo.attachmentsOf(ids)]);
    const c = { open: counts.open ?? 0, answered: counts.answered ?? 0, closed: counts.closed ?? 0 };
    return {
      items: rows.map((r) => this.toOperatorTicket(r, replies, files)),
      total: query.status ? c[query.status] : c.open + c.answered + c.closed,
      counts: c,
    };
  }

  private async ticket(id: string): Promise<TicketRow> {
    const row = await this.d.repo.findTicket(id);
    if (!row) throw errors.notFound();
    return row;
  }

  /** GET /api/operator/tickets/{id}. */
  async detail(caller: Caller | undefined, id: string): Promise<OperatorTicket> {
    await this.d.authz.requireOperator(caller);
    const row = await this.ticket(id);
    const [replies, files] = await Promise.all([this.d.repo.repliesOf([row.id]), this.d.repo.attachmentsOf([row.id])]);
    return this.toOperatorTicket(row, replies, files);
  }

  /** GET /api/operator/tickets/{id}/attachments/{attachment_id}: a file's name, type and bytes. */
  async attachment(
    caller: Caller | undefined,
    ticketId: string,
    id: string,
  ): Promise<{ name: string; type: string; bytes: Buffer }> {
    await this.d.authz.requireOperator(caller);
    const row = await this.d.repo.findAttachment(ticketId, id);
    if (!row) throw errors.notFound();
    return { name: row.file_name, type: row.content_type, bytes: Buffer.from(row.data, 'base64') };
  }

  /** POST /api/operator/tickets/{id}/reply: kept on the ticket, mailed to its sender; the ticket is answered. */
  async reply(caller: Caller | undefined, id: string, body: string, base: string): Promise<OperatorTicket> {
    const operator = await this.d.authz.requireOperator(caller);
    const row = await this.ticket(id);
    const text = body.trim();
    if (text === '') throw errors.badRequest('field_required', { field: 'body' });
    await this.d.repo.addReply({
      id: newId(),
      ticket_id: row.id,
      author_id: operator.id,
      body: text,
      created_at: this.now(),
    });
    this.d.log.info({ ticket: row.id, operator: operator.id }, 'support ticket answered');
    try {
      await this.d.mailer.send({
        to: row.email,
        ...ticketReplyEmail({
          language: this.languageOf(row),
          title: row.title,
          reply: text,
          appUrl: base.replace(/\/+$/, ''),
        }),
      });
    } catch (err) {
      this.d.log.warn({ err, ticket: row.id }, 'support reply not mailed');
    }
    return this.detail(caller, id);
  }

  /** PUT /api/operator/tickets/{id}/status. */
  async setStatus(caller: Caller | undefined, id: string, status: TicketStatus): Promise<OperatorTicket> {
    await this.d.authz.requireOperator(caller);
    if (!(await this.d.repo.setStatus(id, status, this.now()))) throw errors.notFound();
    return this.detail(caller, id);
  }
}
