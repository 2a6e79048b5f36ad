/**
 * A fake of the parts of Stripe's API Skyferry calls, on 127.0.0.1, written from Stripe's published
 * API reference (docs.stripe.com/api, read through the `search` tool's docs corpus): form-encoded
 * requests with the secret key as bearer; Checkout Sessions (create), Subscriptions (retrieve,
 * update `cancel_at_period_end`, cancel with DELETE), Invoices (retrieve), Refunds (create) and
 * Billing Portal Sessions (create). Objects carry the fields of API version 2024-06-20 that Skyferry
 * reads. The test drives what Stripe would do on its side (a buyer paying, a renewal) and builds the
 * matching webhook events.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

type Obj = Record<string, unknown>;

/** Stripe's form encoding back into objects: `a[b][0]=v` → { a: { b: { 0: 'v' } } }. */
function formDecode(body: string): Obj {
  const out: Obj = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const parts = key.split(/\[|\]\[|\]/).filter((p) => p !== '');
    let node = out;
    parts.forEach((p, i) => {
      if (i === parts.length - 1) node[p] = value;
      else node = (node[p] ??= {}) as Obj;
    });
  }
  return out;
}

async function read(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString();
}

export interface FakeSubscription {
  id: string;
  object: 'subscription';
  status: string;
  customer: string;
  current_period_start: number;
  current_period_end: number;
  cancel_at_period_end: boolean;
  ended_at: number | null;
  metadata: Record<string, string>;
  latest_invoice: string;
  /** Months per period (the price's interval_count). */
  months: number;
}

export class FakeStripe {
  readonly secretKey = 'sk_test_fake_0123456789';
  url = '';
  private server: Server | undefined;
  private n = 0;
  readonly sessions = new Map<string, Obj>();
  readonly subscriptions = new Map<string, FakeSubscription>();
  readonly invoices = new Map<string, Obj>();
  readonly refunds: Obj[] = [];
  /** Every request: method, path and the API version it asked for. */
  readonly requests: Array<{ method: string; path: string; version: string | undefined }> = [];

  private id(prefix: string) {
    return `${prefix}_${(++this.n).toString().padStart(6, '0')}fake`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      void (async () => {
        const body = await read(req);
        const send = (status: number, json: unknown) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(json));
        };
        const path = new URL(req.url ?? '/', 'http://x').pathname;
        this.requests.push({ method: req.method ?? '', path, version: req.headers['stripe-version'] as string });
        if (req.headers.authorization !== `Bearer ${this.secretKey}`)
          return send(401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } });
        const params = formDecode(body);
        const notFound = () => send(404, { error: { type: 'invalid_request_error', message: 'No such object' } });
        let m: RegExpExecArray | null;
        if (req.method === 'POST' && path === '/v1/checkout/sessions') {
          const id = this.id('cs_test');
          const session = {
            id,
            object: 'checkout.session',
            url: `https://checkout.stripe.test/c/pay/${id}`,
            ...params,
          };
          this.sessions.set(id, session);
          return send(200, session);
        }
        if ((m = /^\/v1\/subscriptions\/([^/]+)$/.exec(path))) {
          const sub = this.subscriptions.get(decodeURIComponent(m[1] ?? ''));
          if (!sub) return notFound();
          if (req.method === 'POST' && params.cancel_at_period_end !== undefined)
            sub.cancel_at_period_end = params.cancel_at_period_end === 'true';
          if (req.method === 'DELETE') {
            sub.status = 'canceled';
            sub.ended_at = Math.floor(Date.now() / 1000);
          }
          return send(200, sub);
        }
        if (req.method === 'GET' && (m = /^\/v1\/invoices\/([^/]+)$/.exec(path))) {
          const invoice = this.invoices.get(decodeURIComponent(m[1] ?? ''));
          return invoice ? send(200, invoice) : notFound();
        }
        if (req.method === 'POST' && path === '/v1/refunds') {
          const refund = { id: this.id('re'), object: 'refund', status: 'succeeded', ...params };
          this.refunds.push(refund);
          return send(200, refund);
        }
        if (req.method === 'POST' && path === '/v1/billing_portal/sessions') {
          return send(200, {
            id: this.id('bps'),
            object: 'billing_portal.session',
            customer: params.customer,
            return_url: params.return_url,
            url: `https://billing.stripe.test/p/session/${String(params.customer)}`,
          });
        }
        return notFound();
      })();
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private event(type: string, object: Obj, id = this.id('evt')): Obj {
    return { id, object: 'event', type, created: Math.floor(Date.now() / 1000), data: { object } };
  }

  private invoice(sub: FakeSubscription): string {
    const id = this.id('in');
    this.invoices.set(id, {
      id,
      object: 'invoice',
      subscription: sub.id,
      customer: sub.customer,
      payment_intent: this.id('pi'),
      status: 'paid',
      period_start: sub.current_period_start,
      period_end: sub.current_period_end,
    });
    sub.latest_invoice = id;
    return id;
  }

  /**
   * The buyer pays on Stripe's page: for a subscription session its subscription and first invoice
   * come to be. Answers the `checkout.session.completed` event Stripe sends.
   */
  complete(sessionId: string): Obj {
    const session = this.sessions.get(sessionId) as Obj & {
      mode: string;
      line_items: Obj;
      subscription_data?: { metadata?: Record<string, string> };
    };
    const customer = this.id('cus');
    const done: Obj = { ...session, status: 'complete', payment_status: 'paid', customer };
    if (session.mode === 'subscription') {
      const item = (session.line_items as Record<string, { price_data: { recurring: { interval_count: string } } }>)[
        '0'
      ];
      const months = Number(item?.price_data.recurring.interval_count ?? 1);
      const now = Math.floor(Date.now() / 1000);
      const end = new Date(now * 1000);
      end.setUTCMonth(end.getUTCMonth() + months);
      const sub: FakeSubscription = {
        id: this.id('sub'),
        object: 'subscription',
        status: 'active',
        customer,
        current_period_start: now,
        current_period_end: Math.floor(end.getTime() / 1000),
        cancel_at_period_end: false,
        ended_at: null,
        metadata: session.subscription_data?.metadata ?? {},
        latest_invoice: '',
        months,
      };
      this.subscriptions.set(sub.id, sub);
      done.subscription = sub.id;
      done.invoice = this.invoice(sub);
    } else {
      done.payment_intent = this.id('pi');
    }
    this.sessions.set(sessionId, done);
    return this.event('checkout.session.completed', done);
  }

  /** The first invoice of a subscription, paid (Stripe sends it around the session's completion). */
  invoicePaid(subscriptionId: string, id?: string): Obj {
    const sub = this.subscriptions.get(subscriptionId) as FakeSubscription;
    return this.event('invoice.paid', this.invoices.get(sub.latest_invoice) as Obj, id);
  }

  /** The subscription's next period is paid: answers the `invoice.paid` event of the renewal. */
  renew(subscriptionId: string): Obj {
    const sub = this.subscriptions.get(subscriptionId) as FakeSubscription;
    const end = new Date(sub.current_period_end * 1000);
    end.setUTCMonth(end.getUTCMonth() + sub.months);
    sub.current_period_start = sub.current_period_end;
    sub.current_period_end = Math.floor(end.getTime() / 1000);
    const invoice = this.invoice(sub);
    return this.event('invoice.paid', this.invoices.get(invoice) as Obj);
  }

  subscriptionUpdated(subscriptionId: string): Obj {
    return this.event('customer.subscription.updated', { ...this.subscriptions.get(subscriptionId) });
  }
}
