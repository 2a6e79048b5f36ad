import {
  Code,
  DATA_PACKETS,
  LICENSES,
  REFUND_DAYS,
  QUESTIONNAIRE_REWARD_BYTES,
  type BillingMode,
  type BillingOffers,
  type LicenseId,
  type Order,
  type OperatorPlan,
  type ProductId,
  type SurveyBody,
  type SurveyState,
  type UsageReport,
} from '@skyferry/contract';
import type { Logger } from 'pino';
import type { BillingConfig } from '../../config.ts';
import { ApiError, errors } from '../../http/errors.ts';
import type { BillingRepository, OrderRow } from '../../repositories/billing.ts';
import type { LicenseRow, PlansRepository } from '../../repositories/plans.ts';
import type { UsersRepository } from '../../repositories/users.ts';
import { newId } from '../crypto.ts';
import { addMonths, type UsersService } from '../users.ts';
import type { BillingEvent, PaymentProvider } from './provider.ts';

export type { BillingEvent, PaymentProvider } from './provider.ts';
export { WebhookRejected } from './provider.ts';

const DAY = 86_400_000;
const seconds = (ms: number) => Math.floor(ms / 1000);
const isLicense = (p: string): p is LicenseId => LICENSES.some((l) => l.id === p);

/** Who changed a plan, for the audit: an operator's id, or `checkout`, `cli`, `system`. */
export type Actor = string;

/**
 * Buying (DECISIONS: billing off / test / a payment provider): offers and prices from the operator's
 * configuration, checkout through the provider, and the licence lifecycle the provider's events
 * drive: paid (a licence or a packet), renewed (a subscription's new period), cancelled at period
 * end, ended, refunded within REFUND_DAYS (ending the licence and its packets). Every event is
 * applied once (by its id) and every change of a plan is audited.
 */
export class BillingService {
  readonly mode: BillingMode;
  private readonly config: BillingConfig;
  private readonly repo: BillingRepository;
  private readonly plans: PlansRepository;
  private readonly users: UsersService;
  private readonly usersRepo: UsersRepository;
  readonly provider: PaymentProvider | undefined;
  private readonly log: Logger;
  private readonly now: () => number;

  constructor(deps: {
    mode: BillingMode;
    config: BillingConfig;
    repo: BillingRepository;
    plans: PlansRepository;
    users: UsersService;
    usersRepo: UsersRepository;
    provider: PaymentProvider | undefined;
    log: Logger;
    now?: () => number;
  }) {
    this.mode = deps.mode;
    this.config = deps.config;
    this.repo = deps.repo;
    this.plans = deps.plans;
    this.users = deps.users;
    this.usersRepo = deps.usersRepo;
    this.provider = deps.provider;
    this.log = deps.log;
    this.now = deps.now ?? Date.now;
  }

  /** GET /api/billing/offers. */
  offers(): BillingOffers {
    const { currency, prices } = this.config;
    return {
      mode: this.mode,
      currency,
      licenses: this.users.licenseOffers(),
      packets: DATA_PACKETS.map((p) => ({ id: p.id, name: p.name, size: p.size, price: prices[p.id], currency })),
      refund_days: REFUND_DAYS,
      portal: this.provider?.portal !== undefined,
    };
  }

  private requireProvider(): PaymentProvider {
    if (!this.provider) throw new ApiError(Code.FORBIDDEN, 'billing_unavailable');
    return this.provider;
  }

  private async audit(userId: string | null, actor: Actor, action: string, detail: object): Promise<void> {
    await this.repo.audit({
      id: newId(),
      user_id: userId,
      actor,
      action,
      detail: JSON.stringify(detail),
      created_at: this.now(),
    });
  }

