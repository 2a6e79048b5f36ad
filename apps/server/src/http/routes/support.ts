import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import {
  attachmentParamSchema,
  Code,
  envelopeOf,
  HEADERS,
  message,
  myTicketsDataSchema,
  ok,
  operatorTicketSchema,
  operatorTicketsDataSchema,
  operatorTicketsQuerySchema,
  SUPPORT_ATTACHMENTS,
  supportFormDataSchema,
  supportQuerySchema,
  ticketBodySchema,
  ticketCreatedDataSchema,
  ticketParamSchema,
  ticketReplyBodySchema,
  ticketStatusBodySchema,
  toLanguage,
  versionDataSchema,
  versionParamSchema,
} from '@skyferry/contract';
import { publicBase } from '../../account-pages/origins.ts';
import type { AppContext } from '../../context.ts';
import type { TicketSender } from '../../services/support.ts';
import type { App } from '../app-types.ts';
import { identityOf, requireSupportIdentity, requireUser, userOf } from '../auth.ts';
import { ApiError } from '../errors.ts';
import { requestLanguage } from '../language.ts';

const bearer: Array<Record<string, string[]>> = [{ bearer: [] }];

/** A ticket is text (10,000 characters at most), a few small fields and up to 3 files of 2 MB in base64. */
const TICKET_BODY = 64 * 1024 + Math.ceil((SUPPORT_ATTACHMENTS.max * SUPPORT_ATTACHMENTS.maxBytes * 4) / 3) + 1024;
/** An operator's answer: text only. */
const REPLY_BODY = 64 * 1024;

/** The support calls' `lang` query sets the language of their messages (the x-language header still wins). */
const langFromQuery: onRequestAsyncHookHandler = async (request) => {
  // Runs before validation: a repeated `lang` arrives as an array, which names no language.
  const raw = (request.query as { lang?: unknown } | undefined)?.lang;
  const lang = typeof raw === 'string' ? toLanguage(raw) : undefined;
  if (lang && !request.headers[HEADERS.language]) request.headers[HEADERS.language] = lang;
};

function senderOf(request: FastifyRequest): TicketSender {
  const identity = identityOf(request);
  return identity.kind === 'user'
    ? { kind: 'user', userId: identity.userId }
    : { kind: 'visitor', visitorId: identity.visitorId };
}

