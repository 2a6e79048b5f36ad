/**
 * Providers benchmark: upload and download throughput of each Skyferry backend next to `rclone
 * copyto` against the same server in the same run, with peak memory, plus the peak memory of
 * writing a 1 GiB stream through each backend: the growth over the process as it stood before the
 * write (Node, type stripping and every backend's libraries, ~110 MiB) must stay under 200 MB.
 *
 *   npm run bench:providers                      # 200 MB file, every target
 *   BENCH_SIZE_MB=50 BENCH_TARGETS=local npm run bench:providers
 *   BENCH_MEMORY_MB=0 ...                        # skip the 1 GiB memory check
 *
 * Each Skyferry transfer runs in its own Node process (so its peak RSS is its own) and times the
 * transfer only; rclone's time is its whole run (its start-up is a few ms). Each tool runs each way
 * `BENCH_ROUNDS` times (default 3), the order alternating, and keeps its best time. A download
 * writes to the local disk through the local backend, as Skyferry's downloads and exports do.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, createReadStream, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { openProvider } from '@skyferry/providers';
import { BENCH_TARGETS, type RunningTarget } from './providers-targets.ts';
import { MiB, mbPerSec, runMeasured, table, vmHwm } from './lib/measure.ts';
import { pseudoRandomBytes } from './lib/random.ts';

interface WorkerSpec {
  op: 'upload' | 'download' | 'generate';
  kind: string;
  credentials: Record<string, unknown>;
  localRoots?: string[];
  path: string;
  file?: string;
  size?: number;
}

interface WorkerResult {
  ms: number;
  maxRss: number;
  /** RSS once the provider is open, just before the transfer starts. */
  rssBefore: number;
  bytes: number;
}

/** 1 MiB of pseudo-random bytes, reused to generate streams of any size without disk or memory. */
function patternMiB(): Buffer {
  return pseudoRandomBytes(MiB, 2463534242);
}

function generated(size: number): Readable {
  const block = patternMiB();
  let left = size;
  return new Readable({
    read() {
      if (left <= 0) {
        this.push(null);
        return;
      }
      const n = Math.min(left, block.length);
      left -= n;
      // Fresh 64 KiB pieces, as a socket or a file stream would hand them over.
      for (let off = 0; off < n; off += 64 * 1024)
        this.push(Buffer.from(block.subarray(off, Math.min(n, off + 64 * 1024))));
    },
  });
}

async function worker(spec: WorkerSpec): Promise<WorkerResult> {
  const provider = await openProvider(spec.kind, spec.credentials, { localRoots: spec.localRoots });
  const rssBefore = process.memoryUsage().rss;
  const t0 = performance.now();
  let bytes: number;
  if (spec.op === 'upload') {
    const size = statSync(spec.file as string).size;
    await provider.put(spec.path, createReadStream(spec.file as string, { highWaterMark: MiB }), { size });
    bytes = size;
  } else if (spec.op === 'generate') {
    bytes = spec.size as number;
    await provider.put(spec.path, generated(bytes), { size: bytes });
  } else {
    // To a local disk as Skyferry downloads (its local backend's writer gives each chunk back to
    // the reading backend's buffers).
    const file = spec.file as string;
    const disk = await openProvider('local', { path: dirname(file) }, { localRoots: [dirname(file)] });
    const size = (await provider.stat(spec.path)).size;
    await disk.put(`/${basename(file)}`, await provider.openRead(spec.path), { size });
    bytes = statSync(file).size;
  }
  const ms = performance.now() - t0;
  await provider.close?.();
  // VmHWM, not getrusage's maxrss: Linux carries maxrss over from the parent through fork and exec.
  return { ms, bytes, rssBefore, maxRss: vmHwm(process.pid) ?? 0 };
}

async function runWorker(spec: WorkerSpec): Promise<WorkerResult & { peakRss: number }> {
  const self = fileURLToPath(import.meta.url);
  const m = await runMeasured(process.execPath, [self, '--worker', JSON.stringify(spec)]);
  const line = m.stdout.trim().split('\n').pop() ?? '{}';
  const r = JSON.parse(line) as WorkerResult;
  return { ...r, peakRss: Math.max(r.maxRss, m.peakRss) };
}

async function rclone(args: string[], t: RunningTarget) {
  return runMeasured('rclone', ['copyto', '-q', ...t.rclone.flags, ...args], {
    RCLONE_CONFIG: '/nonexistent/rclone.conf',
    // rclone refuses to start when this names a CA bundle (some sandboxes set it); it talks plain HTTP here.
    AWS_CA_BUNDLE: undefined,
    ...t.rclone.env,
  });
}

function md5File(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('md5');
    createReadStream(path)
      .on('data', (c) => h.update(c))
      .on('end', () => resolve(h.digest('hex')))
      .on('error', reject);
  });
}

const mb = (bytes: number) => `${(bytes / MiB).toFixed(0)} MiB`;
const rate = (v: number) => v.toFixed(1);

