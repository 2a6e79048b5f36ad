import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDatabase } from '@skyferry/testing';
import { sql, type Kysely } from 'kysely';
import { Migrator } from 'kysely/migration';
import { describe, expect, inject, it } from 'vitest';
import { createDb, type Dialect } from '../create-db.ts';
import { unpackRunFiles, type RunFileBlock, type RunFileRecord } from '../run-file-blocks.ts';
import { migrations } from './index.ts';

// Upgrading keeps the run history: every file row of every run is carried into the blocks, with
// its place, outcome and fields, and a downgrade gives the same rows back.

function row(run: string, seq: number, outcome: string, extra: Partial<RunFileRecord> = {}): RunFileRecord {
  return {
    run_id: run,
    seq,
    outcome,
    kind: 'file',
    side: 'target',
    path: `/Photos/${run}/img-${seq}.jpg`,
    other_path: null,
    size: seq * 10,
    reason: null,
    message: null,
    ...extra,
  };
}

for (const dialect of ['sqlite', 'postgres'] as const satisfies readonly Dialect[]) {
  describe(`the run file blocks migration [${dialect}]`, () => {
    it("carries every run's file rows into blocks and back", async () => {
      const dir = mkdtempSync(join(tmpdir(), 'skyferry-migrate-'));
      const url = dialect === 'postgres' ? await createDatabase(inject('postgresUrl')) : join(dir, 'skyferry.db');
      const db = createDb({ url });
      try {
        const migrator = new Migrator({ db: db.kysely, provider: { getMigrations: async () => migrations } });
        expect((await migrator.migrateTo('0020_compact_checkpoints')).error).toBeUndefined();
        const old: RunFileRecord[] = [
          // More rows than one read of the migration and one block, outcomes interleaved.
          ...Array.from({ length: 6200 }, (_, i) => row('run-a', i, i % 9 === 0 ? 'skipped' : 'added')),
          row('run-b', 0, 'conflict', { other_path: '/B/x (Laptop).txt', reason: 'keep_both', side: 'source' }),
          row('run-b', 1, 'failed', { kind: 'dir', size: null, reason: 'permission', message: 'denied "x" \\ y' }),
          row('run-b', 2, 'deleted', { path: '/B/ünïcödé 100%.txt' }),
        ];
        const legacy = db.kysely as unknown as Kysely<{ task_run_files: RunFileRecord }>;
        for (let i = 0; i < old.length; i += 500)
          await legacy
            .insertInto('task_run_files')
            .values(old.slice(i, i + 500))
            .execute();
        expect((await migrator.migrateToLatest()).error).toBeUndefined();
        const blocks = (await sql<RunFileBlock>`select * from task_run_file_blocks`.execute(db.kysely)).rows;
        const carried = blocks
          .flatMap((b) => unpackRunFiles(b))
          .sort((x, y) => (x.run_id === y.run_id ? x.seq - y.seq : x.run_id < y.run_id ? -1 : 1));
        expect(carried).toEqual(old);
        // Each block is one run's and one outcome's, its range and count those of its files.
        for (const b of blocks) {
          const files = unpackRunFiles(b);
          expect(files.length).toBe(Number(b.n));
          expect(Math.min(...files.map((f) => f.seq))).toBe(Number(b.first_seq));
          expect(Math.max(...files.map((f) => f.seq))).toBe(Number(b.last_seq));
          expect(files.every((f) => f.outcome === b.outcome && f.run_id === b.run_id)).toBe(true);
        }
        expect(blocks.length).toBeLessThan(40);

        expect((await migrator.migrateTo('0020_compact_checkpoints')).error).toBeUndefined();
        const back = await legacy.selectFrom('task_run_files').selectAll().orderBy('run_id').orderBy('seq').execute();
        expect(back.map((r) => ({ ...r, seq: Number(r.seq), size: r.size === null ? null : Number(r.size) }))).toEqual(
          old,
        );
      } finally {
        await db.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
