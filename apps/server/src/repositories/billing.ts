import type {
  BillingAuditTable,
  BillingOrdersTable,
  Database,
  Kysely,
  Selectable,
  SurveyResponsesTable,
} from '@skyferry/db';

export type OrderRow = Selectable<BillingOrdersTable>;
export type AuditRow = Selectable<BillingAuditTable>;
export type SurveyRow = Selectable<SurveyResponsesTable>;

/** Orders, applied provider events, provider customers, the plan audit and the questionnaire answers. */
export class BillingRepository {
  private readonly db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  async insertOrder(row: OrderRow): Promise<void> {
    await this.db.insertInto('billing_orders').values(row).execute();
  }

  async order(id: string): Promise<OrderRow | undefined> {
    return this.db.selectFrom('billing_orders').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async orderByCheckout(checkoutId: string): Promise<OrderRow | undefined> {
    return this.db.selectFrom('billing_orders').selectAll().where('checkout_id', '=', checkoutId).executeTakeFirst();
  }

  async orderBySubscription(subscriptionId: string): Promise<OrderRow | undefined> {
    return this.db
      .selectFrom('billing_orders')
      .selectAll()
      .where('subscription_id', '=', subscriptionId)
      .orderBy('created_at', 'asc')
      .executeTakeFirst();
  }

  async orderByPayment(paymentId: string): Promise<OrderRow | undefined> {
    return this.db.selectFrom('billing_orders').selectAll().where('payment_id', '=', paymentId).executeTakeFirst();
  }

  async ordersOf(userId: string, limit = 50): Promise<OrderRow[]> {
    return this.db
      .selectFrom('billing_orders')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('created_at', 'desc')
      .limit(limit)
      .execute();
  }

  /** Moves an order from one status to another; false when it was not in `from` (a second delivery). */
  async transitionOrder(
    id: string,
    from: readonly string[],
    patch: Partial<Omit<OrderRow, 'id' | 'user_id'>>,
  ): Promise<boolean> {
    const r = await this.db
      .updateTable('billing_orders')
      .set(patch)
      .where('id', '=', id)
      .where('status', 'in', [...from])
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async updateOrder(id: string, patch: Partial<Omit<OrderRow, 'id' | 'user_id'>>): Promise<void> {
    await this.db.updateTable('billing_orders').set(patch).where('id', '=', id).execute();
  }

  /** Records a provider event; false when it was recorded before (the event was applied already). */
  async recordEvent(provider: string, eventId: string, type: string, now: number): Promise<boolean> {
    const r = await this.db
      .insertInto('billing_events')
      .values({ provider, event_id: eventId, type, received_at: now })
      .onConflict((oc) => oc.columns(['provider', 'event_id']).doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0n) > 0;
  }

  /** Forgets an event whose handling failed, so the provider's next delivery applies it. */
  async forgetEvent(provider: string, eventId: string): Promise<void> {
    await this.db
      .deleteFrom('billing_events')
      .where('provider', '=', provider)
      .where('event_id', '=', eventId)
      .execute();
  }

  async customer(userId: string, provider: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('billing_customers')
      .select('customer_id')
      .where('user_id', '=', userId)
      .where('provider', '=', provider)
      .executeTakeFirst();
    return row?.customer_id;
  }

  async setCustomer(userId: string, provider: string, customerId: string): Promise<void> {
    await this.db
      .insertInto('billing_customers')
      .values({ user_id: userId, provider, customer_id: customerId })
      .onConflict((oc) => oc.columns(['user_id', 'provider']).doUpdateSet({ customer_id: customerId }))
      .execute();
  }

  async audit(row: AuditRow): Promise<void> {
    await this.db.insertInto('billing_audit').values(row).execute();
  }

  async auditOf(userId: string | undefined, limit: number): Promise<AuditRow[]> {
    let q = this.db.selectFrom('billing_audit').selectAll();
    if (userId) q = q.where('user_id', '=', userId);
    return q.orderBy('created_at', 'desc').limit(limit).execute();
  }

  async survey(userId: string): Promise<SurveyRow | undefined> {
    return this.db.selectFrom('survey_responses').selectAll().where('user_id', '=', userId).executeTakeFirst();
  }

  /** Stores the answers; false when the account answered before. */
  async insertSurvey(row: SurveyRow): Promise<boolean> {
    const r = await this.db
      .insertInto('survey_responses')
      .values(row)
      .onConflict((oc) => oc.column('user_id').doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0n) > 0;
  }

  async setSurveyPacket(userId: string, packetId: string): Promise<void> {
    await this.db.updateTable('survey_responses').set({ packet_id: packetId }).where('user_id', '=', userId).execute();
  }
}
