import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface Measured {
  /** Wall-clock milliseconds from spawn to exit. */
  ms: number;
  /** Peak resident memory in bytes (the kernel's VmHWM, sampled until exit). */
  peakRss: number;
  /** CPU time (user and system, all threads) in ms, as last sampled before exit (up to 20 ms early). */
  cpuMs: number;
  stdout: string;
  stderr: string;
}

/** Peak RSS of a live process (bytes), from /proc. */
export function vmHwm(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = /VmHWM:\s+(\d+) kB/.exec(status);
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined; // exited
  }
}

/**
 * A live process's resident size and the part of it the kernel may take back at any time (pages
 * freed with MADV_FREE, as V8 gives back its heap's free pages: counted resident until memory runs
 * short), from /proc/<pid>/smaps_rollup, in bytes.
 */
export function residentOf(pid: number): { rss: number; lazyFree: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) * 1024;
    return { rss: kb('Rss'), lazyFree: kb('LazyFree') };
  } catch {
    return undefined;
  }
}

/** CPU time of a live process (user and system, all threads) in ms, from /proc; the kernel counts in 10 ms ticks. */
export function cpuMsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces, inside parentheses): utime and stime are 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined; // exited
  }
}

/**
 * Runs a program to completion, sampling its peak RSS (VmHWM only grows, so the last sample
 * before exit is the peak up to 20 ms before the end).
 */
export function runMeasured(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  okCodes: number[] = [0],
): Promise<Measured> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const merged: NodeJS.ProcessEnv = { ...process.env, ...env };
    // A variable given as undefined is removed from the child's environment.
    for (const [k, v] of Object.entries(env)) if (v === undefined) delete merged[k];
    const child = spawn(cmd, args, { env: merged, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let peak = 0;
    let cpuMs = 0;
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setInterval(() => {
      const v = child.pid ? vmHwm(child.pid) : undefined;
      if (v !== undefined) peak = Math.max(peak, v);
      const c = child.pid ? cpuMsOf(child.pid) : undefined;
      if (c !== undefined) cpuMs = Math.max(cpuMs, c);
    }, 20);
    child.on('error', (err) => {
      clearInterval(timer);
      reject(err);
    });
    child.on('exit', (code) => {
      clearInterval(timer);
      const ms = performance.now() - started;
      if (code === null || !okCodes.includes(code))
        reject(new Error(`${cmd} ${args.join(' ')} exited ${code}\n${stderr.slice(-4000)}`));
      else resolve({ ms, peakRss: peak, cpuMs, stdout, stderr });
    });
  });
}

export const MB = 1000 * 1000;
export const MiB = 1024 * 1024;

export function mbPerSec(bytes: number, ms: number): number {
  return bytes / MB / (ms / 1000);
}

/** Prints rows as an aligned text table (and returns it, for the README). */
export function table(headers: string[], rows: (string | number)[][]): string {
  const cells = [headers, ...rows.map((r) => r.map((c) => String(c)))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => '| ' + r.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ') + ' |';
  const sep = '|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|';
  return [line(cells[0] as string[]), sep, ...cells.slice(1).map(line)].join('\n');
}
