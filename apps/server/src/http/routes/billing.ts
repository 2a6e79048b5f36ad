import { z } from 'zod';
import {
  Code,
  auditDataSchema,
  billingOffersSchema,
  checkoutBodySchema,
  checkoutDataSchema,
  envelopeOf,
  ok,
  operatorPlanBodySchema,
  operatorPlanSchema,
  operatorUserParamSchema,
  operatorUsersQuerySchema,
  orderParamSchema,
  orderSchema,
  ordersDataSchema,
  portalDataSchema,
  surveyBodySchema,
  surveyStateSchema,
  testCheckoutBodySchema,
  usageReportSchema,
} from '@skyferry/contract';
import type { AppContext } from '../../context.ts';
import { WebhookRejected } from '../../services/billing/index.ts';
import { StripeProvider } from '../../services/billing/stripe.ts';
import type { App } from '../app-types.ts';
import { requireUser, userOf } from '../auth.ts';
import { ApiError, errors } from '../errors.ts';

const security: Array<Record<string, string[]>> = [{ bearer: [] }];
const SMALL_BODY = 16 * 1024;

/**
 * Buying (DECISIONS: billing off / test / stripe): offers, checkout, orders and refunds, cancelling
 * renewal, the provider's portal and webhook, the questionnaire, and the operator's plan changes.
 */