  /** POST /api/billing/checkout: an order and the provider's checkout for it. */
  async checkout(userId: string, product: ProductId, urls: { success: string; cancel: string }) {
    const provider = this.requireProvider();
    const user = await this.users.get(userId);
    if (!user) throw errors.unauthenticated();
    const plan = LICENSES.find((l) => l.id === product);
    const packet = DATA_PACKETS.find((p) => p.id === product);
    // Data packets work only with an active licence (spec section 9): not sold without one.
    if (packet && !(await this.users.activeLicense(userId, this.now())))
      throw new ApiError(Code.PREMIUM_REQUIRED, 'packet_needs_license');
    const now = this.now();
    const order: OrderRow = {
      id: newId(),
      user_id: userId,
      product,
      amount: this.config.prices[product],
      currency: this.config.currency,
      provider: provider.name,
      status: 'pending',
      checkout_id: null,
      subscription_id: null,
      payment_id: null,
      license_id: null,
      packet_id: null,
      paid_at: null,
      created_at: now,
      updated_at: now,
    };
    await this.repo.insertOrder(order);
    const { checkoutId, url } = await provider.createCheckout({
      order,
      email: user.email,
      customerId: await this.repo.customer(userId, provider.name),
      item: plan ? { name: plan.name, plan: { id: plan.id, months: plan.months } } : { name: packet?.name ?? product },
      successUrl: urls.success,
      cancelUrl: urls.cancel,
    });
    await this.repo.updateOrder(order.id, { checkout_id: checkoutId, updated_at: now });
    return { order_id: order.id, url };
  }

  private toOrder(o: OrderRow): Order {
    return {
      id: o.id,
      product: o.product as ProductId,
      amount: o.amount,
      currency: o.currency,
      status: o.status as Order['status'],
      created_at: seconds(o.created_at),
      paid_at: o.paid_at === null ? null : seconds(o.paid_at),
      refundable: this.refundable(o),
    };
  }

  private refundable(o: OrderRow): boolean {
    return o.status === 'paid' && o.paid_at !== null && this.now() - o.paid_at <= REFUND_DAYS * DAY;
  }

  async orders(userId: string): Promise<Order[]> {
    return (await this.repo.ordersOf(userId)).map((o) => this.toOrder(o));
  }

  /** The order a test checkout page shows (its id is the capability). */
  async testCheckoutOrder(userId: string, checkoutId: string): Promise<Order> {
    const order = await this.repo.orderByCheckout(checkoutId);
    if (!order || order.user_id !== userId || this.provider?.name !== 'test') throw errors.notFound();
    return this.toOrder(order);
  }

  /** POST /api/billing/test-checkout: the built-in checkout's Pay or Decline, as the provider's event. */
  async testCheckout(userId: string, checkoutId: string, action: 'complete' | 'decline'): Promise<Order> {
    const order = await this.repo.orderByCheckout(checkoutId);
    if (!order || order.user_id !== userId || this.provider?.name !== 'test') throw errors.notFound();
    const plan = LICENSES.find((l) => l.id === order.product);
    // No period given: the licence starts now, or when the account's current one ends.
    const event: BillingEvent =
      action === 'decline'
        ? { id: `decline:${order.id}`, type: 'declined', orderId: order.id }
        : {
            id: `paid:${order.id}`,
            type: 'paid',
            orderId: order.id,
            subscriptionId: plan ? `tsub_${order.id}` : undefined,
            paymentId: `tpay_${order.id}`,
          };
    await this.apply('test', event);
    return this.toOrder((await this.repo.order(order.id)) ?? order);
  }

  /**
   * Applies a provider's event once (by its id). When applying fails the record is dropped again,
   * so the provider's next delivery of it is applied. Answers whether it was applied now.
   */
  async apply(provider: string, event: BillingEvent): Promise<boolean> {
    if (!(await this.repo.recordEvent(provider, event.id, event.type, this.now()))) return false;
    try {
      switch (event.type) {
        case 'paid':
          await this.paid(provider, event);
          break;
        case 'declined':
          await this.repo.transitionOrder(event.orderId, ['pending'], { status: 'declined', updated_at: this.now() });
          break;
        case 'subscription':
          await this.subscription(provider, event);
          break;
        case 'refunded':
          for (const paymentId of event.paymentIds) {
            const order = await this.repo.orderByPayment(paymentId);
            if (order) await this.endRefunded(order, 'provider');
          }
          break;
      }
    } catch (err) {
      await this.repo.forgetEvent(provider, event.id);
      throw err;
    }
    return true;
  }

