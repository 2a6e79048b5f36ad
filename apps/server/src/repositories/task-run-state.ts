import { hash, randomUUID } from 'node:crypto';
import {
  checkpointRowKey,
  onPostgres,
  sql,
  type Database,
  type Expression,
  type ExpressionBuilder,
  type Kysely,
  type SqlBool,
} from '@skyferry/db';
import {
  tempFolderKey,
  type CheckpointInfo,
  type CheckpointStore,
  type CheckpointTally,
  type IntentLookup,
  type PlanAction,
  type PlannedFigures,
  type TempFolder,
  type TwoWayRecord,
  type TwoWayStateStore,
} from '@skyferry/engine';

const BATCH = 400;
/** Rows a run's end forgets in one SQLite statement (`clear`): a few milliseconds' work. */
const CLEAR_CHUNK = 2000;
/** A run that forgets this many rows or more has the checkpoints' index rebuilt on PostgreSQL. */
const REINDEX_AFTER_ROWS = 1000;

/** Rows recording folders the run writes temporary files into: this prefix and the folder's key. */
const TEMP_PREFIX = '#temp|';
/** The row keeping the first attempt's plan figures (`savePlanned`): this prefix and the run's key. */
const PLANNED_PREFIX = '#planned|';
/** Rows announcing files a streamed run is about to write (`intend`): this prefix and a batch id. */
const INTENT_PREFIX = '#intent|';
/** The first character of a finished file's row key (a row of an earlier version has none). */
const FILE_PREFIX = '~';

const INTENT_LETTER: Partial<Record<PlanAction, string>> = { copy: 'c', update: 'u' };

/**
 * `items` in runs of 256, 128, ... 1 (400 go as 256, 128 and 16): a statement is prepared once for
 * each of those few shapes and used again (SQLite keeps each prepared statement's program in native
 * memory until it is collected, packages/db `reusingStatements`), where a statement for each count
 * up to BATCH would be prepared again and again.
 */
function* inRuns<T>(items: T[]): Generator<T[]> {
  let at = 0;
  for (let size = 256; size >= 1; size /= 2) {
    while (items.length - at >= size) {
      yield items.slice(at, at + size);
      at += size;
    }
  }
}

const digest = (s: string) => hash('sha256', s, 'base64url');

/** The first string after every string that starts with `prefix` (its last character one up). */
const pastPrefix = (prefix: string) =>
  prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);

/**
 * The row key of a finished file: "~", a digest of the engine's key up to its last "/" (the file's
 * folder, 7 characters) and of the whole key (14). Files of one folder finish together and sit
 * together in the key's order, so a batch of them writes a few of the table's pages rather than one
 * page per file (a digest of the whole key alone scatters them). The run's own rows (`#...`) stay
 * readable.
 */
export function fileRowKey(key: string): string {
  if (key.startsWith('#')) return key;
  const folder = key.slice(0, key.lastIndexOf('/') + 1);
  // Files of one folder come one after another: its digest is kept for the next.
  if (folder !== lastFolder.path) lastFolder = { path: folder, digest: digest(folder).slice(0, 7) };
  return FILE_PREFIX + lastFolder.digest + digest(key).slice(0, 14);
}
let lastFolder = { path: '', digest: '' };

/**
 * The engine's checkpoints of one task in the database: every finished file is recorded, so a run
 * resumed by another worker after a crash does not copy it again. A file's row is kept small: its
 * key as digests of the engine's key (`fileRowKey`), and its record without the path it was read
 * from unless the run is a move, which needs it (`keepReadPaths`). Rows an earlier version wrote
 * (keyed by `checkpointRowKey`) are still found.
 */
export class TaskCheckpointStore implements CheckpointStore {
  private readonly db: Kysely<Database>;
  private readonly taskId: string;
  private readonly runKey: string;
  private readonly keepReadPaths: boolean;
  private readonly postgres: boolean;
  /**
   * `runKey` names the run (its job, the same for every attempt of it): the first attempt's plan
   * figures are kept for that run only, past `clear` too (a worker killed after its run cleared its
   * checkpoints but before it stored the outcome leaves a run that is taken over with none).
   */
  constructor(db: Kysely<Database>, taskId: string, runKey = '', opts: { keepReadPaths?: boolean } = {}) {
    this.db = db;
    this.taskId = taskId;
    this.runKey = runKey;
    this.keepReadPaths = opts.keepReadPaths ?? false;
    this.postgres = onPostgres(db as Kysely<unknown>);
  }

  async get(key: string): Promise<CheckpointInfo | undefined> {
    return (await this.getMany([key])).get(key);
  }

  /** Whether the task has finished files' rows an earlier version wrote (asked once). */
  private legacy: Promise<boolean> | undefined;

