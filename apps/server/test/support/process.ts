import { fork, type ChildProcess } from 'node:child_process';
import type { Envelope } from '@skyferry/contract';

/** A Skyferry process (API or worker) with its JSON log lines kept. */
export class Proc {
  readonly child: ChildProcess;
  readonly lines: Array<Record<string, unknown>> = [];
  private text = '';
  readonly ready: Promise<Record<string, unknown>>;

  constructor(script: string, env: Record<string, string>) {
    this.child = fork(script, [], {
      env: { ...process.env, ...env },
      execArgv: [],
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    const keep = (chunk: Buffer) => {
      this.text += chunk.toString();
      let nl = this.text.indexOf('\n');
      while (nl >= 0) {
        const line = this.text.slice(0, nl);
        this.text = this.text.slice(nl + 1);
        if (line.startsWith('{')) {
          try {
            this.lines.push(JSON.parse(line) as Record<string, unknown>);
          } catch {
            // not a log line
          }
        }
        nl = this.text.indexOf('\n');
      }
    };
    this.child.stdout?.on('data', keep);
    this.child.stderr?.on('data', keep);
    this.ready = new Promise((resolve, reject) => {
      this.child.once('message', (m) => resolve(m as Record<string, unknown>));
      this.child.once('exit', (code) => reject(new Error(`${script} exited with ${code}: ${this.text.slice(-2000)}`)));
    });
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

/** A JSON call over HTTP to a Skyferry process at `base`, answering the envelope. */
export async function fetchEnvelope<T>(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  token?: string,
): Promise<Envelope<T>> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return (await res.json()) as Envelope<T>;
}
