import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  accountLinkBodySchema,
  accountSessionParamSchema,
  accountSessionsDataSchema,
  authorizationDataSchema,
  authorizationsBodySchema,
  changeEmailBodySchema,
  changeEmailDataSchema,
  changePasswordBodySchema,
  changePasswordDataSchema,
  confirmEmailDataSchema,
  deleteAccountBodySchema,
  deleteAccountDataSchema,
  endedSessionsDataSchema,
  envelopeOf,
  forgotPasswordBodySchema,
  logoutBodySchema,
  message,
  ok,
  resetPasswordBodySchema,
  signInBodySchema,
  signUpBodySchema,
} from '@skyferry/contract';
import { publicBase } from '../../account-pages/origins.ts';
import type { AppContext } from '../../context.ts';
import type { ClientInfo } from '../../services/accounts.ts';
import type { App } from '../app-types.ts';
import { optionalIdentity, requireUser, userOf } from '../auth.ts';
import { requestLanguage } from '../language.ts';

/** The caller's address, language and browser, as sign-in limits, messages and the session list use them. */
function clientOf(request: FastifyRequest): ClientInfo {
  const agent = request.headers['user-agent'];
  return { ip: request.ip, language: requestLanguage(request), userAgent: Array.isArray(agent) ? agent[0] : agent };
}

const bearer: Array<Record<string, string[]>> = [{ bearer: [] }];

/** Account calls carry a few small fields; anything larger is refused before parsing. */
const SMALL_BODY = 16 * 1024;

export default async function accountRoutes(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/account/signup',
    {
      bodyLimit: SMALL_BODY,
      schema: {
        tags: ['accounts'],
        summary: 'Create an account and sign in',
        description:
          'Answers the same data as POST /api/v2/authorizations. Passwords: 8 to 256 characters. A refusal of the ' +
          'e-mail and the password names every problem at once: `data.fields` holds each field with its message.',
        body: signUpBodySchema,
        response: { 200: envelopeOf(authorizationDataSchema) },
      },
    },
    async (request) => ok(await ctx.accounts.signUp(request.body, clientOf(request))),
  );

  app.post(
    '/api/account/login',
    {
      bodyLimit: SMALL_BODY,
      schema: {
        tags: ['accounts'],
        summary: 'Sign in with e-mail and password',
        description:
          'Answers the same data as POST /api/v2/authorizations. Attempts on one account from one address are slowed ' +
          'after 5 (a wait from 1 s doubling up to 15 minutes; loopback counts per account only), and an address ' +
          'has at most 50 failures in 15 minutes across accounts (code 429001 with the wait).',
        body: signInBodySchema,
        response: { 200: envelopeOf(authorizationDataSchema) },
      },
    },
    async (request) => ok(await ctx.accounts.signIn(request.body, clientOf(request))),
  );

  app.post(
    '/api/v2/authorizations',
    {
      bodyLimit: SMALL_BODY,
      schema: {
        tags: ['accounts'],
        summary: 'Refresh the tokens (rotating) or sign in with the auto-login token',
        description:
          'A refresh token works once; presenting a used one again ends the whole session. Any rejection answers ' +
          'code 230011 (the client does a light logout).',
        body: authorizationsBodySchema,
        response: { 200: envelopeOf(authorizationDataSchema) },
      },
    },
    async (request) => ok(await ctx.accounts.authorize(request.body, { ip: request.ip })),
  );

  const logoutSchema = {
    tags: ['accounts'],
    summary: 'Log out: end the session (refresh, access and auto-login tokens)',
    description:
      'Ends the session of the bearer access token, and/or of the refresh_token or auto_login_token in the body. ' +
      'Always answers success (logging out twice is harmless); data.ended tells whether a session ended.',
    response: { 200: envelopeOf(z.object({ ended: z.boolean() })) },
  };
  // Logging out must work however a client sends it: an empty body with a JSON content type too.
  await app.register(async (scope) => {
    const json = scope.getDefaultJsonParser('error', 'error');
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
      const text = String(body);
      if (text.trim() === '') return done(null, undefined);
      return json(request, text, done);
    });
    scope.post(
      '/api/account/logout',
      { bodyLimit: SMALL_BODY, preHandler: optionalIdentity(ctx), schema: { ...logoutSchema, body: logoutBodySchema } },
      async (request) => {
        const sessionId = request.identity?.kind === 'user' ? request.identity.sessionId : undefined;
        return ok({ ended: await ctx.accounts.logout(sessionId, request.body ?? {}) });
      },
    );
  });
  app.get('/api/account/logout', { preHandler: optionalIdentity(ctx), schema: logoutSchema }, async (request) => {
    const sessionId = request.identity?.kind === 'user' ? request.identity.sessionId : undefined;
    return ok({ ended: await ctx.accounts.logout(sessionId, {}) });
  });

  registerAccountSettingsRoutes(app, ctx);
}

