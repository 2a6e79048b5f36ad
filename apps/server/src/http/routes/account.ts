import { z } from 'zod';
import {
  authorizationDataSchema,
  authorizationsBodySchema,
  envelopeOf,
  logoutBodySchema,
  ok,
  signInBodySchema,
  signUpBodySchema,
} from '@skyferry/contract';
import type { AppContext } from '../../context.ts';
import type { App } from '../app-types.ts';
import { optionalIdentity } from '../auth.ts';
import { requestLanguage } from '../language.ts';

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
        description: 'Answers the same data as POST /api/v2/authorizations. Passwords: 8 to 256 characters.',
        body: signUpBodySchema,
        response: { 200: envelopeOf(authorizationDataSchema) },
      },
    },
    async (request) =>
      ok(await ctx.accounts.signUp(request.body, { ip: request.ip, language: requestLanguage(request) })),
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
    async (request) =>
      ok(await ctx.accounts.signIn(request.body, { ip: request.ip, language: requestLanguage(request) })),
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
    async (request) => ok(await ctx.accounts.authorize(request.body)),
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
}