export default async function supportRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/v1/support/forms/dynamic',
    {
      onRequest: langFromQuery,
      preHandler: requireSupportIdentity(ctx),
      schema: {
        tags: ['support'],
        summary: "The feedback form's fields: the problem-type selector (a tagger) when the operator keeps one",
        description:
          'Query: channel (3), lang, product_id, version. A signed-in user, or a visitor (its temporary token as ' +
          'a bearer Authorization or in x-temp-authorization). The first custom field, when of type `tagger`, is ' +
          'the problem type and is required; its options come from SKYFERRY_SUPPORT_PROBLEM_TYPES or the defaults.',
        security: bearer,
        querystring: supportQuerySchema,
        response: { 200: envelopeOf(supportFormDataSchema) },
      },
    },
    async (request) => ok(ctx.support.form(requestLanguage(request))),
  );

  app.post(
    '/v1/support/tickets',
    {
      onRequest: langFromQuery,
      bodyLimit: TICKET_BODY,
      preHandler: requireSupportIdentity(ctx),
      schema: {
        tags: ['support'],
        summary: 'Send feedback: the ticket is kept for the operator, mailed to SUPPORT_EMAIL and acknowledged',
        description:
          'Visitors and users alike. Refusals name each field in `data.fields` with its message: an empty email ' +
          '("Email cannot be empty"), a malformed one (code 312212), no problem type when the form has one ' +
          '("Problem type cannot be empty"), empty contents ("Details cannot be empty"). Each visitor or user ' +
          'sends at most 5 tickets an hour, each network address 20 and each sender address 5 (429001). ' +
          'Texts are kept as plain text.',
        security: bearer,
        querystring: supportQuerySchema,
        body: ticketBodySchema,
        response: { 200: envelopeOf(ticketCreatedDataSchema) },
      },
    },
    async (request) => {
      const language = requestLanguage(request);
      const data = await ctx.support.createTicket(senderOf(request), request.body, {
        ip: request.ip,
        language,
        base: publicBase(ctx.config, request),
      });
      return ok(data, message(language, 'ticket_sent'));
    },
  );

  app.get(
    '/api/support/tickets',
    {
      preHandler: requireUser(ctx),
      schema: {
        tags: ['support'],
        summary: "The signed-in user's own tickets (the latest 50), newest first, with the operator's answers",
        security: bearer,
        response: { 200: envelopeOf(myTicketsDataSchema) },
      },
    },
    async (request) => ok(await ctx.support.myTickets(userOf(request).userId)),
  );

  app.get(
    '/api/operator/tickets',
    {
      preHandler: requireUser(ctx),
      schema: {
        tags: ['operator'],
        summary: "The operator's inbox: feedback tickets, newest first, optionally of one status",
        description: 'Operators only (403005 for any other account, 140013 for visitors).',
        security: bearer,
        querystring: operatorTicketsQuerySchema,
        response: { 200: envelopeOf(operatorTicketsDataSchema) },
      },
    },
    async (request) => ok(await ctx.support.list(userOf(request), request.query)),
  );

  app.get(
    '/api/operator/tickets/:id',
    {
      preHandler: requireUser(ctx),
      schema: {
        tags: ['operator'],
        summary: 'One ticket of the inbox with its answers',
        description: 'Operators only (403005 otherwise); 404 for an unknown ticket.',
        security: bearer,
        params: ticketParamSchema,
        response: { 200: envelopeOf(operatorTicketSchema) },
      },
    },
    async (request) => ok(await ctx.support.detail(userOf(request), request.params.id)),
  );

  app.get(
    '/api/operator/tickets/:id/attachments/:attachment_id',
    {
      preHandler: requireUser(ctx),
      schema: {
        tags: ['operator'],
        summary: "A ticket's file (log file or screenshot), downloaded as it was sent",
        description:
          'Operators only (403005 otherwise); 404 for an unknown ticket or file. Always a download ' +
          '(Content-Disposition: attachment, nosniff), never shown inline by the browser.',
        security: bearer,
        params: attachmentParamSchema,
      },
    },
    async (request, reply) => {
      const file = await ctx.support.attachment(userOf(request), request.params.id, request.params.attachment_id);
      return reply
        .header('content-type', file.type)
        .header('x-content-type-options', 'nosniff')
        .header('content-disposition', `attachment; filename*=UTF-8''${encodeURIComponent(file.name)}`)
        .header('content-security-policy', "default-src 'none'; sandbox")
        .send(file.bytes);
    },
  );

  app.post(
    '/api/operator/tickets/:id/reply',
    {
      bodyLimit: REPLY_BODY,
      preHandler: requireUser(ctx),
      schema: {
        tags: ['operator'],
        summary: "Answer a ticket: mailed to its sender, shown in the sender's Settings; the ticket is answered",
        description: 'Operators only (403005 otherwise); 404 for an unknown ticket, 400 for an empty answer.',
        security: bearer,
        params: ticketParamSchema,
        body: ticketReplyBodySchema,
        response: { 200: envelopeOf(operatorTicketSchema) },
      },
    },
    async (request) =>
      ok(
        await ctx.support.reply(userOf(request), request.params.id, request.body.body, publicBase(ctx.config, request)),
      ),
  );

  app.put(
    '/api/operator/tickets/:id/status',
    {
      bodyLimit: 4 * 1024,
      preHandler: requireUser(ctx),
      schema: {
        tags: ['operator'],
        summary: 'Set a ticket open, answered or closed',
        description: 'Operators only (403005 otherwise); 404 for an unknown ticket.',
        security: bearer,
        params: ticketParamSchema,
        body: ticketStatusBodySchema,
        response: { 200: envelopeOf(operatorTicketSchema) },
      },
    },
    async (request) => ok(await ctx.support.setStatus(userOf(request), request.params.id, request.body.status)),
  );

  app.get(
    '/api/version/:version',
    {
      schema: {
        tags: ['system'],
        summary: "A version's release notes (CHANGELOG.md) as Markdown, and the server's own version",
        description:
          "`latest` or `current` names the server's version. `data.latest` is the version the server runs: a " +
          'client built for another version offers to reload. 404 for a version without notes.',
        params: versionParamSchema,
        response: { 200: envelopeOf(versionDataSchema) },
      },
    },
    async (request) => {
      const { version } = request.params;
      const own = version === 'latest' || version === 'current';
      // The server's own version always answers (a client learns it so), with empty notes when the CHANGELOG has none.
      const note =
        ctx.releaseNotes.find(version) ??
        (own ? { version: ctx.releaseNotes.version, date: null, content: '' } : undefined);
      if (!note) throw new ApiError(Code.NOT_FOUND, 'release_notes_unknown', { version });
      return ok({
        version: note.version,
        latest: ctx.releaseNotes.version,
        release_date: note.date,
        whats_new_content: note.content,
      });
    },
  );
}