/** The signed-in account's own settings, and the pages' calls behind the mailed links. */
function registerAccountSettingsRoutes(app: App, ctx: AppContext): void {
  const caller = (request: FastifyRequest) => {
    const user = userOf(request);
    return { userId: user.userId, sessionId: user.sessionId };
  };

  app.post(
    '/api/account/password',
    {
      bodyLimit: SMALL_BODY,
      preHandler: requireUser(ctx),
      schema: {
        tags: ['accounts'],
        summary: 'Change the password (the current one is needed); other sessions end, this one stays',
        description:
          'Code 403030 for a wrong current password (checked under the sign-in slow-down, 429001 with the wait), ' +
          '400 for a new password shorter than 8 characters or equal to the current one. The account address is ' +
          'told by e-mail. `data.ended_sessions` counts the other devices signed out.',
        security: bearer,
        body: changePasswordBodySchema,
        response: { 200: envelopeOf(changePasswordDataSchema) },
      },
    },
    async (request) => {
      const data = await ctx.accountSettings.changePassword(caller(request), request.body);
      return ok(data, message(requestLanguage(request), 'password_changed'));
    },
  );

  app.post(
    '/api/account/email',
    {
      bodyLimit: SMALL_BODY,
      preHandler: requireUser(ctx),
      schema: {
        tags: ['accounts'],
        summary: 'Change the e-mail address: a confirmation link goes to the new address',
        description:
          'Needs the password (403030 when wrong). The address changes only when the link mailed to `new_email` is ' +
          'opened (within 24 hours, once); the current address is told of the request. 409006 when another ' +
          'account has the address, 400 when it is the current one or malformed (312212).',
        security: bearer,
        body: changeEmailBodySchema,
        response: { 200: envelopeOf(changeEmailDataSchema) },
      },
    },
    async (request) => {
      const lang = requestLanguage(request);
      const base = publicBase(ctx.config, request);
      const data = await ctx.accountSettings.requestEmailChange(caller(request), request.body, {
        language: lang,
        base,
      });
      return ok(data, message(lang, 'email_change_sent', { email: data.sent_to }));
    },
  );

  app.post(
    '/api/account/email/confirm',
    {
      bodyLimit: SMALL_BODY,
      schema: {
        tags: ['accounts'],
        summary: 'Confirm a new e-mail address with the token of the mailed link',
        description:
          'No sign-in needed (the link may be opened on another device). The previous address is told. ' +
          'Code 410030 when the link expired, was used or never existed.',
        body: accountLinkBodySchema,
        response: { 200: envelopeOf(confirmEmailDataSchema) },
      },
    },
    async (request) => {
      const data = await ctx.accountSettings.confirmEmailChange(request.body.token);
      return ok(data, message(requestLanguage(request), 'email_changed', { email: data.email }));
    },
  );

  app.post(
    '/api/account/password/forgot',
    {
      bodyLimit: SMALL_BODY,
      schema: {
        tags: ['accounts'],
        summary: 'Forgotten password: mail a single-use link to set a new one',
        description:
          'Answers the same whether or not the address has an account (the link works for an hour, once; only ' +
          'its hash is stored). At most 3 links an hour per address asked for and 20 requests an hour per ' +
          'network address (loopback exempt): 429001 beyond.',
        body: forgotPasswordBodySchema,
        response: { 200: envelopeOf(z.null()) },
      },
    },
    async (request) => {
      const client = clientOf(request);
      await ctx.accountSettings.forgotPassword(request.body, { ...client, base: publicBase(ctx.config, request) });
      return ok(null, message(client.language, 'reset_link_sent'));
    },
  );

  app.post(
    '/api/account/password/reset',
    {
      bodyLimit: SMALL_BODY,
      schema: {
        tags: ['accounts'],
        summary: 'Set a new password with the token of the mailed link; every session ends',
        description:
          'Code 410030 when the link expired, was used or never existed; 400 for a password shorter than 8 ' +
          'characters (the link stays usable then).',
        body: resetPasswordBodySchema,
        response: { 200: envelopeOf(z.null()) },
      },
    },
    async (request) => {
      await ctx.accountSettings.resetPassword(request.body);
      return ok(null, message(requestLanguage(request), 'password_reset_done'));
    },
  );

  app.get(
    '/api/account/sessions',
    {
      preHandler: requireUser(ctx),
      schema: {
        tags: ['accounts'],
        summary: "The account's signed-in devices, most recently used first",
        description:
          'Each with the browser that started it, the address it was last used from, and when it started and ' +
          'was last used (milliseconds; last use is recorded every few minutes). `current` marks this session.',
        security: bearer,
        response: { 200: envelopeOf(accountSessionsDataSchema) },
      },
    },
    async (request) => ok({ items: await ctx.accountSettings.sessions(caller(request)) }),
  );

  app.delete(
    '/api/account/sessions/:id',
    {
      preHandler: requireUser(ctx),
      schema: {
        tags: ['accounts'],
        summary: 'Sign out one of the account’s sessions',
        description: 'Its tokens stop working at once. 404 for an id that is not a working session of the account.',
        security: bearer,
        params: accountSessionParamSchema,
        response: { 200: envelopeOf(z.null()) },
      },
    },
    async (request) => {
      await ctx.accountSettings.revokeSession(caller(request), request.params.id);
      return ok(null);
    },
  );

  app.post(
    '/api/account/sessions/revoke-others',
    {
      preHandler: requireUser(ctx),
      schema: {
        tags: ['accounts'],
        summary: 'Sign out every other session of the account',
        security: bearer,
        response: { 200: envelopeOf(endedSessionsDataSchema) },
      },
    },
    async (request) => ok({ ended: await ctx.accountSettings.revokeOtherSessions(caller(request)) }),
  );

  app.post(
    '/api/account/delete',
    {
      bodyLimit: SMALL_BODY,
      preHandler: requireUser(ctx),
      schema: {
        tags: ['accounts'],
        summary: 'Delete the account with its clouds (and their credentials), tasks, runs, scans and sessions',
        description:
          'Needs the password (403030 when wrong). While other accounts exist, the last operator names one of ' +
          'them in `successor_email` to become the operator (409030 without it, 400 for an address of no other ' +
          'account). The only account of an install may go; the next sign-up then becomes the operator.',
        security: bearer,
        body: deleteAccountBodySchema,
        response: { 200: envelopeOf(deleteAccountDataSchema) },
      },
    },
    async (request) => {
      const data = await ctx.accountSettings.deleteAccount(caller(request), request.body);
      return ok(data, message(requestLanguage(request), 'account_deleted'));
    },
  );
}
