import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDatabase } from '@skyferry/testing';
import { Migrator } from 'kysely/migration';
import { describe, expect, inject, it } from 'vitest';
import { createDb, type Dialect } from '../create-db.ts';
import { checkpointRowKey } from './0020_compact_checkpoints.ts';
import { migrations } from './index.ts';

// Upgrading with a run under way: the checkpoints it wrote before the upgrade (readable keys) are
// carried into the compact table under their digests, so the resumed run still finds them.

for (const dialect of ['sqlite', 'postgres'] as const satisfies readonly Dialect[]) {
  describe(`the compact checkpoints migration [${dialect}]`, () => {
    it("carries a run's finished files and its own rows over, found by the same engine keys", async () => {
      const dir = mkdtempSync(join(tmpdir(), 'skyferry-migrate-'));
      const url = dialect === 'postgres' ? await createDatabase(inject('postgresUrl')) : join(dir, 'skyferry.db');
      const db = createDb({ url });
      try {
        const migrator = new Migrator({ db: db.kysely, provider: { getMigrations: async () => migrations } });
        expect((await migrator.migrateTo('0019_upload_sessions')).error).toBeUndefined();
        const file = 'write|target|/Photos|/Backup|a/b.jpg|120|1717000000000|';
        const old = [
          {
            task_id: 't1',
            key: file,
            info: '{"action":"copy","bytes":120,"read":{"path":"/Photos/a/b.jpg","size":120}}',
          },
          { task_id: 't1', key: '#temp|target|/Backup/a', info: '{"side":"target","dir":"/Backup/a"}' },
          { task_id: 't2', key: file, info: '{"action":"copy","bytes":120}' },
        ];
        await db.kysely.insertInto('task_checkpoints').values(old).execute();
        expect((await migrator.migrateToLatest()).error).toBeUndefined();
        const rows = await db.kysely
          .selectFrom('task_checkpoints')
          .selectAll()
          .orderBy('task_id')
          .orderBy('key')
          .execute();
        expect(rows).toEqual(
          [
            { task_id: 't1', key: '#temp|target|/Backup/a', info: old[1]?.info },
            { task_id: 't1', key: checkpointRowKey(file), info: old[0]?.info },
            { task_id: 't2', key: checkpointRowKey(file), info: old[2]?.info },
          ].sort((a, b) => (a.task_id + a.key < b.task_id + b.key ? -1 : 1)),
        );
        expect(checkpointRowKey(file)).toHaveLength(22);
        // The primary key still holds: one row per task and key.
        await expect(
          db.kysely
            .insertInto('task_checkpoints')
            .values({ task_id: 't2', key: checkpointRowKey(file), info: '{}' })
            .execute(),
        ).rejects.toThrow();
      } finally {
        await db.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
