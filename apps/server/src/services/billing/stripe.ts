/**
 * The Stripe payment provider (BILLING_MODE=stripe), written from Stripe's published API reference
 * (docs.stripe.com/api: Checkout Sessions, Subscriptions, Invoices, Refunds, Billing Portal Sessions;
 * docs.stripe.com/webhooks: the `Stripe-Signature` scheme), read through the `search` tool's docs
 * corpus. Requests are form-encoded with the secret key as the bearer and a pinned `Stripe-Version`
 * (one where a subscription carries `current_period_start`/`_end` and an invoice its `subscription`
 * and `payment_intent`). No card data reaches Skyferry: the buyer pays on Stripe's pages.
 *
 * Webhooks: the signature is HMAC-SHA256 of `<t>.<raw body>` with the endpoint's secret, compared in
 * constant time with every `v1` of the header; a `t` older (or newer) than the tolerance is refused
 * (replays). A subscription's events are not trusted for its state: the subscription is fetched, so
 * events arriving out of order or twice leave it as Stripe has it now.
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import type { OrderRow } from '../../repositories/billing.ts';
import { WebhookRejected, type BillingEvent, type CheckoutRequest, type PaymentProvider } from './provider.ts';

export const STRIPE_API_VERSION = '2024-06-20';
/** Stripe's libraries' default tolerance for a signature's timestamp, seconds. */
export const STRIPE_TOLERANCE_S = 300;

/** Stripe's form encoding of nested parameters: `a[b][0][c]=v`. */
export function formEncode(params: Record<string, unknown>): string {
  const out: string[] = [];
  const walk = (prefix: string, value: unknown) => {
    if (value === undefined || value === null) return;
    if (Array.isArray(value)) value.forEach((v, i) => walk(`${prefix}[${i}]`, v));
    else if (typeof value === 'object')
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) walk(prefix ? `${prefix}[${k}]` : k, v);
    else out.push(`${encodeURIComponent(prefix)}=${encodeURIComponent(String(value))}`);
  };
  walk('', params);
  return out.join('&');
}

/** The `Stripe-Signature` value for a payload (what Stripe sends; tests sign with it). */
export function stripeSignature(payload: string, secret: string, timestampS: number): string {
  const v1 = createHmac('sha256', secret).update(`${timestampS}.${payload}`).digest('hex');
  return `t=${timestampS},v1=${v1}`;
}

/** Checks a delivery's signature and age; throws WebhookRejected otherwise. */
export function verifyStripeSignature(
  payload: string,
  header: string | undefined,
  secret: string,
  nowS: number,
  toleranceS = STRIPE_TOLERANCE_S,
): void {
  if (!header) throw new WebhookRejected('no Stripe-Signature header');
  let t: number | undefined;
  const v1: string[] = [];
  for (const part of header.split(',')) {
    const i = part.indexOf('=');
    if (i < 0) continue;
    const k = part.slice(0, i).trim();
    const v = part.slice(i + 1).trim();
    if (k === 't' && /^\d{1,12}$/.test(v)) t = Number(v);
    else if (k === 'v1' && /^[0-9a-f]{64}$/.test(v)) v1.push(v);
  }
  if (t === undefined || v1.length === 0) throw new WebhookRejected('malformed Stripe-Signature header');
  const expected = Buffer.from(createHmac('sha256', secret).update(`${t}.${payload}`).digest('hex'));
  if (!v1.some((s) => timingSafeEqual(Buffer.from(s), expected))) throw new WebhookRejected('signature mismatch');
  if (Math.abs(nowS - t) > toleranceS) throw new WebhookRejected('timestamp outside the tolerance');
}

interface StripeSubscription {
  id: string;
  status: string;
  customer: string;
  current_period_start: number;
  current_period_end: number;
  cancel_at_period_end: boolean;
  ended_at: number | null;
  metadata?: Record<string, string>;
}

type StripeObject = Record<string, unknown>;
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

export class StripeError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = 'StripeError';
    this.status = status;
  }
}

export class StripeProvider implements PaymentProvider {
  readonly name = 'stripe' as const;
  private readonly secretKey: string;
  private readonly webhookSecret: string;
  private readonly apiUrl: string;
  private readonly now: () => number;

  constructor(o: { secretKey: string; webhookSecret: string; apiUrl: string; now?: () => number }) {
    this.secretKey = o.secretKey;
    this.webhookSecret = o.webhookSecret;
    this.apiUrl = o.apiUrl;
    this.now = o.now ?? Date.now;
  }

