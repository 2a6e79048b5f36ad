import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// A copy of a generated tree of N and of 4N files (folders of 100, ten below each), each in its
// own process with a full collection every 500 files: the heap left in use at its peak must not
// grow with the number of files. The items of the whole tree planned first held 21 MB more at
// 80,000 files than at 20,000; the run that plans and copies folder by folder holds a window.

const CHILD = fileURLToPath(new URL('./testing/memory-child.ts', import.meta.url));
const run = promisify(execFile);

async function peakOf(
  files: number,
  how: 'stream' | 'count' = 'stream',
): Promise<{ peak: number; files: number; outcome: string; added: number }> {
  const { stdout } = await run(process.execPath, ['--expose-gc', CHILD, String(files), how], {
    maxBuffer: 1 << 20,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1) as string) as {
    peak: number;
    files: number;
    outcome: string;
    added: number;
  };
}

describe('a copy planned and executed folder by folder (streamTransfer)', () => {
  it('holds about as much at 80,000 files as at 20,000', async () => {
    const small = await peakOf(20_000);
    const large = await peakOf(80_000);
    expect(small).toMatchObject({ outcome: 'success', files: 20_000, added: 20_000 });
    expect(large).toMatchObject({ outcome: 'success', files: 80_000, added: 80_000 });
    // 60,000 more files: less than 100 bytes each (what stays is per folder, not per file).
    expect(large.peak - small.peak).toBeLessThan(6 * 1024 * 1024);
  }, 180_000);
});

describe('a plan made for its figures only (countOnly: the checks before a task is created)', () => {
  it('holds about as much at 80,000 files as at 20,000, and counts every file', async () => {
    const small = await peakOf(20_000, 'count');
    const large = await peakOf(80_000, 'count');
    expect(small).toMatchObject({ outcome: 'planned', files: 20_000, items: 0 });
    expect(large).toMatchObject({ outcome: 'planned', files: 80_000, items: 0 });
    // Keeping the items: about 12 MB more for the 60,000 more files.
    expect(large.peak - small.peak).toBeLessThan(3 * 1024 * 1024);
  }, 180_000);
});