  /** An order paid: its licence or packet, created once (the order's move to paid decides who creates it). */
  private async paid(provider: string, e: Extract<BillingEvent, { type: 'paid' }>): Promise<void> {
    const order = await this.repo.order(e.orderId);
    if (!order) {
      this.log.warn({ orderId: e.orderId }, 'billing: a payment for an unknown order');
      return;
    }
    const now = this.now();
    const moved = await this.repo.transitionOrder(order.id, ['pending', 'declined'], {
      status: 'paid',
      paid_at: now,
      subscription_id: e.subscriptionId ?? null,
      payment_id: e.paymentId ?? null,
      updated_at: now,
    });
    if (!moved) return;
    if (e.customerId) await this.repo.setCustomer(order.user_id, provider, e.customerId);
    if (isLicense(order.product)) {
      const license = await this.users.grantLicense(order.user_id, order.product, {
        source: provider,
        externalId: e.subscriptionId ?? null,
        renewing: true,
        startsAt: e.periodStart ?? now,
        ...(e.periodEnd !== undefined ? { expiresAt: e.periodEnd } : {}),
      });
      await this.repo.updateOrder(order.id, { license_id: license.id });
      await this.audit(order.user_id, 'checkout', 'licence_bought', {
        order: order.id,
        plan: order.product,
        expires_at: license.expires_at,
      });
    } else {
      const packet = await this.users.grantDataPacket(order.user_id, order.product as 'packet_50g' | 'packet_100g');
      await this.repo.updateOrder(order.id, { packet_id: packet.id });
      await this.audit(order.user_id, 'checkout', 'packet_bought', { order: order.id, packet: order.product });
    }
  }

  /**
   * A subscription's state (after a renewal, a cancellation, its end). It sets absolute values (the
   * period's end, renewing), so a renewal told twice, or events told out of order, grant one period.
   */
  private async subscription(provider: string, e: Extract<BillingEvent, { type: 'subscription' }>): Promise<void> {
    const license = await this.plans.licenseByExternal(provider, e.subscriptionId);
    if (!license) {
      // Its checkout's event has not come yet: this one starts the licence from the order.
      const orderId = e.orderId ?? (await this.repo.orderBySubscription(e.subscriptionId))?.id;
      if (e.active && orderId) {
        await this.paid(provider, {
          id: e.id,
          type: 'paid',
          orderId,
          subscriptionId: e.subscriptionId,
          customerId: e.customerId,
          periodStart: e.periodStart,
          periodEnd: e.periodEnd,
        });
        const created = await this.plans.licenseByExternal(provider, e.subscriptionId);
        if (created && !e.renewing) await this.plans.updateLicense(created.user_id, created.id, { renewing: 0 });
      }
      return;
    }
    const order = await this.repo.orderBySubscription(e.subscriptionId);
    if (order?.status === 'refunded') return;
    const now = this.now();
    if (e.active) {
      const expiresAt = Math.max(license.expires_at, e.periodEnd);
      await this.plans.updateLicense(license.user_id, license.id, {
        expires_at: expiresAt,
        renewing: e.renewing ? 1 : 0,
        updated_at: now,
      });
      if (expiresAt > license.expires_at)
        await this.audit(license.user_id, 'checkout', 'licence_renewed', {
          licence: license.id,
          expires_at: expiresAt,
        });
      else if ((license.renewing === 1) !== e.renewing)
        await this.audit(license.user_id, 'checkout', e.renewing ? 'renewal_resumed' : 'renewal_cancelled', {
          licence: license.id,
        });
    } else {
      const end = Math.min(license.expires_at, e.endedAt ?? now);
      await this.plans.updateLicense(license.user_id, license.id, { expires_at: end, renewing: 0, updated_at: now });
      await this.plans.endPackets(license.user_id, end, { licenseId: license.id });
      await this.audit(license.user_id, 'checkout', 'licence_ended', { licence: license.id, ended_at: end });
    }
  }

