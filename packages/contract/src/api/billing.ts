import { z } from 'zod';
import { BILLING_MODES } from '../plans.ts';
import { PRODUCT_IDS } from '../constants.ts';
import { licenseOfferSchema } from './accounts.ts';
import { idSchema } from './common.ts';

/**
 * Buying (spec sections 1, 2 and 9; DECISIONS: billing off / test / a payment provider): the offers,
 * checkout, orders and refunds, cancelling renewal, the questionnaire reward, and the operator's
 * plan changes. Times are Unix seconds, as in user_info; amounts are in the currency's smallest unit.
 */

export const packetOfferSchema = z.object({
  id: z.enum(['packet_50g', 'packet_100g']),
  name: z.string(),
  /** Bytes. */
  size: z.number().int(),
  price: z.number().int(),
  currency: z.string(),
});
export type PacketOffer = z.infer<typeof packetOfferSchema>;

/** GET /api/billing/offers: what /buy shows. */
export const billingOffersSchema = z.object({
  mode: z.enum(BILLING_MODES),
  currency: z.string(),
  licenses: z.array(licenseOfferSchema),
  packets: z.array(packetOfferSchema),
  /** Days within which a purchase is refunded in full. */
  refund_days: z.number().int(),
  /** Whether the provider has a customer portal (card changes, cancelling). */
  portal: z.boolean(),
});
export type BillingOffers = z.infer<typeof billingOffersSchema>;

export const checkoutBodySchema = z.object({ product: z.enum(PRODUCT_IDS) });
export type CheckoutBody = z.infer<typeof checkoutBodySchema>;

/** POST /api/billing/checkout: the order and where the buyer completes it. */
export const checkoutDataSchema = z.object({ order_id: z.string(), url: z.string() });
export type CheckoutData = z.infer<typeof checkoutDataSchema>;

export const ORDER_STATUSES = ['pending', 'paid', 'declined', 'refunded'] as const;
export const orderSchema = z.object({
  id: z.string(),
  product: z.enum(PRODUCT_IDS),
  amount: z.number().int(),
  currency: z.string(),
  status: z.enum(ORDER_STATUSES),
  created_at: z.number().int(),
  paid_at: z.number().int().nullable(),
  /** Paid, and within the refund days. */
  refundable: z.boolean(),
});
export type Order = z.infer<typeof orderSchema>;
export const ordersDataSchema = z.object({ items: z.array(orderSchema) });
export type OrdersData = z.infer<typeof ordersDataSchema>;

export const orderParamSchema = z.object({ id: idSchema });

/** POST /api/billing/test-checkout: the built-in checkout's answer (billing `test` only). */
export const testCheckoutBodySchema = z.object({
  checkout: z.string().regex(/^[A-Za-z0-9_-]{20,100}$/),
  action: z.enum(['complete', 'decline']),
});
export type TestCheckoutBody = z.infer<typeof testCheckoutBodySchema>;

/** POST /api/billing/portal: the provider's customer portal (cards, cancelling). */
export const portalDataSchema = z.object({ url: z.string() });

/** The questionnaire (its completion grants the reward once per account). */
export const SURVEY_CHOICES = {
  found_by: ['search', 'friend', 'social', 'review', 'other'],
  main_use: ['migrate', 'sync', 'backup', 'cleanup', 'other'],
} as const;
export const surveyBodySchema = z.object({
  found_by: z.enum(SURVEY_CHOICES.found_by),
  main_use: z.enum(SURVEY_CHOICES.main_use),
  /** 0 to 10. */
  recommend: z.number().int().min(0).max(10),
  comment: z.string().max(2000).optional(),
});
export type SurveyBody = z.infer<typeof surveyBodySchema>;
export const surveyStateSchema = z.object({
  answered: z.boolean(),
  /** Bytes the completion grants (0 once granted, or with billing off). */
  reward: z.number().int(),
});
export type SurveyState = z.infer<typeof surveyStateSchema>;

/** PUT /api/operator/users/{uid}/plan: give a plan from now (or extend the current one) until a date. */
export const operatorPlanBodySchema = z.object({
  plan: z.enum(['month', 'quarter', 'year']),
  /** Unix seconds; without it, the plan's months from now (or from the current licence's end). */
  until: z.number().int().min(0).max(4_102_444_800).optional(),
});
export type OperatorPlanBody = z.infer<typeof operatorPlanBodySchema>;

export const operatorPlanSchema = z.object({
  uid: z.string(),
  email: z.string(),
  plan: z.string().nullable(),
  /** Unix seconds; 0 without a licence. */
  expire: z.number().int(),
  renewing: z.boolean(),
});
export type OperatorPlan = z.infer<typeof operatorPlanSchema>;

/** GET /api/operator/billing/usage: per account, its plan, allowance used and packets. */
export const usageRowSchema = z.object({
  uid: z.string(),
  email: z.string(),
  plan: z.string().nullable(),
  expire: z.number().int(),
  allowance: z.number(),
  used: z.number(),
  packets: z.number().int(),
});
export const usageReportSchema = z.object({ items: z.array(usageRowSchema), total: z.number().int() });
export type UsageReport = z.infer<typeof usageReportSchema>;

export const auditRowSchema = z.object({
  uid: z.string().nullable(),
  actor: z.string(),
  action: z.string(),
  detail: z.string(),
  created_at: z.number().int(),
});
export const auditDataSchema = z.object({ items: z.array(auditRowSchema) });