  private hasLegacyRows(): Promise<boolean> {
    // Their keys are base64url digests: between the run's own rows ("#") and files' rows ("~").
    this.legacy ??= this.db
      .selectFrom('task_checkpoints')
      .select('key')
      .where('task_id', '=', this.taskId)
      .where((eb) =>
        this.postgres
          ? eb.and([eb('key', 'not like', '#%'), eb('key', 'not like', `${FILE_PREFIX}%`)])
          : eb.and([eb('key', '>=', '$'), eb('key', '<', FILE_PREFIX)]),
      )
      .limit(1)
      .executeTakeFirst()
      .then((row) => row !== undefined);
    return this.legacy;
  }

  async getMany(keys: string[]): Promise<Map<string, CheckpointInfo>> {
    const out = new Map<string, CheckpointInfo>();
    const legacy = await this.hasLegacyRows();
    const step = legacy ? BATCH / 2 : BATCH;
    for (let i = 0; i < keys.length; i += step) {
      const byRow = new Map<string, string>();
      for (const k of keys.slice(i, i + step)) {
        byRow.set(fileRowKey(k), k);
        if (legacy) byRow.set(checkpointRowKey(k), k);
      }
      for (const run of inRuns([...byRow.keys()])) {
        const rows = await this.db
          .selectFrom('task_checkpoints')
          .select(['key', 'info'])
          .where('task_id', '=', this.taskId)
          .where('key', 'in', run)
          .execute();
        for (const row of rows) out.set(byRow.get(row.key) as string, JSON.parse(row.info) as CheckpointInfo);
      }
    }
    return out;
  }

  private pending: Array<{ key: string; info: string; done: () => void; fail: (err: unknown) => void }> = [];
  private flushing = false;