  /** An order paid back: a licence ends now with its packets; a packet ends now. */
  private async endRefunded(order: OrderRow, actor: Actor): Promise<void> {
    const now = this.now();
    if (!(await this.repo.transitionOrder(order.id, ['paid'], { status: 'refunded', updated_at: now }))) return;
    if (order.license_id) {
      await this.plans.updateLicense(order.user_id, order.license_id, {
        expires_at: now,
        renewing: 0,
        updated_at: now,
      });
      await this.plans.endPackets(order.user_id, now, { licenseId: order.license_id });
    }
    if (order.packet_id) await this.plans.endPackets(order.user_id, now, { packetId: order.packet_id });
    await this.audit(order.user_id, actor, 'refunded', { order: order.id, product: order.product });
  }

  /** POST /api/billing/orders/{id}/refund: in full, within REFUND_DAYS of the payment. */
  async refund(userId: string, orderId: string): Promise<Order> {
    const order = await this.repo.order(orderId);
    if (!order || order.user_id !== userId) throw errors.notFound();
    const provider = this.requireProvider();
    if (!this.refundable(order)) throw errors.badRequest('order_not_refundable', { days: REFUND_DAYS });
    await provider.refund(order);
    await this.endRefunded(order, userId);
    return this.toOrder((await this.repo.order(order.id)) ?? order);
  }

  /** POST /api/billing/cancel: the current licence stops renewing; it runs to its end. */
  async cancel(userId: string): Promise<void> {
    const provider = this.requireProvider();
    const license = await this.users.activeLicense(userId, this.now());
    if (!license || license.renewing === 0) return;
    if (license.external_id && license.source === provider.name) {
      const event = await provider.cancelAtPeriodEnd(license.external_id);
      if (event) await this.apply(provider.name, event);
    }
    await this.plans.updateLicense(userId, license.id, { renewing: 0, updated_at: this.now() });
    await this.audit(userId, userId, 'renewal_cancelled', { licence: license.id });
  }

  /** POST /api/billing/portal: the provider's customer portal for this account. */
  async portal(userId: string, returnUrl: string): Promise<string> {
    const provider = this.requireProvider();
    const customer = await this.repo.customer(userId, provider.name);
    if (!provider.portal || !customer) throw errors.notFound();
    return provider.portal(customer, returnUrl);
  }

  /**
   * The test checkout's renewals: every renewing test licence that has run out is renewed for its
   * plan's months, as a renewal event with an id of the period it ends, so it is applied once.
   */
  async tick(): Promise<number> {
    if (this.provider?.name !== 'test') return 0;
    let renewed = 0;
    for (const license of await this.plans.renewingDue('test', this.now())) {
      const plan = LICENSES.find((l) => l.id === license.plan_id);
      if (!plan || !license.external_id) continue;
      const applied = await this.apply('test', {
        id: `renew:${license.id}:${license.expires_at}`,
        type: 'subscription',
        subscriptionId: license.external_id,
        active: true,
        periodStart: license.expires_at,
        periodEnd: addMonths(license.expires_at, plan.months),
        renewing: true,
      });
      if (applied) renewed++;
    }
    return renewed;
  }

  /** The questionnaire: whether answered, and what its completion grants. */
  async surveyState(userId: string): Promise<SurveyState> {
    const answered = (await this.repo.survey(userId)) !== undefined;
    return { answered, reward: answered || this.mode === 'off' ? 0 : QUESTIONNAIRE_REWARD_BYTES };
  }

