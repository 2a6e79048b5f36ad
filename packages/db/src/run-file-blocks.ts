import type { TaskRunFileBlocksTable, TaskRunFilesTable } from './schema/runs.ts';

/**
 * The files a run handled are kept in blocks: one row holds up to RUN_FILE_BLOCK_ROWS files of one
 * outcome, in the order the run reported them, as a JSON array of short arrays. A large run's
 * history then costs tens of bytes a file (about 35 in SQLite with short paths), where a row per
 * file, with the run's id and two index entries each, would cost about 200.
 */

/** One file of a run, as the run history shows it. */
export type RunFileRecord = TaskRunFilesTable;

/** Most files in one block. */
export const RUN_FILE_BLOCK_ROWS = 500;

/**
 * A block as stored (table task_run_file_blocks); `data` is JSON: [[seq, flags, path, size,
 * other_path, reason, message], ...] with trailing nulls left out; flags: 1 a folder, 2 the source side.
 */
export type RunFileBlock = TaskRunFileBlocksTable;

type Packed = [number, number, string, (number | null)?, (string | null)?, (string | null)?, (string | null)?];

function pack(r: RunFileRecord): Packed {
  const row: Packed = [
    r.seq,
    (r.kind === 'dir' ? 1 : 0) | (r.side === 'source' ? 2 : 0),
    r.path,
    r.size ?? null,
    r.other_path ?? null,
    r.reason ?? null,
    r.message ?? null,
  ];
  while (row.length > 3 && row[row.length - 1] === null) row.pop();
  return row;
}

/**
 * Blocks of `rows` (any runs and outcomes, each run's rows in `seq` order): consecutive rows of one
 * run and outcome share a block, up to RUN_FILE_BLOCK_ROWS.
 */
export function packRunFiles(rows: readonly RunFileRecord[]): RunFileBlock[] {
  const open = new Map<string, { block: RunFileBlock; packed: Packed[] }>();
  const out: Array<{ block: RunFileBlock; packed: Packed[] }> = [];
  for (const r of rows) {
    const key = `${r.run_id}\n${r.outcome}`;
    let cur = open.get(key);
    if (!cur || cur.packed.length >= RUN_FILE_BLOCK_ROWS) {
      cur = {
        block: { run_id: r.run_id, outcome: r.outcome, first_seq: r.seq, last_seq: r.seq, n: 0, data: '' },
        packed: [],
      };
      open.set(key, cur);
      out.push(cur);
    }
    cur.packed.push(pack(r));
    cur.block.first_seq = Math.min(cur.block.first_seq, r.seq);
    cur.block.last_seq = Math.max(cur.block.last_seq, r.seq);
  }
  return out.map(({ block, packed }) => ({ ...block, n: packed.length, data: JSON.stringify(packed) }));
}

/** The files of a block, in its order. */
export function unpackRunFiles(block: Pick<RunFileBlock, 'run_id' | 'outcome' | 'data'>): RunFileRecord[] {
  const packed = JSON.parse(block.data) as Packed[];
  return packed.map((p) => ({
    run_id: block.run_id,
    seq: p[0],
    outcome: block.outcome,
    kind: p[1] & 1 ? 'dir' : 'file',
    side: p[1] & 2 ? 'source' : 'target',
    path: p[2],
    other_path: p[4] ?? null,
    size: p[3] ?? null,
    reason: p[5] ?? null,
    message: p[6] ?? null,
  }));
}
