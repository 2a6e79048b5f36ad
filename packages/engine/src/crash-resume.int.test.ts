import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocal } from '@skyferry/providers';
import { differences, rcloneCheck } from './testing/backends.ts';

// A 2,000-file transfer in a child process, killed with SIGKILL at random points and restarted
// until it finishes: the target ends identical to the source, and no file whose checkpoint was
// written is written again by a later run.

const CHILD = fileURLToPath(new URL('./testing/transfer-child.ts', import.meta.url));
const FILES = 2000;

let root: string;
let src: string;
let dst: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'skyferry-crash-'));
  src = join(root, 'src');
  dst = join(root, 'dst');
  await mkdir(dst, { recursive: true });
  for (let d = 0; d < 20; d++) {
    await mkdir(join(src, `d${d}`), { recursive: true });
    await Promise.all(
      Array.from({ length: FILES / 20 }, (_, i) =>
        writeFile(join(src, `d${d}`, `f${i}.bin`), randomBytes(1024 + ((d * 97 + i * 31) % 3072))),
      ),
    );
  }
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Paths (relative to the target root) whose checkpoint is on disk. */
function checkpointed(file: string): Set<string> {
  const done = new Set<string>();
  if (!existsSync(file)) return done;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    try {
      const { k } = JSON.parse(line) as { k: string };
      const parts = k.split('|');
      if (parts[0] === 'write') done.add(parts[4] as string);
    } catch {
      // a line torn by the kill
    }
  }
  return done;
}

function writes(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

/** Runs the child; given `killAfterWrites`, kills it with SIGKILL once it has asked for that many writes. */
function runChild(
  n: number,
  killAfterWrites: number | undefined,
  o: { to?: string; name?: string; stream?: boolean } = {},
): Promise<Run> {
  const name = o.name ?? '';
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [CHILD, src, o.to ?? dst, join(root, `checkpoints${name}.jsonl`), join(root, `writes${name}-${n}.log`)],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, SKYFERRY_TEST_STREAM: o.stream ? '1' : '0' },
      },
    );
    let output = '';
    let timer: NodeJS.Timeout | undefined;
    const log = join(root, `writes${name}-${n}.log`);
    child.stdout.on('data', (c: Buffer) => {
      output += c.toString();
      if (killAfterWrites !== undefined && !timer && output.includes('planned')) {
        // Counted in writes, not in time: a fast machine and a loaded one are caught at the same point.
        timer = setInterval(() => {
          if (writes(log).length >= killAfterWrites) child.kill('SIGKILL');
        }, 2);
      }
    });
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (timer) clearInterval(timer);
      resolve({ code, signal, output });
    });
  });
}

describe('a transfer killed with SIGKILL', () => {
  it('resumes from its checkpoints until done, never writing a checkpointed file again', async () => {
    const runs: Run[] = [];
    let killed = 0;
    let violations: string[] = [];
    for (let n = 0; n < 40; n++) {
      const before = checkpointed(join(root, 'checkpoints.jsonl'));
      // Kill the first five runs at random points (each after 40 to 240 writes, so five kills always
      // happen before the 2,000 files are done); let a run finish once they have.
      const killAt = killed < 5 ? 40 + Math.floor(Math.random() * 200) : undefined;
      const r = await runChild(n, killAt);
      runs.push(r);
      const again = writes(join(root, `writes-${n}.log`))
        .map((p) => p.replace(/^\//, '/'))
        .filter((p) => before.has(p));
      violations = violations.concat(again.map((p) => `run ${n}: ${p}`));
      if (r.signal === 'SIGKILL') {
        killed++;
        continue;
      }
      expect(r.code, r.output).toBe(0);
      break;
    }
    expect(killed).toBe(5);
    expect(runs.at(-1)?.code).toBe(0);
    expect(violations).toEqual([]);
    // Each file was written again only when a kill caught it in flight: at most 2 × (8 + 32) at once
    // (a pool of n streams keeps up to 2n under way, the sent ones waiting for their answers).
    const all = runs.flatMap((_, n) => writes(join(root, `writes-${n}.log`)));
    expect(new Set(all).size).toBe(FILES);
    expect(all.length).toBeLessThanOrEqual(FILES + killed * 2 * (8 + 32));

    // The target equals the source, checked by rclone (content) and through the provider (no stray files).
    const marks = await rcloneCheck(src, dst, { flags: ['--exclude', '.skyferry-tmp-*'] });
    expect(differences(marks)).toEqual([]);
    expect(marks.size).toBe(FILES);
    const target = await openLocal({ path: dst }, { localRoots: [dst] });
    let listed = 0;
    for await (const batch of target.listRecursive(dst === '' ? '/' : '/'))
      listed += batch.filter((e) => e.kind === 'file').length;
    expect(listed).toBe(FILES);
  }, 180_000);
});

describe('a transfer planned and executed folder by folder (streamTransfer), killed with SIGKILL halfway', () => {
  it('resumes without writing a checkpointed file again, counting them as resumed, and ends identical', async () => {
    const to = join(root, 'dst-stream');
    await mkdir(to, { recursive: true });
    const checkpoints = join(root, 'checkpoints-stream.jsonl');
    const first = await runChild(0, FILES / 2, { to, name: '-stream', stream: true });
    expect(first.signal, first.output).toBe('SIGKILL');
    const before = checkpointed(checkpoints);
    // Killed halfway: about half the files are recorded (the rest of the first half was in flight).
    expect(before.size).toBeGreaterThan(FILES / 2 - 2 * (8 + 32));
    expect(before.size).toBeLessThanOrEqual(FILES / 2);
    const second = await runChild(1, undefined, { to, name: '-stream', stream: true });
    expect(second.code, second.output).toBe(0);
    const again = writes(join(root, 'writes-stream-1.log')).filter((p) => before.has(p));
    expect(again).toEqual([]);
    // Only files caught in flight by the kill are written twice.
    const all = [0, 1].flatMap((n) => writes(join(root, `writes-stream-${n}.log`)));
    expect(new Set(all).size).toBe(FILES);
    expect(all.length).toBeLessThanOrEqual(FILES + 2 * (8 + 32));
    // "success <resumed> <added + updated>": each file counted once (the whole run's figures), the
    // checkpointed ones as resumed.
    const [outcome, resumed, done] = second.output.trim().split('\n').at(-1)?.split(' ') ?? [];
    expect(outcome).toBe('success');
    expect(Number(resumed)).toBe(before.size);
    expect(Number(done)).toBe(FILES);
    const marks = await rcloneCheck(src, to, { flags: ['--exclude', '.skyferry-tmp-*'] });
    expect(differences(marks)).toEqual([]);
    expect(marks.size).toBe(FILES);
  }, 180_000);
});
