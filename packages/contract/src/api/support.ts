import { z } from 'zod';
import { idSchema } from './common.ts';

/**
 * Support: the feedback form (its dynamic fields), tickets, the user's view of their tickets and
 * the operator's inbox. Visitors and users alike send tickets; the operator answers by e-mail from
 * the inbox and the answer also shows under the user's Settings. Times are milliseconds since the epoch.
 */

/** Longest ticket text, title, sender name and reply, in characters. */
export const SUPPORT_LIMITS = {
  contents: 10_000,
  title: 200,
  name: 100,
  email: 254,
  reply: 10_000,
  /** Tickets one visitor or user sends per hour. */
  perIdentity: 5,
  /** Tickets from one network address per hour (loopback exempt, as for sign-ups). */
  perAddress: 20,
  /** Tickets naming one sender address per hour (each gets an acknowledgement mail). */
  perEmail: 5,
  windowMs: 60 * 60_000,
} as const;

/**
 * Files a ticket may carry: log files and screenshots, at most 3 of 2 MB each, sent as base64. The
 * server checks each one's name, type and content (a PNG or JPEG must be one).
 */
export const SUPPORT_ATTACHMENTS = {
  max: 3,
  maxBytes: 2 * 1024 * 1024,
  types: { 'text/plain': ['.txt', '.log'], 'image/png': ['.png'], 'image/jpeg': ['.jpg', '.jpeg'] },
} as const;
export type AttachmentType = keyof typeof SUPPORT_ATTACHMENTS.types;
export const ATTACHMENT_TYPES = Object.keys(SUPPORT_ATTACHMENTS.types) as AttachmentType[];

export const ticketAttachmentSchema = z.object({
  file_name: z.string().min(1).max(200),
  content_type: z.enum(['text/plain', 'image/png', 'image/jpeg']),
  /** The file's bytes in base64. */
  data: z.string().max(Math.ceil((SUPPORT_ATTACHMENTS.maxBytes * 4) / 3) + 4),
});
export type TicketAttachment = z.infer<typeof ticketAttachmentSchema>;

/** An attachment as the inbox lists it (GET .../attachments/{attachment_id} answers its bytes). */
export const attachmentInfoSchema = z.object({
  id: z.string(),
  file_name: z.string(),
  content_type: z.string(),
  size: z.number().int(),
});
export type AttachmentInfo = z.infer<typeof attachmentInfoSchema>;

/** The query every support call carries (spec section 7): channel 3, the language, product and version. */
export const supportQuerySchema = z.object({
  channel: z.coerce.number().int().optional(),
  lang: z.string().max(20).optional(),
  product_id: z.string().max(64).optional(),
  version: z.string().max(64).optional(),
});
export type SupportQuery = z.infer<typeof supportQuerySchema>;

export const supportFieldOptionSchema = z.object({ name: z.string(), value: z.string() });

/** A custom field of the form; the first one, when of type `tagger`, is the problem type and is required. */
export const supportCustomFieldSchema = z.object({
  id: z.number().int(),
  type: z.enum(['tagger', 'text']),
  title: z.string(),
  required: z.boolean(),
  custom_field_options: z.array(supportFieldOptionSchema),
});
export type SupportCustomField = z.infer<typeof supportCustomFieldSchema>;

/** GET /v1/support/forms/dynamic: the form's fields in the caller's language. */
export const supportFormDataSchema = z.object({
  ticket_form_id: z.number().int(),
  custom_fields: z.array(supportCustomFieldSchema),
});
export type SupportFormData = z.infer<typeof supportFormDataSchema>;

/** The text of a ticket field: control characters other than line breaks and tabs are refused. */
const ticketText = (max: number) =>
  z
    .string()
    .max(max)
    // eslint-disable-next-line no-control-regex
    .refine((s) => !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(s), {
      message: 'must not contain control characters',
    });

/**
 * POST /v1/support/tickets: the spec's ticket payload. `email` and `contents` are checked by the
 * server with the dialog's messages (empty: "Email cannot be empty", malformed: 312212, empty
 * details: "Details cannot be empty"), each under `data.fields`.
 */
