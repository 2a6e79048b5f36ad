import { expect, it } from 'vitest';
import { sql } from '@skyferry/db';
import { describeEachDialect } from '@skyferry/db/testing';
import { TaskRunsRepository, type NewRunFileRow, type NewTaskRunRow } from './task-runs.ts';

const DAY = 86_400_000;

function run(id: string, taskId: string, startedAt: number, finishedAt: number | null): NewTaskRunRow {
  return {
    id,
    task_id: taskId,
    user_id: 'u1',
    job_id: `j-${id}`,
    kind: 'transfer',
    trigger: 'manual',
    outcome: finishedAt === null ? null : 'success',
    started_at: startedAt,
    finished_at: finishedAt,
    counts: '{}',
    listed: '{}',
    figures: '{}',
    error: null,
  };
}

function file(runId: string, seq: number, outcome: string, path: string): NewRunFileRow {
  return {
    run_id: runId,
    seq,
    outcome,
    kind: 'file',
    side: 'target',
    path,
    other_path: null,
    size: seq,
    reason: null,
    message: null,
  };
}

describeEachDialect('task runs repository', (getDb, dialect) => {
  const repo = () => new TaskRunsRepository(getDb().kysely, getDb().dialect);

  it('writes thousands of file rows in batches and pages them by cursor, within an outcome', async () => {
    const r = repo();
    await r.insert(run('r1', 't1', 1000, 2000));
    const rows = Array.from({ length: 2500 }, (_, i) =>
      file('r1', i, i % 5 === 0 ? 'failed' : 'added', `/Dst/dir-${i % 7}/file-${String(i).padStart(4, '0')}.txt`),
    );
    await r.insertFiles(rows);
    const seen: number[] = [];
    let after: number | undefined;
    for (;;) {
      const page = await r.files('r1', { outcome: 'failed', after, limit: 120 });
      if (page.length === 0) break;
      seen.push(...page.map((p) => p.seq));
      after = page[page.length - 1]?.seq;
    }
    expect(seen).toEqual(rows.filter((x) => x.outcome === 'failed').map((x) => x.seq));
    const all = await r.files('r1', { limit: 5000 });
    expect(all).toHaveLength(2500);
    expect(all[2499]).toMatchObject({ seq: 2499, path: '/Dst/dir-0/file-2499.txt', size: 2499 });
  });

  it('searches paths case-insensitively, with % and _ meaning themselves', async () => {
    const r = repo();
    await r.insert(run('r2', 't2', 1000, 2000));
    await r.insertFiles([
      file('r2', 0, 'added', '/A/Report 100%.txt'),
      file('r2', 1, 'added', '/A/report_1.txt'),
      file('r2', 2, 'added', '/A/reportX1.txt'),
      file('r2', 3, 'skipped', '/B/REPORT.TXT'),
      file('r2', 4, 'added', '/A/back\\slash.txt'),
    ]);
    const paths = async (q: string, outcome?: string) =>
      (await r.files('r2', { q, outcome, limit: 100 })).map((f) => f.path);
    expect(await paths('report')).toEqual([
      '/A/Report 100%.txt',
      '/A/report_1.txt',
      '/A/reportX1.txt',
      '/B/REPORT.TXT',
    ]);
    expect(await paths('report', 'added')).toHaveLength(3);
    expect(await paths('100%')).toEqual(['/A/Report 100%.txt']);
    expect(await paths('t_1')).toEqual(['/A/report_1.txt']);
    expect(await paths('k\\s')).toEqual(['/A/back\\slash.txt']);
    expect(await paths('nothing')).toEqual([]);
    // Another run's rows are never seen.
    expect((await r.files('r1', { q: 'REPORT', limit: 10 })).length).toBe(0);
  });

  it('lists a task’s runs newest first with the whole count, and knows the latest of a kind', async () => {
    const r = repo();
    for (let i = 0; i < 7; i++) await r.insert(run(`l${i}`, 't3', 10_000 + i, 10_000 + i + 1));
    await r.insert({ ...run('lv', 't3', 20_000, null), kind: 'verify' });
    const first = await r.list('u1', 't3', 1, 3);
    expect(first.total).toBe(8);
    expect(first.rows.map((x) => x.id)).toEqual(['lv', 'l6', 'l5']);
    const last = await r.list('u1', 't3', 3, 3);
    expect(last.rows.map((x) => x.id)).toEqual(['l1', 'l0']);
    expect((await r.list('u1', 't3', 9, 3)).total).toBe(8);
    expect((await r.list('u1', 't3', 1, 10, 'verify')).rows.map((x) => x.id)).toEqual(['lv']);
    expect((await r.list('someone-else', 't3', 1, 10)).total).toBe(0);
    expect((await r.latest('t3', 'transfer'))?.id).toBe('l6');
    // An open attempt of a job is closed as interrupted; finished ones are left alone.
    await r.insert(run('open', 't3', 30_000, null));
    expect(await r.closeOpen('j-open', 'interrupted', 31_000)).toBe(1);
    expect(await r.closeOpen('j-l1', 'interrupted', 31_000)).toBe(0);
    expect(await r.getById('open')).toMatchObject({ outcome: 'interrupted', finished_at: 31_000 });
  });

  it(`prunes runs that ended before the cutoff, with their files, and nothing else [${dialect}]`, async () => {
    const r = repo();
    const now = 1_000 * DAY;
    await r.insert(run('old', 't4', now - 100 * DAY, now - 91 * DAY));
    await r.insert(run('recent', 't4', now - 10 * DAY, now - 9 * DAY));
    await r.insert(run('going', 't4', now - 200 * DAY, null));
    await r.insertFiles([
      file('old', 0, 'added', '/x'),
      file('old', 1, 'added', '/y'),
      file('recent', 0, 'added', '/z'),
    ]);
    // (The runs of the tests above ended long before too.)
    expect(await r.pruneFinishedBefore(now - 90 * DAY)).toBeGreaterThanOrEqual(1);
    expect(await r.getById('old')).toBeUndefined();
    expect(await r.files('old', { limit: 10 })).toEqual([]);
    expect((await r.files('recent', { limit: 10 })).map((f) => f.path)).toEqual(['/z']);
    expect(await r.getById('going')).toBeDefined();
    expect(await r.pruneFinishedBefore(now - 90 * DAY)).toBe(0);
  });
  it(`keeps a large run’s file rows in under 50 bytes a file [${dialect}]`, async () => {
    const r = repo();
    const db = getDb().kysely;
    // Bytes the database's tables and indexes take (SQLite: pages in use; PostgreSQL: the whole database).
    const used = async () => {
      if (dialect === 'postgres') {
        const res = await sql<{ n: string }>`select pg_database_size(current_database()) as n`.execute(db);
        return Number(res.rows[0]?.n);
      }
      const pages = await sql<{ page_count: number }>`pragma page_count`.execute(db);
      const free = await sql<{ freelist_count: number }>`pragma freelist_count`.execute(db);
      return ((pages.rows[0]?.page_count ?? 0) - (free.rows[0]?.freelist_count ?? 0)) * 4096;
    };
    await r.insert(run('big', 't5', 1000, 2000));
    const before = await used();
    const files = 20_000;
    // As a run writes them: batches of 1,000, a few files failed among the added ones.
    for (let i = 0; i < files; i += 1000) {
      await r.insertFiles(
        Array.from({ length: 1000 }, (_, k) => {
          const seq = i + k;
          return file(
            'big',
            seq,
            seq % 997 === 0 ? 'failed' : 'added',
            `/d${seq % 40}/f${String(seq).padStart(6, '0')}.bin`,
          );
        }),
      );
    }
    const perFile = ((await used()) - before) / files;
    expect(perFile).toBeLessThan(50);
    // Every row is still there, in order, and paged within an outcome.
    const failed = await r.files('big', { outcome: 'failed', limit: 100 });
    expect(failed.map((f) => f.seq)).toEqual(Array.from({ length: 21 }, (_, k) => k * 997));
    const page = await r.files('big', { after: 12_345, limit: 3 });
    expect(page.map((f) => [f.seq, f.path, f.size])).toEqual([
      [12_346, '/d26/f012346.bin', 12_346],
      [12_347, '/d27/f012347.bin', 12_347],
      [12_348, '/d28/f012348.bin', 12_348],
    ]);
    expect((await r.files('big', { q: 'F019999', limit: 5 })).map((f) => f.seq)).toEqual([19_999]);
  });
});
