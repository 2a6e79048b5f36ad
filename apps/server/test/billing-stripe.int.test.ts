import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, type CheckoutData, type Order, type UsersMeData } from '@skyferry/contract';
import { STRIPE_API_VERSION, stripeSignature } from '../src/services/billing/stripe.ts';
import { STACKS, startTestApp, type SignedUpUser, type TestApp } from './support/app.ts';
import { FakeStripe } from './support/fake-stripe.ts';
import { caller } from './support/tasks.ts';

// BILLING_MODE=stripe against a fake Stripe on 127.0.0.1 (support/fake-stripe.ts, written from
// Stripe's API reference), with webhooks signed here as Stripe signs them: valid, tampered, replayed,
// duplicated and out-of-order deliveries; a renewal told twice grants one period; cancel, refund and
// the customer portal go to Stripe. Both databases.

const WEBHOOK_SECRET = 'whsec_test_secret_for_skyferry';
const DAY = 86_400_000;

for (const stack of STACKS) {
  describe(`buying through Stripe [${stack.label}]`, () => {
    let t: TestApp;
    let stripe: FakeStripe;
    const call = caller(() => t);

    beforeAll(async () => {
      stripe = await new FakeStripe().start();
      t = await startTestApp({
        dialect: stack.dialect,
        env: {
          BILLING_MODE: 'stripe',
          STRIPE_SECRET_KEY: stripe.secretKey,
          STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
          STRIPE_API_URL: stripe.url,
          PUBLIC_URL: 'https://skyferry.example',
        },
      });
    });
    afterAll(async () => {
      await t?.close();
      await stripe?.stop();
    });

    /** Delivers an event as Stripe does: the JSON body and its `Stripe-Signature`. */
    async function deliver(event: unknown, o: { at?: number; tamper?: (body: string) => string } = {}) {
      const body = JSON.stringify(event);
      const signature = stripeSignature(body, WEBHOOK_SECRET, o.at ?? Math.floor(Date.now() / 1000));
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/billing/webhook/stripe',
        headers: { 'content-type': 'application/json', 'stripe-signature': signature },
        payload: o.tamper ? o.tamper(body) : body,
      });
      return { status: res.statusCode, body: JSON.parse(res.body) as { code: number; data: { applied: number } } };
    }

    const me = async (u: SignedUpUser) =>
      (await call<UsersMeData>('GET', '/api/users/me', { headers: u.headers })).data;
    const licences = (uid: string) =>
      t.ctx.db.kysely.selectFrom('licenses').selectAll().where('user_id', '=', uid).execute();

    async function checkout(u: SignedUpUser, product = 'month') {
      const res = await call<CheckoutData>('POST', '/api/billing/checkout', { headers: u.headers, body: { product } });
      expect(res.code).toBe(0);
      const sessionId = /cs_test_\w+/.exec(res.data.url)?.[0] ?? '';
      return { orderId: res.data.order_id, sessionId, url: res.data.url };
    }

    it('opens a Checkout Session at the configured price, for the order, pinned to one API version', async () => {
      const u = await t.signUp();
      const { sessionId, orderId, url } = await checkout(u, 'quarter');
      expect(url).toBe(`https://checkout.stripe.test/c/pay/${sessionId}`);
      expect(stripe.sessions.get(sessionId)).toMatchObject({
        mode: 'subscription',
        client_reference_id: orderId,
        customer_email: u.email,
        success_url: 'https://skyferry.example/buy?checkout=done',
        line_items: {
          0: {
            price_data: { currency: 'usd', unit_amount: '2499', recurring: { interval: 'month', interval_count: '3' } },
          },
        },
        subscription_data: { metadata: { order_id: orderId, user_id: u.uid } },
      });
      expect(stripe.requests.at(-1)).toMatchObject({ method: 'POST', version: STRIPE_API_VERSION });
      // Nothing is granted before Stripe says it was paid.
      expect((await me(u)).user_info.is_paid).toBe(false);
    });

    it('a valid checkout.session.completed starts the licence; the same event again changes nothing', async () => {
      const u = await t.signUp();
      const { sessionId } = await checkout(u);
      const event = stripe.complete(sessionId);
      expect(await deliver(event)).toMatchObject({ status: 200, body: { code: 0, data: { applied: 1 } } });
      const after = await me(u);
      expect(after.user_info.is_paid).toBe(true);
      expect(after.my_subscribe).toEqual([expect.objectContaining({ data_packet_name: '1 Month', purchase_state: 1 })]);
      expect(await deliver(event)).toMatchObject({ status: 200, body: { data: { applied: 0 } } });
      expect(await licences(u.uid)).toHaveLength(1);
    });

    it('refuses a tampered body, a wrong secret, a missing header and a replay outside 5 minutes', async () => {
      const u = await t.signUp();
      const { sessionId } = await checkout(u);
      const event = stripe.complete(sessionId);
      const tampered = await deliver(event, { tamper: (b) => b.replace('"paid"', '"paid" ') });
      expect(tampered).toMatchObject({ status: 400, body: { code: Code.BAD_REQUEST } });
      const replayed = await deliver(event, { at: Math.floor(Date.now() / 1000) - 301 });
      expect(replayed.status).toBe(400);
      const body = JSON.stringify(event);
      const forged = await t.app.inject({
        method: 'POST',
        url: '/api/billing/webhook/stripe',
        headers: {
          'content-type': 'application/json',
          'stripe-signature': stripeSignature(body, 'whsec_other', Math.floor(Date.now() / 1000)),
        },
        payload: body,
      });
      expect(forged.statusCode).toBe(400);
      const unsigned = await t.app.inject({
        method: 'POST',
        url: '/api/billing/webhook/stripe',
        headers: { 'content-type': 'application/json' },
        payload: body,
      });
      expect(unsigned.statusCode).toBe(400);
      expect((await me(u)).user_info.is_paid).toBe(false);
      // The genuine delivery still applies afterwards (nothing was recorded for the refused ones).
      expect((await deliver(event)).body.data.applied).toBe(1);
      expect((await me(u)).user_info.is_paid).toBe(true);
    });

    it('out of order: the first invoice.paid before checkout.session.completed starts one licence', async () => {
      const u = await t.signUp();
      const { sessionId } = await checkout(u);
      const completed = stripe.complete(sessionId);
      const subscriptionId = String((completed.data as { object: { subscription: string } }).object.subscription);
      expect((await deliver(stripe.invoicePaid(subscriptionId))).body.data.applied).toBe(1);
      expect((await me(u)).user_info.is_paid).toBe(true);
      expect((await deliver(completed)).body.data.applied).toBe(1);
      expect(await licences(u.uid)).toHaveLength(1);
      const orders = await call<{ items: Order[] }>('GET', '/api/billing/orders', { headers: u.headers });
      expect(orders.data.items.map((o) => o.status)).toEqual(['paid']);
    });

    it('answers 424 (Stripe delivers again) when Stripe cannot be asked, and applies the event on the next delivery', async () => {
      const u = await t.signUp();
      const { sessionId } = await checkout(u);
      const completed = stripe.complete(sessionId);
      const subscriptionId = String((completed.data as { object: { subscription: string } }).object.subscription);
      const sub = stripe.subscriptions.get(subscriptionId);
      stripe.subscriptions.delete(subscriptionId);
      const failed = await deliver(completed);
      expect(failed).toMatchObject({ status: 424, body: { code: Code.CLOUD_UNAVAILABLE } });
      expect((await me(u)).user_info.is_paid).toBe(false);
      if (sub) stripe.subscriptions.set(subscriptionId, sub);
      expect((await deliver(completed)).body.data.applied).toBe(1);
      expect((await me(u)).user_info.is_paid).toBe(true);
    });

    it('a renewal told twice (and by another event) grants one period', async () => {
      const u = await t.signUp();
      const { sessionId } = await checkout(u);
      const completed = stripe.complete(sessionId);
      await deliver(completed);
      const subscriptionId = String((completed.data as { object: { subscription: string } }).object.subscription);
      const [before] = await licences(u.uid);
      const renewal = stripe.renew(subscriptionId);
      expect((await deliver(renewal)).body.data.applied).toBe(1);
      expect((await deliver(renewal)).body.data.applied).toBe(0);
      expect((await deliver(stripe.subscriptionUpdated(subscriptionId))).body.data.applied).toBe(1);
      const [after] = await licences(u.uid);
      const sub = stripe.subscriptions.get(subscriptionId);
      expect(after?.expires_at).toBe((sub?.current_period_end ?? 0) * 1000);
      const gained = (after?.expires_at ?? 0) - (before?.expires_at ?? 0);
      expect(gained).toBeGreaterThan(27 * DAY);
      expect(gained).toBeLessThan(32 * DAY);
    });

    it('cancel sets cancel_at_period_end at Stripe; refund pays back the first invoice and ends the licence', async () => {
      const u = await t.signUp();
      const { sessionId, orderId } = await checkout(u);
      const completed = stripe.complete(sessionId);
      await deliver(completed);
      const subscriptionId = String((completed.data as { object: { subscription: string } }).object.subscription);
      expect((await call('POST', '/api/billing/cancel', { headers: u.headers })).code).toBe(0);
      expect(stripe.subscriptions.get(subscriptionId)?.cancel_at_period_end).toBe(true);
      expect((await me(u)).my_subscribe[0]?.purchase_state).toBe(0);
      expect((await me(u)).user_info.is_paid).toBe(true);

      const portal = await call<{ url: string }>('POST', '/api/billing/portal', { headers: u.headers });
      expect(portal.data.url).toMatch(/^https:\/\/billing\.stripe\.test\/p\/session\/cus_/);

      const refunded = await call<Order>('POST', `/api/billing/orders/${orderId}/refund`, { headers: u.headers });
      expect(refunded.data.status).toBe('refunded');
      const invoice = stripe.invoices.get(String((completed.data as { object: { invoice: string } }).object.invoice));
      expect(stripe.refunds.at(-1)).toMatchObject({ payment_intent: invoice?.payment_intent });
      expect(stripe.subscriptions.get(subscriptionId)?.status).toBe('canceled');
      expect((await me(u)).user_info.is_paid).toBe(false);
      // Stripe's own account of the cancellation, later, changes nothing more.
      expect((await deliver(stripe.subscriptionUpdated(subscriptionId))).status).toBe(200);
      expect((await me(u)).user_info.is_paid).toBe(false);
    });

    it('a data packet is a one-off payment, granted with a licence', async () => {
      const u = await t.signUp();
      const first = await checkout(u);
      await deliver(stripe.complete(first.sessionId));
      const packet = await checkout(u, 'packet_100g');
      expect(stripe.sessions.get(packet.sessionId)).toMatchObject({ mode: 'payment' });
      await deliver(stripe.complete(packet.sessionId));
      expect((await me(u)).my_data_packet.additional).toEqual([expect.objectContaining({ name: '100G', usage: 0 })]);
    });
  });
}
