import type {
  BillingOffers,
  CheckoutData,
  Order,
  OrdersData,
  ProductId,
  SurveyBody,
  SurveyState,
} from '@skyferry/contract';
import { api } from '../../api/client.ts';

/** The buying calls (DECISIONS: billing off / test / a payment provider). */
export const billingApi = {
  offers: () => api<BillingOffers>('/api/billing/offers', { method: 'GET' }),
  checkout: (product: ProductId) => api<CheckoutData>('/api/billing/checkout', { body: { product } }),
  orders: () => api<OrdersData>('/api/billing/orders', { method: 'GET' }),
  refund: (id: string) => api<Order>(`/api/billing/orders/${encodeURIComponent(id)}/refund`, {}),
  cancel: () => api<null>('/api/billing/cancel', {}),
  portal: () => api<{ url: string }>('/api/billing/portal', {}),
  testCheckout: (checkout: string) => api<Order>('/api/billing/test-checkout', { method: 'GET', query: { checkout } }),
  answerTestCheckout: (checkout: string, action: 'complete' | 'decline') =>
    api<Order>('/api/billing/test-checkout', { body: { checkout, action } }),
  survey: () => api<SurveyState>('/api/billing/survey', { method: 'GET' }),
  answerSurvey: (body: SurveyBody) => api<SurveyState>('/api/billing/survey', { body }),
};
