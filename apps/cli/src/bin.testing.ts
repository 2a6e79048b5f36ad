/** Runs the `skyferry` bin npm links as a child process (integration tests). */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

export const BIN = resolve(import.meta.dirname, '../../../node_modules/.bin/skyferry');

export interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: string;
  err: string;
}

/** Runs `skyferry` in `cwd` with `env`; `during` gets the child while it runs (to stop it midway). */
export function runBin(
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv },
  during?: (child: ChildProcess) => void,
): Promise<Ran> {
  return new Promise((done, fail) => {
    const child = spawn(BIN, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', fail);
    child.on('close', (code, signal) => done({ code, signal, out, err }));
    during?.(child);
  });
}
