import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Code,
  GB,
  type CheckoutData,
  type BillingOffers,
  type Order,
  type OperatorPlan,
  type UsageReport,
  type UsersMeData,
} from '@skyferry/contract';
import { STACKS, startTestApp, type SignedUpUser, type TestApp } from './support/app.ts';
import { caller } from './support/tasks.ts';

// Buying with BILLING_MODE=test on both databases: the built-in checkout, the licence lifecycle
// (subscribe, renew, cancel at period end, expire, refund within 7 days), packets only with a licence
// and used after the base allowance oldest first, each file charged once, the questionnaire reward
// once per account, and the operator's grants, revocations, usage report and audit.

const DAY = 86_400_000;

for (const stack of STACKS) {
  describe(`buying in test mode [${stack.label}]`, () => {
    let t: TestApp;
    const call = caller(() => t);
    let operator: SignedUpUser;

    beforeAll(async () => {
      t = await startTestApp({
        dialect: stack.dialect,
        env: { BILLING_MODE: 'test', BILLING_CURRENCY: 'eur', BILLING_PRICES: 'month=1200,packet_50g=500' },
      });
      operator = await t.signUp();
    });
    afterAll(async () => {
      await t?.close();
    });

    const me = async (u: SignedUpUser) =>
      (await call<UsersMeData>('GET', '/api/users/me', { headers: u.headers })).data;

    /** Buys a product through the built-in checkout: the order, then Pay (or Decline) on its page. */
    async function buy(u: SignedUpUser, product: string, action: 'complete' | 'decline' = 'complete') {
      const started = await call<CheckoutData>('POST', '/api/billing/checkout', {
        headers: u.headers,
        body: { product },
      });
      expect(started.code).toBe(0);
      const checkout = new URL(started.data.url, 'http://x').searchParams.get('checkout') ?? '';
      const page = await call<Order>('GET', `/api/billing/test-checkout?checkout=${checkout}`, { headers: u.headers });
      expect(page.data).toMatchObject({ id: started.data.order_id, product, status: 'pending' });
      const done = await call<Order>('POST', '/api/billing/test-checkout', {
        headers: u.headers,
        body: { checkout, action },
      });
      expect(done.code).toBe(0);
      return { orderId: started.data.order_id, checkout, order: done.data };
    }

    const licenceRow = async (uid: string) =>
      t.ctx.db.kysely
        .selectFrom('licenses')
        .selectAll()
        .where('user_id', '=', uid)
        .orderBy('created_at', 'desc')
        .executeTakeFirstOrThrow();

    it('offers the three licences and two packets at the configured prices and currency, with the refund days', async () => {
      const res = await call<BillingOffers>('GET', '/api/billing/offers');
      expect(res.data).toMatchObject({ mode: 'test', currency: 'EUR', refund_days: 7, portal: false });
      expect(res.data.licenses.map((l) => [l.id, l.price, l.monthly_allowance])).toEqual([
        ['month', 1200, 150 * GB],
        ['quarter', 2499, 200 * GB],
        ['year', 6999, 400 * GB],
      ]);
      expect(res.data.packets.map((p) => [p.id, p.price, p.size])).toEqual([
        ['packet_50g', 500, 50 * GB],
        ['packet_100g', 1699, 100 * GB],
      ]);
      // The start-up call and the sign-in reply carry the same prices.
      const init = await call<{ licenses: Array<{ price: number; currency: string }> }>('GET', '/api/v2/init');
      expect(init.data.licenses[0]).toMatchObject({ price: 1200, currency: 'EUR' });
    });

    it('a free user buys a month: paid, renewing, 150 GB this month; paying twice grants once', async () => {
      const u = await t.signUp();
      expect((await me(u)).user_info.is_paid).toBe(false);
      // A packet is not sold without a licence.
      const packet = await call('POST', '/api/billing/checkout', {
        headers: u.headers,
        body: { product: 'packet_50g' },
      });
      expect(packet).toMatchObject({ status: 403, code: Code.PREMIUM_REQUIRED });

      const { checkout, order } = await buy(u, 'month');
      expect(order).toMatchObject({ status: 'paid', amount: 1200, currency: 'EUR', refundable: true });
      const after = await me(u);
      expect(after.user_info).toMatchObject({ type: 1, expired: 0, is_paid: true });
      expect(after.my_subscribe).toEqual([expect.objectContaining({ data_packet_name: '1 Month', purchase_state: 1 })]);
      expect(after.my_data_packet.base).toEqual([expect.objectContaining({ size: 150 * GB, usage: 0 })]);

      const again = await call<Order>('POST', '/api/billing/test-checkout', {
        headers: u.headers,
        body: { checkout, action: 'complete' },
      });
      expect(again.data.status).toBe('paid');
      const licences = await t.ctx.db.kysely.selectFrom('licenses').selectAll().where('user_id', '=', u.uid).execute();
      expect(licences).toHaveLength(1);

      // Another account cannot see or answer this checkout.
      const other = await t.signUp();
      const foreign = await call('POST', '/api/billing/test-checkout', {
        headers: other.headers,
        body: { checkout, action: 'complete' },
      });
      expect(foreign).toMatchObject({ status: 404 });
    });

    it('a declined checkout grants nothing', async () => {
      const u = await t.signUp();
      const { order } = await buy(u, 'quarter', 'decline');
      expect(order.status).toBe('declined');
      expect((await me(u)).user_info.is_paid).toBe(false);
    });

    it('renews a renewing licence once per period; cancelled at period end it expires (4011001)', async () => {
      const u = await t.signUp();
      await buy(u, 'month');
      const first = await licenceRow(u.uid);
      // The period has run out: the billing tick renews it once, however often it runs.
      const ended = Date.now() - 1000;
      await t.ctx.db.kysely
        .updateTable('licenses')
        .set({ started_at: ended - 31 * DAY, expires_at: ended })
        .where('id', '=', first.id)
        .execute();
      expect((await me(u)).user_info.is_paid).toBe(false);
      await t.ctx.billing.tick();
      await t.ctx.billing.tick();
      const renewed = await licenceRow(u.uid);
      expect(renewed.id).toBe(first.id);
      const oneMonthLater = new Date(ended);
      oneMonthLater.setUTCMonth(oneMonthLater.getUTCMonth() + 1);
      expect(Math.abs(renewed.expires_at - oneMonthLater.getTime())).toBeLessThan(4 * DAY);
      expect(renewed.expires_at).toBeGreaterThan(Date.now() + 27 * DAY);
      expect((await me(u)).user_info.is_paid).toBe(true);
      // The new month has its own base allowance, unused.
      expect((await me(u)).my_data_packet.base).toEqual([expect.objectContaining({ size: 150 * GB, usage: 0 })]);

      // Cancelled: still paid to the end, purchase_state 0, and not renewed when it runs out.
      expect((await call('POST', '/api/billing/cancel', { headers: u.headers })).code).toBe(0);
      expect((await me(u)).my_subscribe[0]?.purchase_state).toBe(0);
      expect((await me(u)).user_info.is_paid).toBe(true);
      await t.ctx.db.kysely
        .updateTable('licenses')
        .set({ expires_at: Date.now() - 1000 })
        .where('id', '=', first.id)
        .execute();
      expect(await t.ctx.billing.tick()).toBe(0);
      expect((await me(u)).user_info).toMatchObject({ type: 1, expired: 1, is_paid: false });
      expect(await t.ctx.users.licenceStatus(u.uid)).toBe('expired');
      const task = await call('POST', '/api/tasks', {
        headers: u.headers,
        body: { task_type: 0, from_cloud: { cloud_id: 'x', paths: ['/a'] }, to_cloud: { cloud_id: 'y', path: '/' } },
      });
      expect(task.code).toBe(Code.LICENSE_EXPIRED);
    });

    it('refunds in full within 7 days, ending the licence and its packets; not after', async () => {
      const u = await t.signUp();
      const { orderId } = await buy(u, 'month');
      await t.ctx.users.chargeTraffic(u.uid, 1000);
      const refunded = await call<Order>('POST', `/api/billing/orders/${orderId}/refund`, { headers: u.headers });
      expect(refunded.data).toMatchObject({ status: 'refunded', refundable: false });
      const after = await me(u);
      expect(after.user_info.is_paid).toBe(false);
      expect(after.my_data_packet.base).toEqual([]);
      expect(await t.ctx.users.remainingTraffic(u.uid)).toBe(0);
      // Refunding twice is refused.
      expect((await call('POST', `/api/billing/orders/${orderId}/refund`, { headers: u.headers })).status).toBe(400);

      const late = await buy(u, 'month');
      await t.ctx.db.kysely
        .updateTable('billing_orders')
        .set({ paid_at: Date.now() - 8 * DAY })
        .where('id', '=', late.orderId)
        .execute();
      const refused = await call('POST', `/api/billing/orders/${late.orderId}/refund`, { headers: u.headers });
      expect(refused).toMatchObject({ status: 400 });
      expect(refused.msg).toContain('7 days');
      expect((await me(u)).user_info.is_paid).toBe(true);
      // Not someone else's order.
      const other = await t.signUp();
      expect(
        (await call('POST', `/api/billing/orders/${late.orderId}/refund`, { headers: other.headers })).status,
      ).toBe(404);
      const orders = await call<{ items: Order[] }>('GET', '/api/billing/orders', { headers: u.headers });
      expect(orders.data.items.map((o) => o.status)).toEqual(['paid', 'refunded']);
    });

    it('uses packets after the base allowance, the oldest first, and charges each file of a run once', async () => {
      const u = await t.signUp();
      await buy(u, 'month');
      await buy(u, 'packet_50g');
      await buy(u, 'packet_100g');
      const base = 150 * GB;
      // The whole base, plus 10 bytes: they come from the older (50G) packet.
      expect(await t.ctx.users.chargeTraffic(u.uid, base + 10, 'task1:run1:/a')).toEqual({
        charged: base + 10,
        shortfall: 0,
      });
      // The same file of the same run again (a resumed attempt copying it once more): not charged again.
      expect((await t.ctx.users.chargeTraffic(u.uid, base + 10, 'task1:run1:/a')).shortfall).toBe(0);
      let packets = (await me(u)).my_data_packet;
      expect(packets.base[0]?.usage).toBe(base);
      expect(packets.additional.map((p) => [p.name, p.usage])).toEqual([
        ['50G', 10],
        ['100G', 0],
      ]);
      // Past the 50G packet, into the 100G one.
      await t.ctx.users.chargeTraffic(u.uid, 50 * GB, 'task1:run1:/b');
      packets = (await me(u)).my_data_packet;
      expect(packets.additional.map((p) => [p.name, p.usage])).toEqual([
        ['50G', 50 * GB],
        ['100G', 10],
      ]);
    });

    it('grants the questionnaire reward of 30 GB once per account', async () => {
      const u = await t.signUp();
      await buy(u, 'month');
      expect((await call('GET', '/api/billing/survey', { headers: u.headers })).data).toEqual({
        answered: false,
        reward: 30 * GB,
      });
      const answer = { found_by: 'friend', main_use: 'migrate', recommend: 9 };
      const first = await call('POST', '/api/billing/survey', { headers: u.headers, body: answer });
      expect(first.data).toEqual({ answered: true, reward: 0 });
      expect((await me(u)).my_data_packet.additional).toEqual([expect.objectContaining({ size: 30 * GB })]);
      const second = await call('POST', '/api/billing/survey', { headers: u.headers, body: answer });
      expect(second).toMatchObject({ status: 409, code: Code.ALREADY_EXISTS });
      expect((await me(u)).my_data_packet.additional).toHaveLength(1);
    });

    it('an operator grants, extends and revokes plans, sees usage, and every change is audited', async () => {
      const u = await t.signUp(undefined, undefined, { operator: false });
      const until = Math.floor((Date.now() + 20 * DAY) / 1000);
      const granted = await call<OperatorPlan>('PUT', `/api/operator/users/${u.uid}/plan`, {
        headers: operator.headers,
        body: { plan: 'year', until },
      });
      expect(granted.data).toMatchObject({ plan: 'year', expire: until, renewing: false });
      expect((await me(u)).user_info.is_paid).toBe(true);
      const extended = await call<OperatorPlan>('PUT', `/api/operator/users/${u.uid}/plan`, {
        headers: operator.headers,
        body: { plan: 'year', until: until + 86_400 },
      });
      expect(extended.data.expire).toBe(until + 86_400);
      // Another plan until a date replaces the running one.
      const switched = await call<OperatorPlan>('PUT', `/api/operator/users/${u.uid}/plan`, {
        headers: operator.headers,
        body: { plan: 'quarter', until: until - 86_400 },
      });
      expect(switched.data).toMatchObject({ plan: 'quarter', expire: until - 86_400 });
      const running = await t.ctx.db.kysely
        .selectFrom('licenses')
        .select('plan_id')
        .where('user_id', '=', u.uid)
        .where('expires_at', '>', Date.now())
        .execute();
      expect(running.map((l) => l.plan_id)).toEqual(['quarter']);
      await call('PUT', `/api/operator/users/${u.uid}/plan`, {
        headers: operator.headers,
        body: { plan: 'year', until: until + 86_400 },
      });
      const usage = await call<UsageReport>('GET', '/api/operator/billing/usage?page_size=100', {
        headers: operator.headers,
      });
      expect(usage.data.items.find((r) => r.uid === u.uid)).toMatchObject({
        plan: 'year',
        allowance: 400 * GB,
        used: 0,
      });
      const revoked = await call<OperatorPlan>('DELETE', `/api/operator/users/${u.uid}/plan`, {
        headers: operator.headers,
      });
      expect(revoked.data).toMatchObject({ plan: null, expire: 0 });
      expect((await me(u)).user_info.is_paid).toBe(false);
      const audit = await call<{ items: Array<{ action: string; actor: string }> }>(
        'GET',
        `/api/operator/billing/audit?uid=${u.uid}`,
        { headers: operator.headers },
      );
      // Changes made in the same millisecond may list in either order.
      expect(audit.data.items.map((a) => a.action).sort()).toEqual([
        'licence_extended',
        'licence_granted',
        'licence_granted',
        'licence_granted',
        'licence_revoked',
        'licence_revoked',
        'licence_revoked',
      ]);
      expect(audit.data.items.every((a) => a.actor === operator.uid)).toBe(true);
      // Not for other accounts.
      const denied = await call('PUT', `/api/operator/users/${u.uid}/plan`, {
        headers: u.headers,
        body: { plan: 'month' },
      });
      expect(denied.code).toBe(Code.OPERATOR_REQUIRED);
      expect((await call('GET', '/api/operator/billing/usage', { headers: u.headers })).code).toBe(
        Code.OPERATOR_REQUIRED,
      );
    });
  });
}

describe('buying with billing off', () => {
  let t: TestApp;
  const call = caller(() => t);
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it("sells nothing: checkout answers 403003 in the caller's language", async () => {
    const u = await t.signUp();
    expect((await call<BillingOffers>('GET', '/api/billing/offers')).data.mode).toBe('off');
    const res = await call('POST', '/api/billing/checkout', {
      headers: { ...u.headers, 'accept-language': 'de' },
      body: { product: 'month' },
    });
    expect(res).toMatchObject({
      status: 403,
      code: Code.FORBIDDEN,
      msg: 'Kaufen ist auf diesem Server nicht verfügbar.',
    });
  });
});
