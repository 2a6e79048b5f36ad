// A copy of a generated tree in its own process (run with --expose-gc), for the memory test: a
// source that makes its listings and bytes up as they are asked for (nothing of the tree is held)
// and a target that takes each file and keeps nothing of it, so that what the heap holds is the
// engine's alone. Every 500 files written a full collection runs and the heap left in use is
// sampled; prints {"peak": bytes, "files": n, "outcome": ...} as JSON. `count` only plans, for
// the plan's figures (`countOnly`), sampling every 5 folders listed.
//   node --expose-gc memory-child.ts <files> <stream|whole|count>
import { Readable } from 'node:stream';
import { getHeapStatistics } from 'node:v8';
import { ProviderError } from '@skyferry/providers';
import type { Entry, Features, Provider } from '@skyferry/providers';
import { planTransfer } from '../planner.ts';
import { runTransfer, streamTransfer } from '../run.ts';
import { MemoryCheckpointStore } from '../stores.ts';

const files = Number(process.argv[2] ?? 10_000);
const how = process.argv[3] === 'whole' || process.argv[3] === 'count' ? process.argv[3] : 'stream';
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

const PER_FOLDER = 100;
const FANOUT = 10;
const folders = Math.ceil(files / PER_FOLDER);
const T0 = Date.UTC(2026, 0, 1);

const features: Features = {
  copy: false,
  move: false,
  trash: false,
  about: false,
  chunkWriter: false,
  listRecursive: false,
  setModTime: true,
  caseInsensitive: false,
  bucketBased: false,
  needsSize: false,
};

/** Folder i lives below folder floor((i - 1) / FANOUT): `/d0/d3/d35/...`; folder 0 is `/d0`. */
function folderPath(i: number): string {
  let p = '';
  for (let k = i; ; k = Math.floor((k - 1) / FANOUT)) {
    p = `/d${k}${p}`;
    if (k === 0) return p;
  }
}
const indexOf = new Map<string, number>();
for (let i = 0; i < folders; i++) indexOf.set(folderPath(i), i);
let listed = 0;
const sizeOf = (name: string) => 100 + (name.length % 50);
const bytes = (name: string) => Buffer.alloc(sizeOf(name), 7);

function fail(path: string): never {
  throw new ProviderError('not_found', `not found: ${path}`);
}

const source: Provider = {
  kind: 'generated',
  accountKey: 'generated:a',
  features,
  hashes: new Set(),
  async list(dir) {
    if (how === 'count' && ++listed % 5 === 0) sample();
    const i = dir === '/' ? -1 : (indexOf.get(dir) ?? fail(dir));
    const entries: Entry[] = [];
    if (i >= 0) {
      const n = Math.min(PER_FOLDER, files - i * PER_FOLDER);
      for (let f = 0; f < n; f++) {
        const name = `f${f}.bin`;
        entries.push({ path: `${dir}/${name}`, name, kind: 'file', size: sizeOf(name), modTime: new Date(T0) });
      }
    }
    const first = i < 0 ? 0 : i * FANOUT + 1;
    for (let c = first; c < Math.min(folders, i < 0 ? 1 : first + FANOUT); c++) {
      const name = `d${c}`;
      entries.push({ path: folderPath(c), name, kind: 'dir', size: 0 });
    }
    return { entries };
  },
  async stat(path) {
    if (path === '/' || indexOf.has(path))
      return { path, name: path.slice(path.lastIndexOf('/') + 1), kind: 'dir', size: 0 };
    const name = path.slice(path.lastIndexOf('/') + 1);
    return { path, name, kind: 'file', size: sizeOf(name), modTime: new Date(T0) };
  },
  async openRead(path) {
    return Readable.from([bytes(path.slice(path.lastIndexOf('/') + 1))]);
  },
  async readSmall(path) {
    return bytes(path.slice(path.lastIndexOf('/') + 1));
  },
  put: () => Promise.reject(new Error('read only')),
  mkdir: () => Promise.reject(new Error('read only')),
  remove: () => Promise.reject(new Error('read only')),
  rmdir: () => Promise.reject(new Error('read only')),
  rename: () => Promise.reject(new Error('read only')),
};

let written = 0;
let peak = 0;
function sample(): void {
  gc?.();
  peak = Math.max(peak, getHeapStatistics().used_heap_size);
}
const took = (path: string, size: number): Entry => {
  if (++written % 500 === 0) sample();
  return { path, name: path.slice(path.lastIndexOf('/') + 1), kind: 'file', size, modTime: new Date(T0) };
};
const target: Provider = {
  kind: 'sink',
  accountKey: 'sink:b',
  features,
  hashes: new Set(),
  list: async (dir) => fail(dir),
  stat: async (path) => fail(path),
  openRead: async (path) => fail(path),
  async put(path, body) {
    let size = 0;
    for await (const c of body) size += (c as Buffer).length;
    return took(path, size);
  },
  async putSmall(path, data) {
    return took(path, data.length);
  },
  mkdir: async () => undefined,
  remove: async (path) => fail(path),
  rmdir: async (path) => fail(path),
  rename: async (path) => fail(path),
};

sample();
const req = {
  source,
  target,
  mode: 'migrate' as const,
  sourcePaths: ['/'],
  targetPath: '/out',
  checkpoints: new MemoryCheckpointStore(),
  keepSkipped: false,
};
// The checkpoint store of this test keeps its records in memory: a run's own records are the
// store's, not the engine's, so they are dropped as they come.
req.checkpoints.markDone = async () => undefined;
if (how === 'count') {
  const plan = await planTransfer({ ...req, countOnly: true });
  sample();
  const planned = plan.summary.copy.count;
  process.stdout.write(
    JSON.stringify({ peak, files: planned, outcome: 'planned', added: planned, items: plan.items.length }) + '\n',
  );
  process.exit(0);
}
const { plan, result } = how === 'stream' ? await streamTransfer(req) : await runTransfer(req);
// What the run hands back is held too (a caller keeps it to report).
sample();
process.stdout.write(
  JSON.stringify({
    peak,
    files: written,
    outcome: result.outcome,
    added: result.summary.added,
    pairs: plan?.pairs.length,
  }) + '\n',
);
