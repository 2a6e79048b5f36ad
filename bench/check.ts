/**
 * Check benchmark: `skyferry check` next to `rclone check` on the same two local folders in the
 * same run: many small files (like a folder of documents and photos), every pair compared by MD5,
 * with a few differences planted (a changed byte, a missing file on each side), which both tools
 * must find.
 *
 *   npm run bench:check
 *   BENCH_FILES=3000 npm run bench:check            # fewer files (default 20,000 of 1-61 KB)
 *   BENCH_ROUNDS=5 npm run bench:check              # runs per tool (default 3)
 *
 * Prints each tool's best run and its median run (a close race is decided by the median of five).
 *
 * Both are whole processes (Skyferry's time includes Node loading its TypeScript, shown on its own
 * as `skyferry ls` of a small folder). Both folders are read into the page cache before every run (untimed:
 * rclone's reads drop what they read from it); the tools alternate, rclone first.
 */
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runMeasured, table, MiB } from './lib/measure.ts';
import { pseudoRandomBytes } from './lib/random.ts';
import { settle } from './lib/settle.ts';

const FILES = Number(process.env.BENCH_FILES ?? 20_000);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const PER_FOLDER = 100;
const RCLONE_ENV = { RCLONE_CONFIG: '/dev/null' };
const here = fileURLToPath(new URL('.', import.meta.url));
const SKYFERRY = join(here, '..', 'apps', 'cli', 'bin', 'skyferry.js');

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'skyferry-bench-check-'));
  try {
    const a = join(root, 'a');
    const b = join(root, 'b');
    let total = 0;
    for (let i = 0; i < FILES; i++) {
      const dir = `d${Math.floor(i / PER_FOLDER)}`;
      if (i % PER_FOLDER === 0) {
        mkdirSync(join(a, dir), { recursive: true });
        mkdirSync(join(b, dir), { recursive: true });
      }
      const data = pseudoRandomBytes(1024 + ((i * 7919) % (60 * 1024)), i + 1);
      total += data.length;
      writeFileSync(join(a, dir, `f${i}.bin`), data);
      // Planted differences: one changed byte, one file only on each side.
      if (i === 17) data[data.length >> 1] = (data[data.length >> 1] as number) ^ 1;
      writeFileSync(join(b, dir, `f${i}.bin`), data);
    }
    unlinkSync(join(a, 'd0', 'f3.bin'));
    unlinkSync(join(b, 'd0', 'f5.bin'));
    console.log(
      `# check benchmark: ${FILES.toLocaleString('en')} pairs of 1-61 KB (${(total / MiB).toFixed(0)} MiB a side), 3 differences, ${cpus().length} CPUs, load ${loadavg()[0]?.toFixed(1)}`,
    );

    // Start-up: a command that loads the engine and lists one small folder.
    const startup = await runMeasured(process.execPath, [SKYFERRY, 'ls', here]);
    type Run = { ms: number; cpu: number; peak: number };
    const times = { skyferry: [] as Run[], rclone: [] as Run[] };
    for (let round = 0; round < ROUNDS; round++) {
      await settle(a, b);
      const r = await runMeasured('rclone', ['check', a, b], RCLONE_ENV, [1]);
      if (!/3 differences found/.test(r.stderr)) throw new Error(`rclone check: ${r.stderr}`);
      times.rclone.push({ ms: r.ms, cpu: r.cpuMs, peak: r.peakRss });
      await settle(a, b);
      const s = await runMeasured(process.execPath, [SKYFERRY, 'check', a, b], {}, [1]);
      if (!/^3 differences;/m.test(s.stdout)) throw new Error(`skyferry check: ${s.stdout}${s.stderr}`);
      times.skyferry.push({ ms: s.ms, cpu: s.cpuMs, peak: s.peakRss });
    }
    const sorted = (runs: Run[]) => [...runs].sort((x, y) => x.ms - y.ms);
    const picks: Array<[string, (runs: Run[]) => Run]> = [
      ['best', (runs) => sorted(runs)[0] as Run],
      ['median', (runs) => sorted(runs)[Math.floor(runs.length / 2)] as Run],
    ];
    const all = (runs: Run[]) => runs.map((t) => (t.ms / 1000).toFixed(2)).join(' / ');
    console.log(`every run: skyferry ${all(times.skyferry)}; rclone ${all(times.rclone)}`);
    console.log(
      '\n' +
        table(
          [
            'pairs',
            'run',
            'Skyferry s',
            'rclone s',
            'ratio',
            'Skyferry start-up s',
            'Skyferry CPU s',
            'rclone CPU s',
            'Skyferry peak MB',
            'rclone peak MB',
          ],
          picks.map(([name, pick]) => {
            const sky = pick(times.skyferry);
            const rc = pick(times.rclone);
            return [
              FILES.toLocaleString('en'),
              name,
              (sky.ms / 1000).toFixed(2),
              (rc.ms / 1000).toFixed(2),
              (sky.ms / rc.ms).toFixed(2),
              (startup.ms / 1000).toFixed(2),
              (sky.cpu / 1000).toFixed(2),
              (rc.cpu / 1000).toFixed(2),
              Math.round(sky.peak / MiB),
              Math.round(rc.peak / MiB),
            ];
          }),
        ),
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
