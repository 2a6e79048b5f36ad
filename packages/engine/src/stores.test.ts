import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileCheckpointStore } from './stores.ts';

let base = '';
afterEach(() => {
  if (base) rmSync(base, { recursive: true, force: true });
});

describe('FileCheckpointStore', () => {
  it("keeps the first attempt's plan figures in a folder not made yet, for a store opened again, until clear()", async () => {
    base = mkdtempSync(join(tmpdir(), 'skyferry-store-'));
    const path = join(base, 'state', 'runs', 'a.jsonl');
    const store = new FileCheckpointStore(path);
    expect(await store.planned()).toBeUndefined();
    await store.savePlanned({ copy: 3, update: 1, skip: 2, of: '{}' });
    await store.markDone('k', { action: 'copy', bytes: 5 });
    await store.close();
    const again = new FileCheckpointStore(path);
    expect(await again.planned()).toEqual({ copy: 3, update: 1, skip: 2, of: '{}' });
    await again.clear();
    expect(await again.planned()).toBeUndefined();
    await again.close();
  });

  it('keeps the batches a streamed run announces for a store opened again (a torn line ignored), until settled or clear()', async () => {
    base = mkdtempSync(join(tmpdir(), 'skyferry-store-'));
    const path = join(base, 'runs', 'c.jsonl');
    const store = new FileCheckpointStore(path);
    expect(await store.intents()).toBeUndefined();
    const a = await store.intend([
      ['write|target|/s|/t|/a|1|2|', 'copy'],
      ['write|target|/s|/t|/b|1|2|', 'update'],
      ['mkdir|target|/s|/t|/d|||', 'mkdir'],
    ]);
    const b = await store.intend([['write|target|/s|/t|/c|1|2|', 'copy']]);
    await store.intentsDone(b);
    await store.close();
    // Killed mid-line: the torn line is not a batch.
    appendFileSync(`${path}.intents`, '{"n":"torn","w":[["x"');
    const again = new FileCheckpointStore(path);
    const meant = await again.intents();
    expect(meant?.('write|target|/s|/t|/a|1|2|')).toBe('copy');
    expect(meant?.('write|target|/s|/t|/b|1|2|')).toBe('update');
    expect(meant?.('write|target|/s|/t|/c|1|2|')).toBeUndefined();
    expect(meant?.('mkdir|target|/s|/t|/d|||')).toBeUndefined();
    await again.intentsDone(a);
    expect(await again.intents()).toBeUndefined();
    await again.intend([['write|target|/s|/t|/e|1|2|', 'copy']]);
    await again.clear();
    expect(await again.intents()).toBeUndefined();
    await again.close();
  });

  it("answers an earlier attempt's records when opened again (a torn last line ignored), with read paths only if asked", async () => {
    base = mkdtempSync(join(tmpdir(), 'skyferry-store-'));
    const path = join(base, 'runs', 'b.jsonl');
    const first = new FileCheckpointStore(path);
    for (let i = 0; i < 3000; i++)
      await first.markDone(`write|target|/|/|/d/f${i}|10|${i}|`, {
        action: 'copy',
        bytes: 10,
        read: { path: `/d/f${i}`, size: 10 },
      });
    await first.close();
    appendFileSync(path, '{"k":"write|target|/|/|/d/torn');
    const lean = new FileCheckpointStore(path, { keepReadPaths: false });
    expect(await lean.tally()).toEqual({ count: 3000, bytes: 30_000, byAction: { copy: 3000 } });
    expect(await lean.get('write|target|/|/|/d/f7|10|7|')).toEqual({ action: 'copy', bytes: 10 });
    const many = await lean.getMany(['write|target|/|/|/d/f1|10|1|', 'write|target|/|/|/d/f1|10|2|']);
    expect([...many.keys()]).toEqual(['write|target|/|/|/d/f1|10|1|']);
    // What this attempt records goes to the file for the next one.
    await lean.markDone('write|target|/|/|/d/new|1|1|', { action: 'copy', bytes: 1 });
    await lean.close();
    const withPaths = new FileCheckpointStore(path);
    expect(await withPaths.get('write|target|/|/|/d/new|1|1|')).toEqual({ action: 'copy', bytes: 1 });
    expect((await withPaths.all()).filter((i) => i.read?.path === '/d/f9')).toHaveLength(1);
    await withPaths.close();
  });
});
