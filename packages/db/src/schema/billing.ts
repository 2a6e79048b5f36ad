/** An order from a checkout (migration 0015): a licence plan or a data packet. */
export interface BillingOrdersTable {
  id: string;
  user_id: string;
  /** month, quarter, year, packet_50g, packet_100g (the contract's LICENSES and DATA_PACKETS). */
  product: string;
  /** In the currency's smallest unit. */
  amount: number;
  currency: string;
  /** test or stripe. */
  provider: string;
  /** pending, paid, declined, refunded. */
  status: string;
  /** The provider's checkout (session) id. */
  checkout_id: string | null;
  /** The provider's subscription of a licence order. */
  subscription_id: string | null;
  /** The provider's payment (payment intent) id, for refunds. */
  payment_id: string | null;
  license_id: string | null;
  packet_id: string | null;
  paid_at: number | null;
  created_at: number;
  updated_at: number;
}

/** A provider event already applied: a second delivery of the same id changes nothing. */
export interface BillingEventsTable {
  provider: string;
  event_id: string;
  type: string;
  received_at: number;
}

/** The provider's customer of an account (its customer portal opens on it). */
export interface BillingCustomersTable {
  user_id: string;
  provider: string;
  customer_id: string;
}

/** A change to an account's plan: who (an operator's id, `checkout`, `cli`, `system`), what, when. */
export interface BillingAuditTable {
  id: string;
  user_id: string | null;
  actor: string;
  action: string;
  /** JSON. */
  detail: string;
  created_at: number;
}

/** Traffic charged for one file of one task run (key: task, run, side, path): charged once. */
export interface TrafficChargesTable {
  key: string;
  user_id: string;
  bytes: number;
  created_at: number;
}

/** An account's questionnaire answers; its row is what makes the reward once per account. */
export interface SurveyResponsesTable {
  user_id: string;
  /** JSON. */
  answers: string;
  packet_id: string | null;
  created_at: number;
}

export interface BillingTables {
  billing_orders: BillingOrdersTable;
  billing_events: BillingEventsTable;
  billing_customers: BillingCustomersTable;
  billing_audit: BillingAuditTable;
  traffic_charges: TrafficChargesTable;
  survey_responses: SurveyResponsesTable;
}
