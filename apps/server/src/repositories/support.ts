import type {
  Database,
  Kysely,
  Selectable,
  SupportAttachmentsTable,
  SupportRepliesTable,
  SupportTicketsTable,
} from '@skyferry/db';

export type TicketRow = Selectable<SupportTicketsTable>;
export type ReplyRow = Selectable<SupportRepliesTable>;
export type AttachmentRow = Selectable<SupportAttachmentsTable>;

/** Feedback tickets and the operator's replies. */
export class SupportRepository {
  private readonly db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  /** A ticket with its files, together. */
  async insertTicket(row: TicketRow, attachments: readonly AttachmentRow[] = []): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('support_tickets').values(row).execute();
      if (attachments.length > 0)
        await trx
          .insertInto('support_attachments')
          .values([...attachments])
          .execute();
    });
  }

  /** The files of tickets, without their bytes. */
  async attachmentsOf(ticketIds: readonly string[]): Promise<Array<Omit<AttachmentRow, 'data'>>> {
    if (ticketIds.length === 0) return [];
    return this.db
      .selectFrom('support_attachments')
      .select(['id', 'ticket_id', 'file_name', 'content_type', 'size'])
      .where('ticket_id', 'in', ticketIds)
      .orderBy('file_name')
      .execute();
  }

  async findAttachment(ticketId: string, id: string): Promise<AttachmentRow | undefined> {
    return this.db
      .selectFrom('support_attachments')
      .selectAll()
      .where('ticket_id', '=', ticketId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  async findTicket(id: string): Promise<TicketRow | undefined> {
    return this.db.selectFrom('support_tickets').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** An account's tickets, newest first. */
  async ticketsOfUser(userId: string, limit: number): Promise<TicketRow[]> {
    return this.db
      .selectFrom('support_tickets')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  }

  /** The inbox: tickets of a status (or all), newest first. */
  async page(status: string | undefined, offset: number, limit: number): Promise<TicketRow[]> {
    let q = this.db.selectFrom('support_tickets').selectAll();
    if (status) q = q.where('status', '=', status);
    return q.orderBy('created_at', 'desc').orderBy('id', 'desc').offset(offset).limit(limit).execute();
  }

  /** How many tickets have each status. */
  async countByStatus(): Promise<Record<string, number>> {
    const rows = await this.db
      .selectFrom('support_tickets')
      .select(['status', (eb) => eb.fn.countAll<string | number>().as('n')])
      .groupBy('status')
      .execute();
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  }

  async repliesOf(ticketIds: readonly string[]): Promise<ReplyRow[]> {
    if (ticketIds.length === 0) return [];
    return this.db
      .selectFrom('support_replies')
      .selectAll()
      .where('ticket_id', 'in', ticketIds)
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .execute();
  }

  /** Adds a reply and marks the ticket answered, together. */
  async addReply(row: ReplyRow): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('support_replies').values(row).execute();
      await trx
        .updateTable('support_tickets')
        .set({ status: 'answered', updated_at: row.created_at })
        .where('id', '=', row.ticket_id)
        .execute();
    });
  }

  async setStatus(id: string, status: string, now: number): Promise<boolean> {
    const r = await this.db
      .updateTable('support_tickets')
      .set({ status, updated_at: now })
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }
}
