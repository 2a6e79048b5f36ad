/** Test support: two in-memory folders hold the same files, by path and content. */
import { expect } from 'vitest';
import type { MemoryStore } from './testing/memory-provider.ts';

export function sameFiles(a: MemoryStore, aDir: string, b: MemoryStore, bDir: string): void {
  const x = a.files(aDir);
  const y = b.files(bDir);
  expect([...y.keys()].sort()).toEqual([...x.keys()].sort());
  for (const [k, v] of x) expect(y.get(k)?.md5, k).toBe(v.md5);
}
