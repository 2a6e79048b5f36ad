import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLocal, type Provider } from '@skyferry/providers';
import { checkTrees, type CheckResult } from './check.ts';

// The check between two folders of the local disk, whose hashes its worker threads compute (each
// opens, confines, reads and hashes whole batches of files): every pair's answer exact, however
// many pairs are in flight and whatever happens to a file between its listing and its hashing.

const kinds = (r: CheckResult) => r.differences.map((d) => `${d.kind} ${d.path}`);
const MiB = 1024 * 1024;

/** Bytes that differ from file to file (not all zeros, so a misplaced read shows). */
function bytes(size: number, seed: number): Buffer {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i++) b[i] = (i * 31 + seed * 7 + (i >> 11)) & 255;
  return b;
}

describe('check between two local folders', () => {
  let base: string;
  let a: string;
  let b: string;
  let source: Provider;
  let target: Provider;

  beforeEach(async () => {
    base = mkdtempSync(join(tmpdir(), 'skyferry-check-local-'));
    a = join(base, 'a');
    b = join(base, 'b');
    mkdirSync(a);
    mkdirSync(b);
    mkdirSync(join(base, 'outside'));
    writeFileSync(join(base, 'outside', 'secret.bin'), bytes(40, 99));
    source = await openLocal({ path: a }, { localRoots: [a] });
    target = await openLocal({ path: b }, { localRoots: [b] });
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  const put = (root: string, rel: string, data: Buffer) => {
    mkdirSync(join(root, rel, '..'), { recursive: true });
    writeFileSync(join(root, rel), data);
  };

  it('finds exactly the planted differences among many pairs, empty files and files larger than a read', async () => {
    // More pairs than are hashed at once, in folders of 50.
    for (let i = 0; i < 700; i++) {
      const data = bytes((i * 7919) % 20_000, i);
      put(a, `/d${i % 14}/f${i}.bin`, data);
      put(b, `/d${i % 14}/f${i}.bin`, data);
    }
    put(a, '/empty.bin', Buffer.alloc(0));
    put(b, '/empty.bin', Buffer.alloc(0));
    // Larger than one read of the hashing threads (1 MiB): equal, and one differing past its first read.
    const big = bytes(2 * MiB + 5, 1);
    put(a, '/big/same.bin', big);
    put(b, '/big/same.bin', big);
    put(a, '/big/late.bin', big);
    const late = Buffer.from(big);
    late[MiB + 3] = (late[MiB + 3] as number) ^ 1;
    put(b, '/big/late.bin', late);
    // One byte changed, and a file on one side only each way.
    const changed = bytes(3000, 5);
    put(a, '/d3/changed.bin', changed);
    changed[1500] = (changed[1500] as number) ^ 0x80;
    put(b, '/d3/changed.bin', changed);
    put(a, '/d4/only-a.bin', bytes(10, 1));
    put(b, '/d5/only-b.bin', bytes(10, 2));

    const r = await checkTrees({ source, sourcePath: '/', target, targetPath: '/' });
    expect(kinds(r)).toEqual([
      'content /big/late.bin',
      'content /d3/changed.bin',
      'missing_on_target /d4/only-a.bin',
      'missing_on_source /d5/only-b.bin',
    ]);
    expect(r.differences.find((d) => d.path === '/big/late.bin')).toMatchObject({ hash: 'md5' });
    expect(r).toMatchObject({ compared: 704, sameByHash: 702, sizeOnly: 0, errors: [] });
    // The hashes themselves, of an empty file and of one read in three parts.
    expect(await source.hash?.('/empty.bin', 'md5')).toBe(createHash('md5').digest('hex'));
    expect(await target.hash?.('/big/late.bin', 'sha256')).toBe(createHash('sha256').update(late).digest('hex'));
  });

  it.each([
    ['on hashing threads', true],
    ["on the event loop's thread", false],
  ])(
    'a file changed, removed, turned into a folder, a named pipe or a link out of the root after its listing is reported, and the rest is checked (%s)',
    async (_, hashThreads) => {
      source = await openLocal({ path: a }, { localRoots: [a] }, { hashThreads });
      for (const name of ['kept', 'rewritten', 'removed', 'now-a-folder', 'now-a-link', 'now-a-pipe']) {
        const data = bytes(4000, name.length);
        put(a, `/x/${name}.bin`, data);
        put(b, `/x/${name}.bin`, data);
      }
      // The source's folder changes just after it was listed (as another program might change it).
      const changing = new Proxy(source, {
        get(obj, prop, receiver) {
          const value = Reflect.get(obj, prop, receiver) as unknown;
          if (prop !== 'list' || typeof value !== 'function') return value;
          return async (dir: string, ...rest: unknown[]) => {
            const page = await (value as (...x: unknown[]) => Promise<unknown>).apply(obj, [dir, ...rest]);
            if (dir === '/x') {
              writeFileSync(join(a, 'x', 'rewritten.bin'), bytes(4000, 77));
              unlinkSync(join(a, 'x', 'removed.bin'));
              unlinkSync(join(a, 'x', 'now-a-folder.bin'));
              mkdirSync(join(a, 'x', 'now-a-folder.bin'));
              unlinkSync(join(a, 'x', 'now-a-link.bin'));
              symlinkSync(join(base, 'outside', 'secret.bin'), join(a, 'x', 'now-a-link.bin'));
              // A named pipe nobody writes to: opening it to read would wait for ever.
              unlinkSync(join(a, 'x', 'now-a-pipe.bin'));
              execFileSync('mkfifo', [join(a, 'x', 'now-a-pipe.bin')]);
            }
            return page;
          };
        },
      });
      const r = await checkTrees({ source: changing, sourcePath: '/', target, targetPath: '/' });
      expect(kinds(r)).toEqual(['content /x/rewritten.bin']);
      expect(r.errors.map((e) => `${e.code} ${e.path}`).sort()).toEqual([
        'is_dir /x/now-a-folder.bin',
        'not_found /x/removed.bin',
        'not_supported /x/now-a-pipe.bin',
        'permission /x/now-a-link.bin',
      ]);
      expect(r).toMatchObject({ compared: 6, sameByHash: 1 });
    },
  );
});
