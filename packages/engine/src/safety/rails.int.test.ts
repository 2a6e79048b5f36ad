import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocal, type Provider } from '@skyferry/providers';
import type { RunRequest } from '../run.ts';
import type { TransferPlan } from '../types.ts';
import { MemoryTwoWayStateStore } from '../stores.ts';
import { writeFileAt, type BackendName } from '../testing/backends.ts';
import {
  expectAccounted,
  expectNothingLost,
  snapshot,
  snapshotBoth,
  type JudgedRun,
  type Snapshots,
} from './invariant.ts';
import { useSides } from './support.ts';

// The safety rails of issue 45, after rclone bisync's: a side unmounted between runs, a side
// emptied, the state lost, one side's clock an hour off, a run killed while it deletes. A local
// folder on one side, each backend that runs here on the other. After every run: no file that was
// on either side before is gone unless a plan said so and the user confirmed that run, and every
// file of the plan is accounted for once.

const HOUR = 3_600_000;
const TARGETS: BackendName[] = ['local', 'webdav', 'sftp', 's3'];

describe.each(TARGETS)('safety rails: two-way between a local folder and %s', (name) => {
  const sides = useSides('local', name);
  const b = () => sides.b.provider;
  const putB = (path: string, data: string, modTime = new Date()) =>
    b().put(path, Readable.from([Buffer.from(data)]), { size: Buffer.byteLength(data), modTime });
  const both = (root: string): Promise<Snapshots> => snapshotBoth(sides.a.provider, `/${root}`, b(), `/${root}`);

  /** Runs two-way with the rail checked around it. */
  async function judged(root: string, twoWayState: MemoryTwoWayStateStore, extra: Partial<RunRequest> = {}) {
    const before = await both(root);
    const run = await sides.run('two_way', root, { twoWayState, ...extra });
    const after = await both(root);
    const j: JudgedRun = { plan: run.plan, confirmed: extra.confirmDeletes === true };
    expectNothingLost(before, after, [j]);
    if (run.plan) expectAccounted(run.plan, run.result);
    return { ...run, before, after };
  }

  /** Six files on the local side, merged to the other by a first run. */
  async function seeded(root: string): Promise<MemoryTwoWayStateStore> {
    const A = sides.a.remote(`/${root}`);
    for (const n of ['1', '2', '3', '4']) await writeFileAt(A, `f${n}.txt`, `file ${n}`, new Date(Date.now() - HOUR));
    await writeFileAt(A, 'docs/d1.txt', 'doc 1', new Date(Date.now() - HOUR));
    await writeFileAt(A, 'docs/d2.txt', 'doc 2', new Date(Date.now() - HOUR));
    await b().mkdir(`/${root}`);
    const state = new MemoryTwoWayStateStore();
    const first = await judged(root, state);
    expect(first.result.outcome).toBe('success');
    expect([...first.after.target.keys()].sort()).toEqual([...first.after.source.keys()].sort());
    return state;
  }

  it('a side unmounted between runs (its folder gone): the run stops, whatever was confirmed; back, it carries on', async () => {
    const state = await seeded('unmounted');
    await b().rename('/unmounted', 'unmounted-away');
    const stopped = await judged('unmounted', state, { confirmDeletes: true });
    expect(stopped.result.outcome).toBe('failed');
    expect(stopped.result.error?.message).toMatch(/target folder \/unmounted is missing/);
    expect(stopped.after.source.size).toBe(6);
    await b().rename('/unmounted-away', 'unmounted');
    const back = await judged('unmounted', state, { confirmDeletes: true });
    expect(back.result.outcome).toBe('success');
    expect(back.plan?.items.filter((i) => i.action !== 'skip')).toEqual([]);
  });

  it('a side emptied (a mount point without its disk): the run stops; only a resync goes on, and deletes nothing', async () => {
    const state = await seeded('emptied');
    await b().rmdir('/emptied');
    await b().mkdir('/emptied');
    const stopped = await judged('emptied', state, { confirmDeletes: true });
    expect(stopped.result.outcome).toBe('failed');
    expect(stopped.result.error?.message).toMatch(/target lists no files where the last run left 6/);
    const resync = await judged('emptied', state, { confirmDeletes: true, resync: true });
    expect(resync.result.outcome).toBe('success');
    expect(resync.plan?.summary.delete.count).toBe(0);
    expect(resync.after.target.size).toBe(6);
  });

  it('the state lost: the next run is a merge that deletes nothing', async () => {
    await seeded('lost');
    await rm(join(sides.a.remote('/lost'), 'f1.txt'));
    await putB('/lost/f2.txt', 'file 2, edited on the other side');
    const run = await judged('lost', new MemoryTwoWayStateStore(), { confirmDeletes: true });
    expect(run.result.outcome).toBe('success');
    expect(run.plan?.summary.delete.count).toBe(0);
    expect(run.after.source.has('/f1.txt')).toBe(true);
  });

  it("one side's clock an hour off: edits on both sides are kept, deletions still go only where nothing changed", async () => {
    const state = await seeded('clock');
    const ahead = () => new Date(Date.now() + HOUR);
    const A = sides.a.remote('/clock');
    // f1 edited on both sides to the same size: a conflict whatever the clocks say.
    await writeFileAt(A, 'f1.txt', 'FILE 1', new Date());
    await new Promise((r) => setTimeout(r, 1100));
    await putB('/clock/f1.txt', 'file_1', ahead());
    await putB('/clock/f2.txt', 'file 2, rewritten with a clock an hour ahead', ahead());
    await rm(join(A, 'f3.txt'));
    await writeFileAt(A, 'f4.txt', 'file 4, edited here', new Date());
    await b().remove('/clock/f4.txt');
    const run = await judged('clock', state, { confirmDeletes: true });
    expect(run.result.outcome).toBe('success');
    expect(run.plan?.items.filter((i) => i.action === 'conflict').map((i) => i.rel)).toEqual(['/f1.txt']);
    expect(run.after.target.has('/f3.txt')).toBe(false);
    expect(run.after.source.has('/f4.txt') && run.after.target.has('/f4.txt')).toBe(true);
  });

  it('mirror from a side emptied (an empty mount point) asks first, and deletes nothing unasked', async () => {
    await seeded('mirror');
    const A = sides.a.remote('/mirror');
    await rm(A, { recursive: true });
    await mkdir(A);
    const before = await both('mirror');
    const run = await sides.run('mirror', 'mirror');
    expect(run.result.outcome).toBe('needs_delete_confirmation');
    expectNothingLost(before, await both('mirror'), [{ plan: run.plan, confirmed: false }]);
  });
});

