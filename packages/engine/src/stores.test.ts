import { mkdtempSync, rmSync } from 'node:fs';
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
});