export default async function billingRoutes(app: App, ctx: AppContext): Promise<void> {
  const returnUrl = (state: string) => `${ctx.config.publicUrl}/buy?checkout=${state}`;

  app.get(
    '/api/billing/offers',
    {
      schema: {
        tags: ['billing'],
        summary: 'The licences and data packets on offer, their prices and currency, and the refund days',
        description: "No authentication needed. `mode` is the server's BILLING_MODE (`off`: nothing is sold).",
        response: { 200: envelopeOf(billingOffersSchema) },
      },
    },
    async () => ok(ctx.billing.offers()),
  );

  app.post(
    '/api/billing/checkout',
    {
      bodyLimit: SMALL_BODY,
      preHandler: requireUser(ctx),
      schema: {
        tags: ['billing'],
        summary: 'Start buying a licence or a data packet: an order and the checkout address to open',
        description:
          '403003 with billing off; 403001 for a data packet without an active licence (packets work only ' +
          'with one). The licence or packet is granted when the provider tells the payment (its webhook, or ' +
          'the built-in test checkout); poll GET /api/users/me.',
        security,
        body: checkoutBodySchema,
        response: { 200: envelopeOf(checkoutDataSchema) },
      },
    },
    async (request) =>
      ok(
        await ctx.billing.checkout(userOf(request).userId, request.body.product, {
          success: returnUrl('done'),
          cancel: returnUrl('cancelled'),
        }),
      ),
  );

  app.get(
    '/api/billing/orders',
    {
      preHandler: requireUser(ctx),
      schema: {
        tags: ['billing'],
        summary: "The caller's orders, the newest first, with whether each can still be refunded",
        security,
        response: { 200: envelopeOf(ordersDataSchema) },
      },
    },
    async (request) => ok({ items: await ctx.billing.orders(userOf(request).userId) }),
  );

  app.post(
    '/api/billing/orders/:id/refund',
    {
      bodyLimit: SMALL_BODY,
      preHandler: requireUser(ctx),
      schema: {
        tags: ['billing'],
        summary: 'Refund a paid order in full (within the refund days): its licence or packet ends now',
        description: "404 for an order that is not the caller's; 400 after the refund days or when not paid.",
        security,
        params: orderParamSchema,
        response: { 200: envelopeOf(orderSchema) },
      },
    },
    async (request) => ok(await ctx.billing.refund(userOf(request).userId, request.params.id)),
  );

  app.post(
    '/api/billing/cancel',
    {
      bodyLimit: SMALL_BODY,
      preHandler: requireUser(ctx),
      schema: {
        tags: ['billing'],
        summary: "Stop the caller's licence renewing; it runs to its end (purchase_state becomes 0)",
        security,
        response: { 200: envelopeOf(z.null()) },
      },
    },
    async (request) => {
      await ctx.billing.cancel(userOf(request).userId);
      return ok(null);
    },
  );

  app.post(
    '/api/billing/portal',
    {
      bodyLimit: SMALL_BODY,
      preHandler: requireUser(ctx),
      schema: {
        tags: ['billing'],
        summary: "The payment provider's customer portal for the caller (cards, invoices, cancelling)",
        description: '404 when the provider has none or the caller never bought through it.',
        security,
        response: { 200: envelopeOf(portalDataSchema) },
      },
    },
    async (request) => ok({ url: await ctx.billing.portal(userOf(request).userId, returnUrl('portal')) }),
  );

  app.get(
    '/api/billing/test-checkout',
    {
      preHandler: requireUser(ctx),
      schema: {
        tags: ['billing'],
        summary: 'The order of a built-in test checkout (BILLING_MODE=test), for its page',
        description: "404 unless the checkout is the caller's and billing is `test`.",
        security,
        querystring: testCheckoutBodySchema.pick({ checkout: true }),
        response: { 200: envelopeOf(orderSchema) },
      },
    },
    async (request) => ok(await ctx.billing.testCheckoutOrder(userOf(request).userId, request.query.checkout)),
  );

  app.post(
    '/api/billing/test-checkout',
    {
      bodyLimit: SMALL_BODY,
      preHandler: requireUser(ctx),
      schema: {
        tags: ['billing'],
        summary: 'Complete or decline a built-in test checkout (BILLING_MODE=test): no payment network',
        description:
          "Goes through the same event handling as a payment provider's webhook. 404 unless the checkout is " +
          "the caller's and billing is `test`. Completing twice grants once.",
        security,
        body: testCheckoutBodySchema,
        response: { 200: envelopeOf(orderSchema) },
      },
    },
    async (request) =>
      ok(await ctx.billing.testCheckout(userOf(request).userId, request.body.checkout, request.body.action)),
  );

  // Stripe signs the exact bytes it sends: the body is kept as text and parsed after the check.
  await app.register(async (scope) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser(['application/json', 'text/plain'], { parseAs: 'string' }, (_request, body, done) =>
      done(null, String(body)),
    );
    scope.post(
      '/api/billing/webhook/stripe',
      {
        bodyLimit: 512 * 1024,
        schema: {
          tags: ['billing'],
          summary: "Stripe's webhook (BILLING_MODE=stripe): checkout, subscription, invoice and refund events",
          description:
            'Verified with the `Stripe-Signature` header (HMAC-SHA256, a 300-second window); 400 when it does not ' +
            'verify; 424 when Stripe cannot be asked (Stripe delivers the event again). An event id is applied once; ' +
            "a subscription's state is fetched from Stripe.",
          body: z.string(),
          response: { 200: envelopeOf(z.object({ applied: z.number().int() })) },
        },
      },
      async (request) => {
        const provider = ctx.billing.provider;
        if (!(provider instanceof StripeProvider)) throw errors.notFound();
        // Stripe could not be asked (or the database failed): 424, and Stripe delivers the event again later.
        const stripeUnavailable = (err: unknown) => {
          request.log.warn({ err }, 'stripe webhook not applied');
          return new ApiError(Code.CLOUD_UNAVAILABLE, 'server_error');
        };
        const signature = request.headers['stripe-signature'];
        let events;
        try {
          events = await provider.events(String(request.body), typeof signature === 'string' ? signature : undefined);
        } catch (err) {
          if (err instanceof WebhookRejected)
            throw errors.badRequest('invalid_request', { detail: `webhook rejected: ${err.message}` });
          throw stripeUnavailable(err);
        }
        let applied = 0;
        try {
          for (const e of events) if (await ctx.billing.apply('stripe', e)) applied++;
        } catch (err) {
          throw stripeUnavailable(err);
        }
        return ok({ applied });
      },
    );
  });

  app.get(
    '/api/billing/survey',
    {
      preHandler: requireUser(ctx),
      schema: {
        tags: ['billing'],
        summary: 'Whether the caller answered the questionnaire, and the traffic its completion grants',
        security,
        response: { 200: envelopeOf(surveyStateSchema) },
      },
    },
    async (request) => ok(await ctx.billing.surveyState(userOf(request).userId)),
  );

  app.post(
    '/api/billing/survey',
    {
      bodyLimit: SMALL_BODY,
      preHandler: requireUser(ctx),
      schema: {
        tags: ['billing'],
        summary: 'Answer the questionnaire: 30 GB of data, once per account',
        description: '409002 when the account answered before (nothing more is granted).',
        security,
        body: surveyBodySchema,
        response: { 200: envelopeOf(surveyStateSchema) },
      },
    },
    async (request) => ok(await ctx.billing.answerSurvey(userOf(request).userId, request.body)),
  );

  // The operator's plan changes (operators only: 403005 for anyone else).
  const operator = async (request: Parameters<typeof userOf>[0]) => {
    const row = await ctx.authz.requireOperator(userOf(request));
    return row.id;
  };

  app.put(
    '/api/operator/users/:uid/plan',
    {
      bodyLimit: SMALL_BODY,
      preHandler: requireUser(ctx),
      schema: {
        tags: ['operator'],
        summary: "Give a user a plan until a date (or the plan's months), or extend their current plan",
        description: 'Operators only (403005). Audited. 404 for an unknown user; 400 for a date in the past.',
        security,
        params: operatorUserParamSchema,
        body: operatorPlanBodySchema,
        response: { 200: envelopeOf(operatorPlanSchema) },
      },
    },
    async (request) => {
      const actor = await operator(request);
      const { plan, until } = request.body;
      return ok(
        await ctx.billing.grant(actor, request.params.uid, plan, until === undefined ? undefined : until * 1000),
      );
    },
  );

  app.delete(
    '/api/operator/users/:uid/plan',
    {
      preHandler: requireUser(ctx),
      schema: {
        tags: ['operator'],
        summary: "Take a user's running licences back now (their packets end with them)",
        description: 'Operators only (403005). Audited. 404 for an unknown user.',
        security,
        params: operatorUserParamSchema,
        response: { 200: envelopeOf(operatorPlanSchema) },
      },
    },
    async (request) => ok(await ctx.billing.revoke(await operator(request), request.params.uid)),
  );

  app.get(
    '/api/operator/billing/usage',
    {
      preHandler: requireUser(ctx),
      schema: {
        tags: ['operator'],
        summary: 'Per account: plan, allowance and traffic used now, bought packets',
        description: 'Operators only (403005).',
        security,
        querystring: operatorUsersQuerySchema,
        response: { 200: envelopeOf(usageReportSchema) },
      },
    },
    async (request) => {
      await operator(request);
      const { page, page_size } = request.query;
      return ok(await ctx.billing.usage((page - 1) * page_size, page_size));
    },
  );

  app.get(
    '/api/operator/billing/audit',
    {
      preHandler: requireUser(ctx),
      schema: {
        tags: ['operator'],
        summary: 'The changes to plans (purchases, renewals, refunds, grants, revocations), the newest first',
        description: 'Operators only (403005).',
        security,
        querystring: z.object({ uid: z.string().min(1).max(64).optional() }),
        response: { 200: envelopeOf(auditDataSchema) },
      },
    },
    async (request) => {
      await operator(request);
      return ok({ items: await ctx.billing.auditLog(request.query.uid) });
    },
  );
}