  /** Stores the answers and grants the reward, once per account (a second answer changes nothing). */
  async answerSurvey(userId: string, body: SurveyBody): Promise<SurveyState> {
    const inserted = await this.repo.insertSurvey({
      user_id: userId,
      answers: JSON.stringify(body),
      packet_id: null,
      created_at: this.now(),
    });
    if (!inserted) throw new ApiError(Code.ALREADY_EXISTS, 'survey_answered');
    if (this.mode !== 'off') {
      const packet = await this.users.grantDataPacket(userId, { name: '30G', size: QUESTIONNAIRE_REWARD_BYTES });
      await this.repo.setSurveyPacket(userId, packet.id);
      await this.audit(userId, 'system', 'survey_reward', { packet: packet.id, size: QUESTIONNAIRE_REWARD_BYTES });
    }
    return this.surveyState(userId);
  }

  private async planOf(userId: string): Promise<OperatorPlan> {
    const row = await this.usersRepo.findById(userId);
    if (!row) throw errors.notFound();
    const latest = (await this.plans.licenses(userId))[0];
    const active = latest && latest.expires_at > this.now() ? latest : undefined;
    return {
      uid: row.id,
      email: row.email,
      plan: active?.plan_id ?? null,
      expire: active ? seconds(active.expires_at) : 0,
      renewing: active?.renewing === 1,
    };
  }

  /**
   * An operator gives a plan (`until` a date, or the plan's months), or extends the current licence
   * to `until`. The caller's right to do so is checked by the route (operators only).
   */
  async grant(actor: Actor, userId: string, plan: LicenseId, until?: number): Promise<OperatorPlan> {
    if (!(await this.usersRepo.findById(userId))) throw errors.notFound();
    const now = this.now();
    if (until !== undefined && until <= now) throw errors.badRequest('field_invalid', { field: 'until' });
    const current = await this.users.activeLicense(userId, now);
    if (current && until !== undefined && current.plan_id === plan) {
      await this.plans.updateLicense(userId, current.id, { expires_at: until, updated_at: now });
      await this.audit(userId, actor, 'licence_extended', { licence: current.id, expires_at: until });
    } else {
      // Another plan until a date replaces the running one from now (one licence at a time).
      if (current && until !== undefined) await this.revoke(actor, userId);
      const license: LicenseRow = await this.users.grantLicense(userId, plan, {
        source: 'grant',
        renewing: false,
        ...(until !== undefined ? { startsAt: now, expiresAt: until } : {}),
      });
      await this.audit(userId, actor, 'licence_granted', { licence: license.id, plan, expires_at: license.expires_at });
    }
    return this.planOf(userId);
  }

  /** An operator takes every running licence of the account back now (its packets end with it). */
  async revoke(actor: Actor, userId: string): Promise<OperatorPlan> {
    if (!(await this.usersRepo.findById(userId))) throw errors.notFound();
    const now = this.now();
    for (const l of await this.plans.licenses(userId)) {
      if (l.expires_at <= now) continue;
      await this.plans.updateLicense(userId, l.id, { expires_at: now, renewing: 0, updated_at: now });
      await this.plans.endPackets(userId, now, { licenseId: l.id });
      await this.audit(userId, actor, 'licence_revoked', { licence: l.id });
    }
    return this.planOf(userId);
  }

  /** Per account: plan, allowance and use of the packets counting now. */
  async usage(offset: number, limit: number): Promise<UsageReport> {
    const [total, rows] = await Promise.all([this.usersRepo.count(), this.usersRepo.page(offset, limit)]);
    const items = await Promise.all(
      rows.map(async (row) => {
        const plan = await this.planOf(row.id);
        const packets = await this.users.dataPackets(row.id);
        const all = [...packets.base, ...packets.additional];
        return {
          uid: row.id,
          email: row.email,
          plan: plan.plan,
          expire: plan.expire,
          allowance: all.reduce((s, p) => s + p.size, 0),
          used: all.reduce((s, p) => s + p.usage, 0),
          packets: packets.additional.length,
        };
      }),
    );
    return { items, total };
  }

  async auditLog(userId: string | undefined, limit = 200) {
    return (await this.repo.auditOf(userId, limit)).map((r) => ({
      uid: r.user_id,
      actor: r.actor,
      action: r.action,
      detail: r.detail,
      created_at: seconds(r.created_at),
    }));
  }
}
