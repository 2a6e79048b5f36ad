import { randomBytes } from 'node:crypto';
import {
  appendFileSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLocal, type Provider, type ReadOptions } from '@skyferry/providers';
import { runTransfer } from './run.ts';

// A source file that changes while it is copied (local disk to local disk): the copy fails at once
// as `source_changed`, naming the source's path, and is not retried (the next run copies the new
// version); nothing is left at the target's path.

const MiB = 1024 * 1024;
let base: string;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'skyferry-source-changed-'));
  mkdirSync(join(base, 'src', 'in'), { recursive: true });
  mkdirSync(join(base, 'dst'));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

/** The source disk, with `change` done to the file (on the disk) as its first bytes are read; counts the reads. */
async function changingSource(change: (file: string) => void): Promise<{ provider: Provider; reads: () => number }> {
  const real = await openLocal({ path: join(base, 'src') }, { localRoots: [base] });
  let reads = 0;
  const provider = Object.create(real, {
    openRead: {
      value: async (path: string, opts?: ReadOptions): Promise<Readable> => {
        reads++;
        const stream = await real.openRead(path, opts);
        let first = true;
        const hook = new Transform({
          transform(chunk: Buffer, _enc, cb) {
            if (first) {
              first = false;
              change(join(base, 'src', path));
            }
            cb(null, chunk);
          },
        });
        stream.on('error', (err) => hook.destroy(err));
        return stream.pipe(hook);
      },
    },
  }) as Provider;
  return { provider, reads: () => reads };
}

async function copyChanging(size: number, change: (file: string) => void, chunkThreshold = 64 * MiB) {
  writeFileSync(join(base, 'src', 'in', 'data.bin'), randomBytes(size));
  const { provider, reads } = await changingSource(change);
  const target = await openLocal({ path: join(base, 'dst') }, { localRoots: [base] });
  const started = Date.now();
  const { result } = await runTransfer({
    source: provider,
    target,
    mode: 'migrate',
    sourcePaths: ['/in'],
    targetPath: '/out',
    chunkThreshold,
    retries: { retries: 6, minSleepMs: 50, maxSleepMs: 200 },
  });
  return { result, reads: reads(), ms: Date.now() - started };
}

describe('a source file that changes while it is copied', () => {
  it.each([
    ['grows (streamed)', 3 * MiB, (f: string) => appendFileSync(f, randomBytes(MiB)), undefined],
    ['grows (chunked)', 3 * MiB, (f: string) => appendFileSync(f, randomBytes(MiB)), MiB],
    ['shrinks (streamed)', 3 * MiB, (f: string) => truncateSync(f, MiB), undefined],
    ['shrinks (chunked)', 3 * MiB, (f: string) => truncateSync(f, MiB), MiB],
    [
      'is rewritten in place, same size',
      3 * MiB,
      (f: string) => {
        const fd = openSync(f, 'r+');
        writeSync(fd, randomBytes(MiB), 0, MiB, 2 * MiB);
        closeSync(fd);
      },
      undefined,
    ],
  ])('%s: fails once as source_changed, naming the source', async (_what, size, change, chunkThreshold) => {
    const { result, reads } = await copyChanging(size, change, chunkThreshold);
    expect(result.outcome).toBe('failed');
    expect(result.failed.map((f) => f.reason)).toEqual(['source_changed']);
    const [failed] = result.failed;
    expect(failed?.sourceSide).toBe('source');
    expect(failed?.message).toContain('/in/data.bin');
    expect(failed?.message).not.toContain('/out');
    // Read once: not retried by the pacer, nor in the run's final round.
    expect(reads).toBe(1);
    expect(existsSync(join(base, 'dst', 'out', 'in', 'data.bin'))).toBe(false);
  });
});
