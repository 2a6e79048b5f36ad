/** A feedback ticket (migration 0014): from an account (`user_id`) or a visitor (`visitor_id`). */
export interface SupportTicketsTable {
  id: string;
  user_id: string | null;
  visitor_id: string | null;
  email: string;
  name: string;
  title: string;
  /** Plain text as the sender wrote it; shown escaped everywhere. */
  contents: string;
  /** The value of the form's problem-type field, when it has one. */
  problem_type: string | null;
  /** The form's other fields, JSON `[{id, value}]`. */
  custom_fields: string;
  language: string;
  platform: string;
  product_version: string;
  /** open, answered, closed. */
  status: string;
  created_at: number;
  updated_at: number;
}

/** The operator's answer to a ticket, mailed to its sender (migration 0014). */
export interface SupportRepliesTable {
  id: string;
  ticket_id: string;
  author_id: string | null;
  body: string;
  created_at: number;
}

/** A file sent with a ticket (migration 0014): a log file or a screenshot, its bytes in base64. */
export interface SupportAttachmentsTable {
  id: string;
  ticket_id: string;
  file_name: string;
  content_type: string;
  size: number;
  data: string;
}

export interface SupportTables {
  support_tickets: SupportTicketsTable;
  support_replies: SupportRepliesTable;
  support_attachments: SupportAttachmentsTable;
}
