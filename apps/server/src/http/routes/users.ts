import { z } from 'zod';
import { envelopeOf, message, notifyEmailBodySchema, ok, usersMeDataSchema } from '@skyferry/contract';
import type { AppContext } from '../../context.ts';
import { checkEmail } from '../../services/accounts.ts';
import type { App } from '../app-types.ts';
import { requireUser, userOf } from '../auth.ts';
import { errors } from '../errors.ts';
import { requestLanguage } from '../language.ts';

export default async function userRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/api/users/me',
    {
      preHandler: requireUser(ctx),
      schema: {
        tags: ['accounts'],
        summary: 'The signed-in user: info, data packets, subscriptions',
        security: [{ bearer: [] }],
        response: { 200: envelopeOf(usersMeDataSchema) },
      },
    },
    async (request) => {
      const me = await ctx.users.me(userOf(request).userId);
      if (!me) throw errors.unauthenticated();
      return ok(me);
    },
  );

  app.post(
    '/api/users/notify-email',
    {
      bodyLimit: 16 * 1024,
      preHandler: requireUser(ctx),
      schema: {
        tags: ['accounts'],
        summary: 'Set where and whether transfer e-mails are sent',
        description:
          'msg is the message to show under the e-mail field (also on errors: code 312212 for a bad address).',
        security: [{ bearer: [] }],
        body: notifyEmailBodySchema,
        response: { 200: envelopeOf(z.null()) },
      },
    },
    async (request) => {
      const email = checkEmail(request.body.notify_email);
      await ctx.users.setNotifySettings(userOf(request).userId, email, request.body.remind_me === 1);
      return ok(null, message(requestLanguage(request), 'notify_email_saved'));
    },
  );
}
