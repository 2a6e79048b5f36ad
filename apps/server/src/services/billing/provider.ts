import type { LicenseId } from '@skyferry/contract';
import type { OrderRow } from '../../repositories/billing.ts';

/**
 * What a payment provider tells Skyferry, whatever its wire format: the billing service applies
 * these (services/billing/index.ts), the built-in test checkout and Stripe's webhooks alike. Times
 * are milliseconds. Every event has the provider's id; an id applied once is never applied again.
 */
export type BillingEvent =
  | {
      id: string;
      type: 'paid';
      orderId: string;
      subscriptionId?: string | undefined;
      customerId?: string | undefined;
      /** What a refund needs (a payment or an invoice id). */
      paymentId?: string | undefined;
      periodStart?: number | undefined;
      periodEnd?: number | undefined;
    }
  | { id: string; type: 'declined'; orderId: string }
  | {
      id: string;
      type: 'subscription';
      subscriptionId: string;
      /** The order that started it (the provider keeps it with the subscription). */
      orderId?: string | undefined;
      customerId?: string | undefined;
      /** Paid up for the period (active); false once it has ended or failed for good. */
      active: boolean;
      periodStart: number;
      periodEnd: number;
      /** Renews at the period's end (purchase_state 1); false when cancelled at period end. */
      renewing: boolean;
      endedAt?: number | undefined;
    }
  | { id: string; type: 'refunded'; paymentIds: string[] };

export interface CheckoutRequest {
  order: OrderRow;
  email: string;
  /** The provider's customer of this account from an earlier purchase. */
  customerId: string | undefined;
  /** A licence plan (recurring every `months`) or a one-off data packet. */
  item: { name: string; plan?: { id: LicenseId; months: number } };
  successUrl: string;
  cancelUrl: string;
}

export interface PaymentProvider {
  readonly name: 'test' | 'stripe';
  /** Starts a checkout of the order: the provider's id for it and where the buyer goes. */
  createCheckout(req: CheckoutRequest): Promise<{ checkoutId: string; url: string }>;
  /** Stops a subscription renewing; the event (when the provider answers with its state) is applied. */
  cancelAtPeriodEnd(subscriptionId: string): Promise<BillingEvent | undefined>;
  /** Pays the order back in full and ends its subscription. */
  refund(order: OrderRow): Promise<void>;
  /** The provider's customer portal (cards, invoices, cancelling), when it has one. */
  portal?(customerId: string, returnUrl: string): Promise<string>;
}

/** A webhook whose signature, age or body is not acceptable (answered 400; nothing is applied). */
export class WebhookRejected extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'WebhookRejected';
  }
}
