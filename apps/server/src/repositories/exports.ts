import type { Database, ExportTasksTable, Insertable, Kysely, Selectable, Updateable } from '@skyferry/db';
import type { CloudOwner } from './clouds.ts';

export type ExportTaskRow = Selectable<ExportTasksTable>;
export type NewExportTaskRow = Insertable<ExportTasksTable>;
export type ExportTaskPatch = Updateable<ExportTasksTable>;

/**
 * Export tasks. A request reads one only through its owner (`find`); the process running an export
 * updates it by id (`update`), only while it is still running (status 0).
 */
export class ExportTasksRepository {
  private readonly db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  async insert(row: NewExportTaskRow): Promise<void> {
    await this.db.insertInto('export_tasks').values(row).execute();
  }

  async find(owner: CloudOwner, id: string): Promise<ExportTaskRow | undefined> {
    const q = this.db.selectFrom('export_tasks').selectAll().where('id', '=', id);
    return (
      'userId' in owner ? q.where('user_id', '=', owner.userId) : q.where('visitor_id', '=', owner.visitorId)
    ).executeTakeFirst();
  }

  /** Updates a running export; false when it is no longer running (already ended or given up). */
  async update(id: string, patch: ExportTaskPatch): Promise<boolean> {
    const r = await this.db
      .updateTable('export_tasks')
      .set(patch)
      .where('id', '=', id)
      .where('status', '=', 0)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Forgets exports that ended (or were last heard of) before `before` (ms). */
  async purgeOlderThan(before: number): Promise<void> {
    await this.db.deleteFrom('export_tasks').where('updated_at', '<', before).execute();
  }
}
