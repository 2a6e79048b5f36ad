/**
 * Command-line benchmark: how fast `skyferry` starts (a help, the version, a listing, a copy of one
 * small file, each a whole process beside Node doing nothing), then the check benchmark
 * (`skyferry check` against `rclone check` on 20,000 small local files, bench/check.ts).
 *
 *   npm run bench:cli
 *   BENCH_STARTS=20 npm run bench:cli         # runs of each start-up (default 15; medians shown)
 *   BENCH_CHECK=0 npm run bench:cli           # start-up only
 *   BENCH_FILES=3000 npm run bench:cli        # passed on to the check benchmark
 *
 * `npm run build:cli` first measures the bundled command line (the bin runs it while its sources
 * are unchanged). Timed from spawn to exit. The machine's load is printed: on a busy machine every figure,
 * Node's own start-up included, grows.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runMeasured, table } from './lib/measure.ts';

const STARTS = Math.max(3, Number(process.env.BENCH_STARTS ?? 15));
const here = fileURLToPath(new URL('.', import.meta.url));
const SKYFERRY = join(here, '..', 'apps', 'cli', 'bin', 'skyferry.js');

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

async function startup(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'skyferry-bench-cli-'));
  try {
    mkdirSync(join(root, 'src'));
    writeFileSync(join(root, 'src', 'note.txt'), 'a small file\n');
    const env = { SKYFERRY_STATE_DIR: join(root, 'state'), SKYFERRY_CONFIG: join(root, 'remotes.json') };
    const cases: Array<[string, string[]]> = [
      ['node -e 0 (Node alone)', ['-e', '0']],
      ['skyferry --help', [SKYFERRY, '--help']],
      ['skyferry --version', [SKYFERRY, '--version']],
      ['skyferry ls <folder>', [SKYFERRY, 'ls', join(root, 'src')]],
      ['skyferry copy <one small file>', [SKYFERRY, 'copy', join(root, 'src', 'note.txt'), join(root, 'to')]],
    ];
    const times = cases.map(() => [] as number[]);
    // Interleaved, so a change in the machine's load falls on every case alike; one warm-up round
    // fills Node's compile cache.
    for (let round = -1; round < STARTS; round++) {
      for (const [i, [, args]] of cases.entries()) {
        const r = await runMeasured(process.execPath, args, env);
        if (round >= 0) times[i]?.push(r.ms);
      }
      rmSync(join(root, 'to'), { recursive: true, force: true });
    }
    console.log(
      `# start-up: ${STARTS} runs each, ${cpus().length} CPUs, load ${loadavg()[0]?.toFixed(1)} (target: --help under 150 ms)\n`,
    );
    console.log(
      table(
        ['command', 'median ms', 'fastest ms', 'slowest ms'],
        cases.map(([name], i) => {
          const t = times[i] as number[];
          return [name, median(t).toFixed(0), Math.min(...t).toFixed(0), Math.max(...t).toFixed(0)];
        }),
      ),
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await startup();
if (process.env.BENCH_CHECK !== '0') {
  console.log('');
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [join(here, 'check.ts')], { stdio: 'inherit' });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`bench/check.ts exited ${code}`))));
  });
}
