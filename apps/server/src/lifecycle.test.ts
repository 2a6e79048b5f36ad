import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const LIFECYCLE = join(import.meta.dirname, 'lifecycle.ts');

/** Runs a process whose stop takes `stopMs`, sends it `signals` and answers its exit code, time and log. */
async function stopAfter(stopMs: number, timeoutMs: number, signals: NodeJS.Signals[]) {
  const script = `
    import { pino } from 'pino';
    import { exitOnSignals } from ${JSON.stringify(LIFECYCLE)};
    exitOnSignals(pino(), ${timeoutMs}, () => new Promise((r) => setTimeout(r, ${stopMs})));
    setInterval(() => {}, 1000);
    process.send('ready');
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: import.meta.dirname,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', () => reject(new Error(out)));
  });
  const started = Date.now();
  for (const s of signals) child.kill(s);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, ms: Date.now() - started, out };
}

describe('stopping on a signal', () => {
  it('exits 0 once the stop is done', async () => {
    const r = await stopAfter(300, 10_000, ['SIGTERM']);
    expect(r.code).toBe(0);
    expect(r.ms).toBeGreaterThanOrEqual(250);
    expect(r.out).toContain('"msg":"shut down"');
  });

  it('exits 1 when the stop outlasts the deadline, without waiting for it', async () => {
    const r = await stopAfter(60_000, 1_000, ['SIGTERM']);
    expect(r.code).toBe(1);
    expect(r.ms).toBeLessThan(5_000);
    expect(r.out).toContain('SKYFERRY_SHUTDOWN_TIMEOUT_MS');
  });

  it('exits at once on a second signal', async () => {
    const r = await stopAfter(60_000, 60_000, ['SIGTERM', 'SIGINT']);
    expect(r.code).toBe(1);
    expect(r.ms).toBeLessThan(5_000);
  });
});