  private async call<T>(method: 'GET' | 'POST' | 'DELETE', path: string, params?: Record<string, unknown>): Promise<T> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.secretKey}`,
      'stripe-version': STRIPE_API_VERSION,
    };
    let body: string | undefined;
    if (method === 'POST') {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      // A POST retried after a lost answer is not done twice.
      headers['idempotency-key'] = randomUUID();
      body = formEncode(params ?? {});
    }
    const res = await fetch(`${this.apiUrl}${path}`, { method, headers, body, signal: AbortSignal.timeout(30_000) });
    const json = (await res.json().catch(() => ({}))) as StripeObject & { error?: { message?: string } };
    if (!res.ok) throw new StripeError(res.status, `Stripe ${method} ${path}: ${json.error?.message ?? res.status}`);
    return json as T;
  }

  async createCheckout(req: CheckoutRequest): Promise<{ checkoutId: string; url: string }> {
    const { order, item } = req;
    const price: Record<string, unknown> = {
      currency: order.currency.toLowerCase(),
      unit_amount: order.amount,
      product_data: { name: item.name },
    };
    if (item.plan) price.recurring = { interval: 'month', interval_count: item.plan.months };
    const metadata = { order_id: order.id, user_id: order.user_id };
    const session = await this.call<{ id: string; url: string }>('POST', '/v1/checkout/sessions', {
      mode: item.plan ? 'subscription' : 'payment',
      line_items: [{ price_data: price, quantity: 1 }],
      client_reference_id: order.id,
      metadata,
      ...(item.plan ? { subscription_data: { metadata } } : { payment_intent_data: { metadata } }),
      ...(req.customerId ? { customer: req.customerId } : { customer_email: req.email }),
      success_url: req.successUrl,
      cancel_url: req.cancelUrl,
    });
    return { checkoutId: session.id, url: session.url };
  }

  private async subscriptionEvent(
    eventId: string,
    subscriptionId: string,
  ): Promise<Extract<BillingEvent, { type: 'subscription' }>> {
    const s = await this.call<StripeSubscription>('GET', `/v1/subscriptions/${encodeURIComponent(subscriptionId)}`);
    const active = s.status === 'active' || s.status === 'trialing' || s.status === 'past_due';
    return {
      id: eventId,
      type: 'subscription',
      subscriptionId: s.id,
      orderId: s.metadata?.order_id,
      customerId: str(s.customer),
      active,
      periodStart: s.current_period_start * 1000,
      periodEnd: s.current_period_end * 1000,
      renewing: active && !s.cancel_at_period_end,
      endedAt: s.ended_at ? s.ended_at * 1000 : undefined,
    };
  }

  /** A webhook delivery, verified, as the events to apply (none for types Skyferry does not use). */
  async events(rawBody: string, signature: string | undefined): Promise<BillingEvent[]> {
    verifyStripeSignature(rawBody, signature, this.webhookSecret, Math.floor(this.now() / 1000));
    let event: { id?: unknown; type?: unknown; data?: { object?: StripeObject } };
    try {
      event = JSON.parse(rawBody) as typeof event;
    } catch {
      throw new WebhookRejected('body is not JSON');
    }
    const id = str(event.id);
    const type = str(event.type);
    const obj = event.data?.object;
    if (!id || !type || !obj) throw new WebhookRejected('not an event');
    switch (type) {
      case 'checkout.session.completed':
      case 'checkout.session.async_payment_succeeded': {
        const orderId = str(obj.client_reference_id) ?? str((obj.metadata as StripeObject | undefined)?.order_id);
        if (!orderId) return [];
        if (obj.payment_status !== 'paid' && obj.payment_status !== 'no_payment_required') return [];
        const subscriptionId = str(obj.subscription);
        if (subscriptionId) {
          const sub = await this.subscriptionEvent(id, subscriptionId);
          return [
            {
              id,
              type: 'paid',
              orderId,
              subscriptionId,
              customerId: str(obj.customer),
              paymentId: str(obj.invoice),
              periodStart: sub.periodStart,
              periodEnd: sub.periodEnd,
            },
          ];
        }
        return [{ id, type: 'paid', orderId, customerId: str(obj.customer), paymentId: str(obj.payment_intent) }];
      }
      case 'checkout.session.expired':
      case 'checkout.session.async_payment_failed': {
        const orderId = str(obj.client_reference_id);
        return orderId ? [{ id, type: 'declined', orderId }] : [];
      }
      case 'invoice.paid':
      case 'invoice.payment_succeeded': {
        const subscriptionId = str(obj.subscription);
        return subscriptionId ? [await this.subscriptionEvent(id, subscriptionId)] : [];
      }
      case 'customer.subscription.created':
      case 'customer.subscription.updated':
      case 'customer.subscription.deleted': {
        const subscriptionId = str(obj.id);
        return subscriptionId ? [await this.subscriptionEvent(id, subscriptionId)] : [];
      }
      case 'charge.refunded': {
        const paymentIds = [str(obj.payment_intent), str(obj.invoice)].filter((x): x is string => x !== undefined);
        return paymentIds.length > 0 ? [{ id, type: 'refunded', paymentIds }] : [];
      }
      default:
        return [];
    }
  }

  async cancelAtPeriodEnd(subscriptionId: string): Promise<BillingEvent | undefined> {
    await this.call('POST', `/v1/subscriptions/${encodeURIComponent(subscriptionId)}`, { cancel_at_period_end: true });
    return this.subscriptionEvent(`cancel:${subscriptionId}:${randomUUID()}`, subscriptionId);
  }

  async refund(order: OrderRow): Promise<void> {
    let paymentIntent = order.payment_id ?? undefined;
    if (order.subscription_id) {
      // A subscription's first payment is its first invoice's.
      if (paymentIntent?.startsWith('in_')) {
        const invoice = await this.call<StripeObject>('GET', `/v1/invoices/${encodeURIComponent(paymentIntent)}`);
        paymentIntent = str(invoice.payment_intent);
      }
      await this.call('DELETE', `/v1/subscriptions/${encodeURIComponent(order.subscription_id)}`);
    }
    if (paymentIntent) await this.call('POST', '/v1/refunds', { payment_intent: paymentIntent });
  }

  async portal(customerId: string, returnUrl: string): Promise<string> {
    const session = await this.call<{ url: string }>('POST', '/v1/billing_portal/sessions', {
      customer: customerId,
      return_url: returnUrl,
    });
    return session.url;
  }
}
