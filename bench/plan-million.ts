/**
 * Planning benchmark (child of bench/transfer.ts, or alone): two in-memory listings of N entries
 * each (default 1,000,000: 1,000 folders of 1,000 files), the target differing from the source in
 * 5% of sizes, 1% missing and 1% extra, planned as a mirror sync. Prints one JSON line:
 * { entries, planMs, rssBeforeMb, peakRssMb, items }.
 *
 *   node bench/plan-million.ts [entries]
 */
import { readFileSync } from 'node:fs';
import { planTransfer } from '@skyferry/engine';
import { MemoryProvider, MemoryStore } from '@skyferry/engine/testing';

function vmHwmMb(): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) / 1024 : process.memoryUsage().rss / 1024 / 1024;
}

const entries = Number(process.argv[2] ?? 1_000_000);
const perFolder = 1000;
const folders = Math.ceil(entries / perFolder);
const T0 = Date.UTC(2025, 0, 1);

const a = new MemoryStore();
const b = new MemoryStore();
let n = 0;
for (let d = 0; d < folders; d++) {
  const dir = `/data/folder-${String(d).padStart(4, '0')}`;
  for (let f = 0; f < perFolder && n < entries; f++, n++) {
    const name = `${dir}/file-${String(f).padStart(4, '0')}.jpg`;
    const size = 1000 + ((d * 7919 + f * 104_729) % 5_000_000);
    const mtime = T0 + f * 1000;
    a.addSynthetic(name, size, { mtime });
    const r = n % 100;
    if (r === 0) continue; // 1% missing on the target
    b.addSynthetic(name, r < 6 ? size + 1 : size, { mtime });
    if (r === 50) b.addSynthetic(`${dir}/extra-${f}.jpg`, 10, { mtime }); // 1% extra
  }
}
// No hashes: the planner compares sizes and times, as it would for a cloud without them.
const source = new MemoryProvider({ store: a, hashes: [] });
const target = new MemoryProvider({ store: b, hashes: [] });
global.gc?.();
const rssBefore = process.memoryUsage().rss / 1024 / 1024;
const started = performance.now();
const cpu0 = process.cpuUsage();
const plan = await planTransfer({
  source,
  target,
  mode: 'mirror',
  sourcePaths: ['/data'],
  targetPath: '/data',
  listConcurrency: 16,
  keepSkipped: process.env.KEEP_SKIPPED !== '0',
});
const planMs = performance.now() - started;
const cpu = process.cpuUsage(cpu0);
const out = {
  entries,
  planMs: Math.round(planMs),
  /** CPU time of the planning (user + system): the wall time on a machine with a free core. */
  cpuMs: Math.round((cpu.user + cpu.system) / 1000),
  rssBeforeMb: Math.round(rssBefore),
  peakRssMb: Math.round(vmHwmMb()),
  items: plan.items.length,
  copy: plan.summary.copy.count,
  update: plan.summary.update.count,
  delete: plan.summary.delete.count,
  skip: plan.summary.skip.count,
};
process.stdout.write(JSON.stringify(out) + '\n');