async function main(): Promise<void> {
  const sizeMB = Number(process.env.BENCH_SIZE_MB ?? 200);
  const memoryMB = Number(process.env.BENCH_MEMORY_MB ?? 1024);
  const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
  const only = process.env.BENCH_TARGETS?.split(',').map((s) => s.trim().toLowerCase());
  const targets = BENCH_TARGETS.filter((t) => !only || only.some((o) => t.name.toLowerCase().includes(o)));
  const work = mkdtempSync(join(tmpdir(), 'skyferry-bench-'));
  const src = join(work, 'source.bin');
  const size = sizeMB * 1000 * 1000;
  {
    const block = patternMiB();
    writeFileSync(src, '');
    for (let off = 0; off < size; off += block.length)
      appendFileSync(src, block.subarray(0, Math.min(block.length, size - off)));
  }
  const srcMd5 = await md5File(src);
  console.log(`providers benchmark: ${sizeMB} MB file, node ${process.version}, rclone copyto for comparison\n`);

  const rows: (string | number)[][] = [];
  const memRows: (string | number)[][] = [];
  let memoryFailed = false;
  try {
    for (const target of targets) {
      const t = await target.start();
      try {
        const provider = await openProvider(t.kind, t.credentials, { localRoots: t.localRoots });
        await provider.mkdir(t.dir);
        await provider.close?.();
        const base = { kind: t.kind, credentials: t.credentials, localRoots: t.localRoots };
        const skyPath = `${t.dir}/skyferry.bin`;

        // Rounds of one run per tool, the first place alternating (memory a process frees at its
        // exit is quick to touch again for the run after it, fresh memory slow on this kind of VM),
        // each tool keeping its best time and its highest peak.
        type Run = { ms: number; peakRss: number };
        const best = (a: Run | undefined, b: Run): Run =>
          a ? { ms: Math.min(a.ms, b.ms), peakRss: Math.max(a.peakRss, b.peakRss) } : b;
        const skyOut = join(work, 'down-skyferry.bin');
        const rOut = join(work, 'down-rclone.bin');
        const checked = async (f: string) => {
          if ((await md5File(f)) !== srcMd5) throw new Error(`${target.name}: ${f} does not match the source`);
          rmSync(f);
        };
        let up: Run | undefined;
        let rUp: Run | undefined;
        let down: Run | undefined;
        let rDown: Run | undefined;
        for (let round = 0; round < rounds; round++) {
          const upSky = async () =>
            (up = best(up, await runWorker({ ...base, op: 'upload', path: skyPath, file: src })));
          // --ignore-times: the copy the round before is there already, and rclone would skip it.
          const upR = async () =>
            (rUp = best(rUp, await rclone(['--ignore-times', src, `${t.rclone.remote}/rclone.bin`], t)));
          const downSky = async () => {
            down = best(down, await runWorker({ ...base, op: 'download', path: skyPath, file: skyOut }));
            await checked(skyOut);
          };
          const downR = async () => {
            rDown = best(rDown, await rclone([`${t.rclone.remote}/rclone.bin`, rOut], t));
            await checked(rOut);
          };
          for (const run of round % 2 === 0 ? [upSky, upR, downSky, downR] : [upR, upSky, downR, downSky]) await run();
        }
        if (!up || !rUp || !down || !rDown) throw new Error('no rounds run');
        const upSky = mbPerSec(size, up.ms);
        const upR = mbPerSec(size, rUp.ms);
        const downSky = mbPerSec(size, down.ms);
        const downR = mbPerSec(size, rDown.ms);
        rows.push([
          target.name,
          'upload',
          rate(upSky),
          rate(upR),
          (upSky / upR).toFixed(2),
          mb(up.peakRss),
          mb(rUp.peakRss),
        ]);
        rows.push([
          target.name,
          'download',
          rate(downSky),
          rate(downR),
          (downSky / downR).toFixed(2),
          mb(down.peakRss),
          mb(rDown.peakRss),
        ]);
        console.log(`${target.name}: done`);

        if (memoryMB > 0) {
          const gen = await runWorker({ ...base, op: 'generate', path: `${t.dir}/memory.bin`, size: memoryMB * MiB });
          // What the write itself costs: peak minus the process as it stood with the provider open.
          const ok = gen.peakRss - gen.rssBefore < 200 * 1000 * 1000;
          memoryFailed ||= !ok;
          memRows.push([
            target.name,
            mb(memoryMB * MiB),
            rate(mbPerSec(gen.bytes, gen.ms)),
            mb(gen.rssBefore),
            mb(gen.peakRss),
            mb(gen.peakRss - gen.rssBefore),
            ok ? 'yes' : 'NO',
          ]);
        }
      } finally {
        await t.stop();
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  console.log('\nThroughput (MB/s, 1 MB = 10^6 bytes), ratio = Skyferry / rclone, peak RSS of the process\n');
  console.log(
    table(
      ['target', 'direction', 'Skyferry MB/s', 'rclone MB/s', 'ratio', 'Skyferry peak RSS', 'rclone peak RSS'],
      rows,
    ),
  );
  if (memRows.length > 0) {
    console.log('\nWriting a generated stream through put() (known size)\n');
    console.log(table(['target', 'size', 'MB/s', 'RSS before', 'peak RSS', 'growth', 'growth under 200 MB'], memRows));
  }
  if (memoryFailed) {
    console.error('\nwriting a large file grew memory by 200 MB or more');
    process.exitCode = 1;
  }
}

if (process.argv[2] === '--worker') {
  worker(JSON.parse(process.argv[3] as string) as WorkerSpec)
    .then((r) => console.log(JSON.stringify(r)))
    .catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
} else {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
