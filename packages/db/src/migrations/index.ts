import type { Migration } from 'kysely/migration';
import * as m0001 from './0001_foundation.ts';
import * as m0002 from './0002_accounts.ts';
import * as m0003 from './0003_queue.ts';
import * as m0004 from './0004_tasks.ts';
import * as m0005 from './0005_cleanup.ts';
import * as m0006 from './0006_task_google_docs.ts';
import * as m0007 from './0007_cleanup_delete_lease.ts';
import * as m0008 from './0008_operator_role.ts';
import * as m0009 from './0009_session_sign_in_nonce.ts';
import * as m0010 from './0010_sync_pair_locks.ts';
import * as m0012 from './0012_task_runs.ts';
import * as m0013 from './0013_account_basics.ts';
import * as m0014 from './0014_support_tickets.ts';
import * as m0015 from './0015_billing.ts';
import * as m0016 from './0016_apps.ts';
import * as m0017 from './0017_exports.ts';
import * as m0019 from './0019_upload_sessions.ts';
import * as m0020 from './0020_compact_checkpoints.ts';
import * as m0021 from './0021_run_file_blocks.ts';

/**
 * Versioned migrations, applied in name order at start. Never edit one that has landed: add the
 * next number. Each area of the product owns its own files.
 */
export const migrations: Record<string, Migration> = {
  '0001_foundation': m0001,
  '0002_accounts': m0002,
  '0003_queue': m0003,
  '0004_tasks': m0004,
  '0005_cleanup': m0005,
  '0006_task_google_docs': m0006,
  '0007_cleanup_delete_lease': m0007,
  '0008_operator_role': m0008,
  '0009_session_sign_in_nonce': m0009,
  '0010_sync_pair_locks': m0010,
  '0012_task_runs': m0012,
  '0013_account_basics': m0013,
  '0014_support_tickets': m0014,
  '0015_billing': m0015,
  '0016_apps': m0016,
  '0017_exports': m0017,
  '0019_upload_sessions': m0019,
  '0020_compact_checkpoints': m0020,
  '0021_run_file_blocks': m0021,
};