export const ticketBodySchema = z.object({
  title: ticketText(SUPPORT_LIMITS.title).optional(),
  contents: ticketText(SUPPORT_LIMITS.contents),
  email: z.string().max(SUPPORT_LIMITS.email),
  name: ticketText(SUPPORT_LIMITS.name).optional(),
  product_id: z.union([z.string().max(64), z.number()]).optional(),
  product_version: z.string().max(64).optional(),
  via: z
    .object({
      platform: z.string().max(64).optional(),
      channel: z.number().int().optional(),
      source: z.object({ from: z.string().max(200).optional(), to: z.string().max(200).optional() }).optional(),
    })
    .optional(),
  ticket_form_id: z.number().int().optional(),
  custom_fields: z
    .array(z.object({ id: z.number().int(), value: z.string().max(200) }))
    .max(20)
    .optional(),
  attachments: z.array(ticketAttachmentSchema).max(SUPPORT_ATTACHMENTS.max).optional(),
});
export type TicketBody = z.infer<typeof ticketBodySchema>;

export const TICKET_STATUSES = ['open', 'answered', 'closed'] as const;
export type TicketStatus = (typeof TICKET_STATUSES)[number];

export const ticketReplySchema = z.object({
  id: z.string(),
  body: z.string(),
  created_at: z.number(),
});
export type TicketReply = z.infer<typeof ticketReplySchema>;

/** A ticket as its sender sees it. Bodies are plain text: clients show them as text, never as HTML. */
export const ticketSchema = z.object({
  id: z.string(),
  title: z.string(),
  contents: z.string(),
  email: z.string(),
  problem_type: z.string().nullable(),
  status: z.enum(TICKET_STATUSES),
  created_at: z.number(),
  updated_at: z.number(),
  replies: z.array(ticketReplySchema),
});
export type Ticket = z.infer<typeof ticketSchema>;

/** POST /v1/support/tickets: the stored ticket's id. */
export const ticketCreatedDataSchema = z.object({ id: z.string(), status: z.enum(TICKET_STATUSES) });
export type TicketCreatedData = z.infer<typeof ticketCreatedDataSchema>;

/** GET /api/support/tickets: the signed-in user's tickets, newest first, with the operator's replies. */
export const myTicketsDataSchema = z.object({ items: z.array(ticketSchema) });
export type MyTicketsData = z.infer<typeof myTicketsDataSchema>;

/** A ticket as the operator sees it: who sent it (an account, or a visitor) and from where. */
export const operatorTicketSchema = ticketSchema.extend({
  name: z.string(),
  /** The account that sent it; null for a visitor's (or a deleted account's). */
  uid: z.string().nullable(),
  visitor: z.boolean(),
  language: z.string(),
  platform: z.string(),
  product_version: z.string(),
  attachments: z.array(attachmentInfoSchema),
});
export type OperatorTicket = z.infer<typeof operatorTicketSchema>;

export const operatorTicketsQuerySchema = z.object({
  status: z.enum(TICKET_STATUSES).optional(),
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  page_size: z.coerce.number().int().min(1).max(100).default(50),
});
export type OperatorTicketsQuery = z.infer<typeof operatorTicketsQuerySchema>;

/** GET /api/operator/tickets: newest first, with the count per status for the inbox's tabs. */
export const operatorTicketsDataSchema = z.object({
  items: z.array(operatorTicketSchema),
  total: z.number().int(),
  counts: z.object({ open: z.number().int(), answered: z.number().int(), closed: z.number().int() }),
});
export type OperatorTicketsData = z.infer<typeof operatorTicketsDataSchema>;

export const ticketParamSchema = z.object({ id: idSchema });
export const attachmentParamSchema = z.object({ id: idSchema, attachment_id: idSchema });

/** POST /api/operator/tickets/{id}/reply: mailed to the sender; the ticket becomes `answered`. */
export const ticketReplyBodySchema = z.object({ body: ticketText(SUPPORT_LIMITS.reply) });
export type TicketReplyBody = z.infer<typeof ticketReplyBodySchema>;

/** PUT /api/operator/tickets/{id}/status. */
export const ticketStatusBodySchema = z.object({ status: z.enum(TICKET_STATUSES) });
export type TicketStatusBody = z.infer<typeof ticketStatusBodySchema>;

/** GET /api/version/{version}: the release notes of a version (CHANGELOG.md), as Markdown. */
export const versionParamSchema = z.object({ version: z.string().min(1).max(64) });
export const versionDataSchema = z.object({
  version: z.string(),
  /** The server's own version, so a client can tell a newer server was deployed. */
  latest: z.string(),
  release_date: z.string().nullable(),
  whats_new_content: z.string(),
});
export type VersionData = z.infer<typeof versionDataSchema>;
