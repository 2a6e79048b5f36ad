import type { FoundationTables } from './foundation.ts';
import type { AccountsTables } from './accounts.ts';
import type { QueueTables } from './queue.ts';
import type { TasksTables } from './tasks.ts';
import type { CleanupTables } from './cleanup.ts';
import type { RunsTables } from './runs.ts';
import type { SupportTables } from './support.ts';
import type { BillingTables } from './billing.ts';
import type { EcologyTables } from './ecology.ts';
import type { ExportsTables } from './exports.ts';
import type { UploadsTables } from './uploads.ts';

export type * from './foundation.ts';
export type * from './accounts.ts';
export type * from './queue.ts';
export type * from './tasks.ts';
export type * from './cleanup.ts';
export type * from './runs.ts';
export type * from './support.ts';
export type * from './billing.ts';
export type * from './ecology.ts';
export type * from './exports.ts';
export type * from './uploads.ts';

/** Every table of the database; each area adds its own interface here. */
export type Database = FoundationTables &
  AccountsTables &
  QueueTables &
  TasksTables &
  CleanupTables &
  RunsTables &
  SupportTables &
  BillingTables &
  EcologyTables &
  ExportsTables &
  UploadsTables;
