/**
 * Planning benchmark (child of bench/transfer.ts, or alone): two in-memory listings of N entries
 * each (default 1,000,000: 1,000 folders of 1,000 files), the target differing from the source in
 * 5% of sizes, 1% missing and 1% extra, planned as a mirror sync with default options (skipped
 * files kept in the plan). Prints one JSON line:
 * { entries, planMs, cpuMs, rssBeforeMb, peakRssMb, items, ... }.
 *
 *   node --expose-gc bench/plan-million.ts [entries]
 *   node --expose-gc bench/plan-million.ts [entries] stream
 *
 * With `stream`, the same listings are planned as a one-way sync made as a stream (`planStreamed`,
 * what `skyferry copy` and a migration use), each batch of items taken and settled at once: the
 * figures are then those of the walk alone, its memory bound by the window, not the tree.
 *
 * The listings are held as compact columns (names, sizes, times) by a read-only provider that
 * hands out pages of entries like a cloud would, so the figures are the planner's, not a fake
 * cloud's.
 */
import { readFileSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { PlanFeed, planStreamed, planTransfer, type TransferPlan } from '@skyferry/engine';
import { ProviderError } from '@skyferry/providers';
import type { Entry, Features, HashType, ListOptions, Page, Provider } from '@skyferry/providers';

function vmHwmMb(): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) / 1024 : process.memoryUsage().rss / 1024 / 1024;
}

interface Folder {
  names: string[];
  sizes: Float64Array;
  mtimes: Float64Array;
}

const FEATURES: Features = {
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

/** Read-only listings in memory: `/data` holds folders, each folder holds files. */
class ListingProvider implements Provider {
  readonly kind = 'listing';
  readonly accountKey: string;
  readonly features = FEATURES;
  readonly hashes: ReadonlySet<HashType> = new Set();
  readonly folders = new Map<string, Folder>();
  constructor(key: string) {
    this.accountKey = key;
  }
  async list(dir: string, opts: ListOptions = {}): Promise<Page> {
    if (dir === '/data') {
      const names = [...this.folders.keys()];
      return { entries: names.map((n) => ({ path: `/data/${n}`, name: n, kind: 'dir', size: 0 })) };
    }
    const f = this.folders.get(dir.slice('/data/'.length));
    if (!f) throw new ProviderError('not_found', dir);
    const start = opts.pageToken ? Number(opts.pageToken) : 0;
    const end = Math.min(f.names.length, start + 1000);
    const entries: Entry[] = [];
    for (let i = start; i < end; i++) {
      const name = f.names[i] as string;
      entries.push({
        path: `${dir}/${name}`,
        name,
        kind: 'file',
        size: f.sizes[i] as number,
        modTime: new Date(f.mtimes[i] as number),
      });
    }
    return end < f.names.length ? { entries, nextPageToken: String(end) } : { entries };
  }
  async stat(path: string): Promise<Entry> {
    if (path === '/data') return { path, name: 'data', kind: 'dir', size: 0 };
    throw new ProviderError('not_found', path);
  }
  openRead(): Promise<Readable> {
    throw new ProviderError('not_supported', 'listing only');
  }
  put(): Promise<Entry> {
    throw new ProviderError('not_supported', 'listing only');
  }
  mkdir(): Promise<void> {
    throw new ProviderError('not_supported', 'listing only');
  }
  remove(): Promise<void> {
    throw new ProviderError('not_supported', 'listing only');
  }
  rmdir(): Promise<void> {
    throw new ProviderError('not_supported', 'listing only');
  }
  rename(): Promise<Entry> {
    throw new ProviderError('not_supported', 'listing only');
  }
}

const entries = Number(process.argv[2] ?? 1_000_000);
const STREAM = process.argv[3] === 'stream';
const perFolder = 1000;
const folders = Math.ceil(entries / perFolder);
const T0 = Date.UTC(2025, 0, 1);
const source = new ListingProvider('a');
const target = new ListingProvider('b');
let n = 0;
for (let d = 0; d < folders; d++) {
  const count = Math.min(perFolder, entries - n);
  const a: Folder = { names: [], sizes: new Float64Array(count), mtimes: new Float64Array(count) };
  const names: string[] = [];
  const sizes: number[] = [];
  const mtimes: number[] = [];
  for (let f = 0; f < count; f++, n++) {
    const name = `file-${String(f).padStart(4, '0')}.jpg`;
    const size = 1000 + ((d * 7919 + f * 104_729) % 5_000_000);
    const mtime = T0 + f * 1000;
    a.names.push(name);
    a.sizes[f] = size;
    a.mtimes[f] = mtime;
    const r = n % 100;
    if (r === 0) continue; // 1% missing on the target
    names.push(name);
    sizes.push(r < 6 ? size + 1 : size); // 5% changed
    mtimes.push(mtime);
    if (r === 50) {
      names.push(`extra-${f}.jpg`); // 1% extra
      sizes.push(10);
      mtimes.push(mtime);
    }
  }
  const folder = `folder-${String(d).padStart(4, '0')}`;
  source.folders.set(folder, a);
  target.folders.set(folder, { names, sizes: Float64Array.from(sizes), mtimes: Float64Array.from(mtimes) });
}
global.gc?.();
const rssBefore = process.memoryUsage().rss / 1024 / 1024;
const started = performance.now();
const cpu0 = process.cpuUsage();
let streamed = 0;
let plan: TransferPlan;
if (STREAM) {
  // A one-way sync planned as a stream: a consumer that takes each batch and is done with it at once.
  const feed = new PlanFeed();
  const consumed = (async () => {
    for (let batch = await feed.next(1000); batch; batch = await feed.next(1000)) {
      streamed += batch.length;
      feed.settle(batch.length);
    }
  })();
  plan = await planStreamed(
    { source, target, mode: 'one_way', sourcePaths: ['/data'], targetPath: '/data' },
    { item: (it) => feed.push(it), gate: () => feed.room(), roots: () => undefined },
  );
  feed.end();
  await consumed;
} else {
  plan = await planTransfer({ source, target, mode: 'mirror', sourcePaths: ['/data'], targetPath: '/data' });
}
const planMs = performance.now() - started;
const cpu = process.cpuUsage(cpu0);
const out = {
  entries,
  planMs: Math.round(planMs),
  /** CPU time of the planning (user + system, all threads including the garbage collector's). */
  cpuMs: Math.round((cpu.user + cpu.system) / 1000),
  rssBeforeMb: Math.round(rssBefore),
  peakRssMb: Math.round(vmHwmMb()),
  mode: STREAM ? 'one_way, streamed' : 'mirror',
  items: STREAM ? streamed : plan.items.length,
  copy: plan.summary.copy.count,
  update: plan.summary.update.count,
  delete: plan.summary.delete.count,
  skip: plan.summary.skip.count,
};
process.stdout.write(JSON.stringify(out) + '\n');