describe('safety rails: a two-way run killed while it deletes', () => {
  const CHILD = fileURLToPath(new URL('./bisync-child.ts', import.meta.url));
  let root: string;
  let a: Provider;
  let b: Provider;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'skyferry-kill-'));
    await mkdir(join(root, 'a'));
    await mkdir(join(root, 'b'));
    [a, b] = await Promise.all([
      openLocal({ path: join(root, 'a') }, { localRoots: [root] }),
      openLocal({ path: join(root, 'b') }, { localRoots: [root] }),
    ]);
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  let runs = 0;
  /** Runs the child; kills it (SIGKILL) once it has announced `killAfter` deletions. Answers its plan too. */
  function child(killAfter?: number): Promise<{ out: string; killed: boolean; plan: () => Promise<TransferPlan> }> {
    const planFile = join(root, `plan-${++runs}.json`);
    const plan = async () => JSON.parse(await readFile(planFile, 'utf8')) as TransferPlan;
    return new Promise((resolve, reject) => {
      const args = [
        join(root, 'a'),
        join(root, 'b'),
        join(root, 'state.jsonl'),
        join(root, 'checkpoints.jsonl'),
        planFile,
      ];
      const p = spawn(process.execPath, [CHILD, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      let killed = false;
      p.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        if (killAfter !== undefined && !killed && (out.match(/^deleting /gm)?.length ?? 0) >= killAfter) {
          killed = true;
          p.kill('SIGKILL');
        }
      });
      p.stderr.on('data', (c: Buffer) => (err += c.toString()));
      p.on('error', reject);
      p.on('close', (code) =>
        killed || code === 0 ? resolve({ out, killed, plan }) : reject(new Error(`${code} ${out} ${err}`)),
      );
    });
  }

  it('leaves nothing deleted that the plan did not delete, and the rerun finishes the job', async () => {
    for (let d = 0; d < 3; d++)
      for (let i = 0; i < 10; i++)
        await writeFileAt(join(root, 'a'), `d${d}/f${i}.txt`, `file ${d}-${i}`, new Date(Date.now() - HOUR));
    expect((await child()).killed).toBe(false);
    const before = await snapshotBoth(a, '/', b, '/');
    // Folder d0 and half of d1 are deleted on a; a file is edited on b in d1, one is added in d0.
    await rm(join(root, 'a', 'd0'), { recursive: true });
    for (let i = 0; i < 5; i++) await rm(join(root, 'a', 'd1', `f${i}.txt`));
    await writeFileAt(join(root, 'b'), 'd1/f9.txt', 'edited on b', new Date());
    await writeFileAt(join(root, 'b'), 'd0/new.txt', 'new on b', new Date());
    const beforeRun = await snapshotBoth(a, '/', b, '/');
    const killed = await child(6);
    expect(killed.killed).toBe(true);
    const rerun = await child();
    expect(rerun.out).toMatch(/^success$/m);
    const after = await snapshotBoth(a, '/', b, '/');
    // Nothing gone that the two runs' plans (the killed one and the rerun, both confirmed) did not delete or replace.
    expectNothingLost(beforeRun, after, [
      { plan: await killed.plan(), confirmed: true },
      { plan: await rerun.plan(), confirmed: true },
    ]);
    expect(after.target.has('/d1/f9.txt') || after.source.has('/d1/f9.txt')).toBe(true);
    expect([...after.target.keys()].sort()).toEqual([...after.source.keys()].sort());
    expect(before.source.size).toBe(30);
    expect([...(await snapshot(b, '/d0')).keys()]).toEqual(['/new.txt']);
    expect([...(await snapshot(a, '/d0')).keys()]).toEqual(['/new.txt']);
  });
});