  /**
   * Records a finished item; resolves once it is committed. Items finishing in the same turn of the
   * event loop, or while a write is under way, go together in one statement: one commit for many
   * files keeps the database's write volume (and SQLite's checkpoints) down when many small files
   * finish at once. The write waits for the turn to end (setImmediate): SQLite's driver answers
   * at once, so starting it at the first record would commit the files one by one.
   */
  markDone(key: string, info: CheckpointInfo): Promise<void> {
    const kept = info.read && !this.keepReadPaths ? { ...info, read: undefined } : info;
    return new Promise((done, fail) => {
      this.pending.push({ key: fileRowKey(key), info: JSON.stringify(kept), done, fail });
      if (!this.flushing) {
        this.flushing = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, BATCH);
      // The last record of a key wins within a batch, as it would one statement after another.
      const rows = new Map(batch.map((b) => [b.key, b.info]));
      try {
        for (const run of inRuns([...rows])) {
          await this.db
            .insertInto('task_checkpoints')
            .values(run.map(([key, info]) => ({ task_id: this.taskId, key, info })))
            .onConflict((oc) => oc.columns(['task_id', 'key']).doUpdateSet((eb) => ({ info: eb.ref('excluded.info') })))
            .execute();
        }
        for (const b of batch) b.done();
      } catch (err) {
        for (const b of batch) b.fail(err);
      }
    }
    this.flushing = false;
  }

  /**
   * Forgets the finished files; the temporary-file records stay (forgotten once their leftovers
   * are removed), and so do the run's first figures (replaced by the next run's).
   */
  async clear(): Promise<void> {
    const forgotten = this.db
      .selectFrom('task_checkpoints')
      .select('key')
      .where('task_id', '=', this.taskId)
      .where((eb) => eb.or([eb('key', 'not like', '#%'), this.startsWith(INTENT_PREFIX)(eb)]))
      .limit(CLEAR_CHUNK);
    // A few thousand rows a statement (a run has a row a file): SQLite runs each statement on the
    // event loop, and the server answers between them.
    let deleted = 0;
    for (;;) {
      const res = await this.db
        .deleteFrom('task_checkpoints')
        .where('task_id', '=', this.taskId)
        .where('key', 'in', forgotten)
        .executeTakeFirst();
      deleted += Number(res.numDeletedRows);
      if (Number(res.numDeletedRows) < CLEAR_CHUNK) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    // PostgreSQL keeps deleted rows' space until a vacuum: a run's rows would stay as the
    // database's growth. One now frees them (and gives emptied pages at the end back).
    if (this.postgres) {
      await sql`vacuum task_checkpoints`.execute(this.db).catch(() => undefined);
      if (deleted >= REINDEX_AFTER_ROWS) await this.rebuildIndex();
    }
  }

  /**
   * A B-tree keeps the pages a vacuum empties (about 120 B a file of a run's rows): rebuilt, the
   * primary key's index holds only the rows left. `concurrently`: writes of other runs go on
   * meanwhile. One that fails leaves an invalid copy behind, which goes too.
   */
  private async rebuildIndex(): Promise<void> {
    try {
      await sql`reindex index concurrently task_checkpoints_pk`.execute(this.db);
    } catch {
      await sql`drop index concurrently if exists task_checkpoints_pk_ccnew`.execute(this.db).catch(() => undefined);
    }
  }

  async savePlanned(figures: PlannedFigures): Promise<void> {
    await this.db
      .deleteFrom('task_checkpoints')
      .where('task_id', '=', this.taskId)
      .where(this.startsWith(PLANNED_PREFIX))
      .execute();
    await this.markDone(PLANNED_PREFIX + this.runKey, figures as unknown as CheckpointInfo);
  }

  /**
   * One row per batch: the files' row keys (`fileRowKey`) and a letter each for the action
   * (c copy, u update, o other). Written with the finished files' records, committed when it resolves.
   */
  async intend(items: Array<[key: string, action: PlanAction]>): Promise<string> {
    const id = randomUUID();
    const batch = {
      k: items.map(([key]) => fileRowKey(key)),
      a: items.map(([, a]) => INTENT_LETTER[a] ?? 'o').join(''),
    };
    await this.markDone(INTENT_PREFIX + id, batch as unknown as CheckpointInfo);
    return id;
  }

  async intentsDone(id: string): Promise<void> {
    await this.db
      .deleteFrom('task_checkpoints')
      .where('task_id', '=', this.taskId)
      .where('key', '=', INTENT_PREFIX + id)
      .execute();
  }

  async intents(): Promise<IntentLookup | undefined> {
    const rows = await this.infosOf(INTENT_PREFIX);
    if (rows.length === 0) return undefined;
    const meant = new Map<string, PlanAction>();
    for (const info of rows) {
      const batch = JSON.parse(info) as { k: string[]; a: string };
      batch.k.forEach((k, i) => {
        const a = batch.a[i];
        if (a === 'c' || a === 'u') meant.set(k, a === 'c' ? 'copy' : 'update');
      });
    }
    return (key) => meant.get(fileRowKey(key));
  }

  async planned(): Promise<PlannedFigures | undefined> {
    return (await this.get(PLANNED_PREFIX + this.runKey)) as unknown as PlannedFigures | undefined;
  }

  /** Every finished file recorded (not the run's own rows). */
  async all(): Promise<CheckpointInfo[]> {
    const rows = await this.db
      .selectFrom('task_checkpoints')
      .select('info')
      .where('task_id', '=', this.taskId)
      .where('key', 'not like', '#%')
      .execute();
    return rows.map((r) => JSON.parse(r.info) as CheckpointInfo);
  }

  /** This store, except that the run's end keeps the records (a move clears them after its deletions). */
  keepingRecords(): CheckpointStore {
    return {
      get: (key) => this.get(key),
      getMany: (keys) => this.getMany(keys),
      markDone: (key, info) => this.markDone(key, info),
      clear: async () => undefined,
      addTempFolder: (folder) => this.addTempFolder(folder),
      tempFolders: () => this.tempFolders(),
      removeTempFolders: (folders) => this.removeTempFolders(folders),
      tally: () => this.tally(),
      savePlanned: (figures) => this.savePlanned(figures),
      planned: () => this.planned(),
    };
  }

  async addTempFolder(folder: TempFolder): Promise<void> {
    await this.markDone(TEMP_PREFIX + tempFolderKey(folder), folder as unknown as CheckpointInfo);
  }

  async tempFolders(): Promise<TempFolder[]> {
    return (await this.infosOf(TEMP_PREFIX)).map((info) => JSON.parse(info) as TempFolder);
  }

  /**
   * The task's rows whose keys start with `prefix`. On SQLite a range of the primary key: a LIKE
   * there cannot use it, and a scan of a run's million rows, in one statement on the event loop,
   * holds the server for a quarter of a second. On PostgreSQL a LIKE (its ranges follow the
   * database's collation; its statements do not run on the event loop).
   */
  private startsWith(prefix: string): (eb: ExpressionBuilder<Database, 'task_checkpoints'>) => Expression<SqlBool> {
    return (eb) =>
      this.postgres
        ? eb('key', 'like', `${prefix}%`)
        : eb.and([eb('key', '>=', prefix), eb('key', '<', pastPrefix(prefix))]);
  }

  /** The records of the run's own rows whose keys start with `prefix`. */
  private async infosOf(prefix: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('task_checkpoints')
      .select('info')
      .where('task_id', '=', this.taskId)
      .where(this.startsWith(prefix))
      .execute();
    return rows.map((r) => r.info);
  }

  async removeTempFolders(folders: TempFolder[]): Promise<void> {
    const keys = folders.map((f) => TEMP_PREFIX + tempFolderKey(f));
    for (let i = 0; i < keys.length; i += BATCH) {
      await this.db
        .deleteFrom('task_checkpoints')
        .where('task_id', '=', this.taskId)
        .where('key', 'in', keys.slice(i, i + BATCH))
        .execute();
    }
  }

  /**
   * What earlier, interrupted attempts of this run finished: items by action and their bytes (a
   * resumed run adds them to its own figures).
   */
  async tally(): Promise<CheckpointTally> {
    const tally: CheckpointTally = { count: 0, bytes: 0, byAction: {} };
    let after = '';
    for (;;) {
      const rows = await this.db
        .selectFrom('task_checkpoints')
        .select(['key', 'info'])
        .where('task_id', '=', this.taskId)
        .where('key', '>', after)
        .orderBy('key')
        .limit(5000)
        .execute();
      for (const row of rows) {
        if (row.key.startsWith('#')) continue;
        const info = JSON.parse(row.info) as CheckpointInfo;
        tally.count += 1;
        tally.bytes += info.bytes;
        tally.byAction[info.action] = (tally.byAction[info.action] ?? 0) + 1;
      }
      if (rows.length < 5000) return tally;
      after = rows[rows.length - 1]?.key ?? after;
    }
  }

  /** How many files are recorded (tests, and the resume log line). */
  async count(): Promise<number> {
    const row = await this.db
      .selectFrom('task_checkpoints')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('task_id', '=', this.taskId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}

function parentRel(rel: string): string {
  const i = rel.lastIndexOf('/');
  return i <= 0 ? '/' : rel.slice(0, i);
}

/** Marks that a successful run left state (which may be empty: both folders were empty). */
const MARKER_REL = '';

/**
 * The two-way sync state of one task: "current" is what both sides looked like after the last
 * successful run; a run stages the next state and commits it (in one transaction) only when it
 * succeeded, so a failed or interrupted run leaves the previous state as it was.
 */
export class TaskTwoWayStateStore implements TwoWayStateStore {
  private readonly db: Kysely<Database>;
  private readonly taskId: string;
  constructor(db: Kysely<Database>, taskId: string) {
    this.db = db;
    this.taskId = taskId;
  }

  async hasState(): Promise<boolean> {
    const row = await this.db
      .selectFrom('task_sync_state')
      .select('rel')
      .where('task_id', '=', this.taskId)
      .where('generation', '=', 'current')
      .where('rel', '=', MARKER_REL)
      .executeTakeFirst();
    return row !== undefined;
  }

  async loadFolder(dir: string): Promise<TwoWayRecord[]> {
    const rows = await this.db
      .selectFrom('task_sync_state')
      .select('record')
      .where('task_id', '=', this.taskId)
      .where('generation', '=', 'current')
      .where('dir', '=', dir)
      .where('rel', '!=', MARKER_REL)
      .execute();
    return rows.map((r) => JSON.parse(r.record) as TwoWayRecord);
  }

  async beginStaging(): Promise<void> {
    await this.discard();
  }

  async stage(records: TwoWayRecord[]): Promise<void> {
    for (let i = 0; i < records.length; i += BATCH) {
      const values = records.slice(i, i + BATCH).map((r) => ({
        task_id: this.taskId,
        generation: 'staged',
        dir: parentRel(r.rel),
        rel: r.rel,
        record: JSON.stringify(r),
      }));
      await this.db
        .insertInto('task_sync_state')
        .values(values)
        .onConflict((oc) =>
          oc.columns(['task_id', 'generation', 'rel']).doUpdateSet((eb) => ({
            dir: eb.ref('excluded.dir'),
            record: eb.ref('excluded.record'),
          })),
        )
        .execute();
    }
  }

  async commit(): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx
        .deleteFrom('task_sync_state')
        .where('task_id', '=', this.taskId)
        .where('generation', '=', 'current')
        .execute();
      await trx
        .updateTable('task_sync_state')
        .set({ generation: 'current' })
        .where('task_id', '=', this.taskId)
        .where('generation', '=', 'staged')
        .execute();
      await trx
        .insertInto('task_sync_state')
        .values({ task_id: this.taskId, generation: 'current', dir: '', rel: MARKER_REL, record: '{}' })
        .onConflict((oc) => oc.columns(['task_id', 'generation', 'rel']).doNothing())
        .execute();
    });
  }

  async discard(): Promise<void> {
    await this.db
      .deleteFrom('task_sync_state')
      .where('task_id', '=', this.taskId)
      .where('generation', '=', 'staged')
      .execute();
  }
}
