import { randomBytes } from 'node:crypto';
import type { OrderRow } from '../../repositories/billing.ts';
import type { BillingEvent, CheckoutRequest, PaymentProvider } from './provider.ts';

/**
 * The built-in checkout of BILLING_MODE=test (DECISIONS): no payment network. The checkout is a
 * page of the web app (/billing/checkout?checkout=...) whose Pay and Decline buttons answer through
 * POST /api/billing/test-checkout; the answer becomes the same events a real provider's webhook
 * gives. Its subscriptions are the licences themselves: they renew when the billing tick finds them
 * due (BillingService.tick), cancel and refund at once.
 */
export class TestProvider implements PaymentProvider {
  readonly name = 'test' as const;

  async createCheckout(_req: CheckoutRequest): Promise<{ checkoutId: string; url: string }> {
    const checkoutId = `tc_${randomBytes(24).toString('base64url')}`;
    return { checkoutId, url: `/billing/checkout?checkout=${checkoutId}` };
  }

  async cancelAtPeriodEnd(): Promise<BillingEvent | undefined> {
    return undefined;
  }

  async refund(_order: OrderRow): Promise<void> {
    // Nothing was charged anywhere.
  }
}
