import type { Kysely } from 'kysely';
import { packRunFiles, unpackRunFiles, type RunFileBlock, type RunFileRecord } from '../run-file-blocks.ts';

/**
 * A run's files in blocks of up to 500 files of one outcome (run-file-blocks.ts): the history of
 * a large run costs a fraction of the space of a row per file. Both indexes cover the seq range,
 * so a page of files reads only the blocks it needs. Existing rows are carried over.
 */
type Db = Kysely<{ task_run_files: RunFileRecord; task_run_file_blocks: RunFileBlock }>;

const READ = 5000;
const WRITE = 50;

async function createBlocks(db: Db): Promise<void> {
  await db.schema
    .createTable('task_run_file_blocks')
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('first_seq', 'integer', (c) => c.notNull())
    .addColumn('last_seq', 'integer', (c) => c.notNull())
    .addColumn('n', 'integer', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('task_run_file_blocks_seq')
    .unique()
    .on('task_run_file_blocks')
    .columns(['run_id', 'first_seq', 'last_seq'])
    .execute();
  await db.schema
    .createIndex('task_run_file_blocks_outcome')
    .on('task_run_file_blocks')
    .columns(['run_id', 'outcome', 'first_seq', 'last_seq'])
    .execute();
}

async function writeBlocks(db: Db, blocks: RunFileBlock[]): Promise<void> {
  for (let i = 0; i < blocks.length; i += WRITE) {
    await db
      .insertInto('task_run_file_blocks')
      .values(blocks.slice(i, i + WRITE))
      .execute();
  }
}

export async function up(raw: Kysely<unknown>): Promise<void> {
  const db = raw as Db;
  await createBlocks(db);
  // Read in (run_id, seq) order a page at a time.
  let run: string | undefined;
  let rows: RunFileRecord[] = [];
  let after: { run: string; seq: number } | undefined;
  for (;;) {
    let q = db.selectFrom('task_run_files').selectAll();
    if (after) {
      const a = after;
      q = q.where((eb) => eb.or([eb('run_id', '>', a.run), eb.and([eb('run_id', '=', a.run), eb('seq', '>', a.seq)])]));
    }
    const page = await q.orderBy('run_id').orderBy('seq').limit(READ).execute();
    for (const r of page) {
      // A run's blocks end where a run ends, or every 20,000 rows (memory stays bounded).
      if (r.run_id !== run || rows.length >= 20_000) {
        await writeBlocks(db, packRunFiles(rows));
        rows = [];
        run = r.run_id;
      }
      rows.push({ ...r, seq: Number(r.seq), size: r.size === null ? null : Number(r.size) });
    }
    if (page.length < READ) break;
    const last = page[page.length - 1] as RunFileRecord;
    after = { run: last.run_id, seq: Number(last.seq) };
  }
  await writeBlocks(db, packRunFiles(rows));
  await db.schema.dropTable('task_run_files').execute();
}

export async function down(raw: Kysely<unknown>): Promise<void> {
  const db = raw as Db;
  await db.schema
    .createTable('task_run_files')
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('side', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('other_path', 'text')
    .addColumn('size', 'bigint')
    .addColumn('reason', 'text')
    .addColumn('message', 'text')
    .addPrimaryKeyConstraint('task_run_files_pk', ['run_id', 'seq'])
    .execute();
  await db.schema
    .createIndex('task_run_files_outcome')
    .on('task_run_files')
    .columns(['run_id', 'outcome', 'seq'])
    .execute();
  let after: { run: string; first: number } | undefined;
  for (;;) {
    let q = db.selectFrom('task_run_file_blocks').selectAll();
    if (after) {
      const a = after;
      q = q.where((eb) =>
        eb.or([eb('run_id', '>', a.run), eb.and([eb('run_id', '=', a.run), eb('first_seq', '>', a.first)])]),
      );
    }
    const page = await q.orderBy('run_id').orderBy('first_seq').limit(20).execute();
    for (const b of page) {
      const rows = unpackRunFiles(b);
      for (let i = 0; i < rows.length; i += 500) {
        await db
          .insertInto('task_run_files')
          .values(rows.slice(i, i + 500))
          .execute();
      }
    }
    if (page.length < 20) break;
    const last = page[page.length - 1] as RunFileBlock;
    after = { run: last.run_id, first: Number(last.first_seq) };
  }
  await db.schema.dropTable('task_run_file_blocks').execute();
}
