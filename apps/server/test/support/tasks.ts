import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Cloud, Envelope, ServerTask, TaskDetail } from '@skyferry/contract';
import { ProviderError, type Provider } from '@skyferry/providers';
import type { CloudsService } from '../../src/services/clouds.ts';
import type { TestApp } from './app.ts';

export interface Reply<T> {
  status: number;
  code: number;
  msg: string;
  data: T;
}

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** A JSON call through inject(), answering the status and the envelope. */
export function caller(t: () => TestApp) {
  return async function call<T = unknown>(
    method: Method,
    url: string,
    options: { headers?: Record<string, string>; body?: unknown } = {},
  ): Promise<Reply<T>> {
    const res = await t().app.inject({
      method,
      url,
      headers: options.headers,
      ...(options.body === undefined ? {} : { payload: options.body as Record<string, unknown> }),
    });
    const env = JSON.parse(res.body) as Envelope<T>;
    return { status: res.statusCode, ...env };
  };
}

/** Writes files (path -> content) under a folder. */
export function writeTree(root: string, files: Record<string, string | Buffer>): void {
  for (const [rel, content] of Object.entries(files)) {
    const file = join(root, rel);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
}

/** Connects a local-folder cloud over HTTP. */
export async function connectLocal(
  call: ReturnType<typeof caller>,
  headers: Record<string, string>,
  path: string,
  alias?: string,
): Promise<Cloud> {
  const res = await call<Cloud>('POST', '/api/clouds', {
    headers,
    body: { cloud_name: 'local', ...(alias ? { alias } : {}), credentials: { path } },
  });
  if (res.code !== 0) throw new Error(`connect failed: ${res.status} ${res.msg}`);
  return res.data;
}

/**
 * Test seam over real clouds: reads can be slowed down (so a run can be cancelled mid-way) and
 * made to fail for chosen paths (so a run ends partially). Everything else is the real provider.
 */
export class CloudFaults {
  readDelayMs = 0;
  readonly failing = new Set<string>();
  /**
   * Reads of paths ending so are held this long whatever happens (a cancel does not cut it short),
   * as a slow service does: a canceled run then takes that long to stop.
   */
  readonly holding = new Map<string, number>();
  /** Source paths read so far, in order (to see what a retry re-sent). */
  readonly reads: string[] = [];

  install(clouds: CloudsService): void {
    const open = clouds.open.bind(clouds);
    clouds.open = async (identity, id) => {
      const opened = await open(identity, id);
      return { ...opened, provider: this.wrap(opened.provider) };
    };
  }

  /** What every read of `path` goes through first: recorded, held, slowed, or failed. */
  private async beforeRead(path: string, signal: AbortSignal | undefined): Promise<void> {
    this.reads.push(path);
    const held = [...this.holding].find(([p]) => path.endsWith(p));
    if (held) await sleep(held[1]);
    if (this.readDelayMs > 0) await sleep(this.readDelayMs, undefined, signal ? { signal } : undefined);
    if ([...this.failing].some((p) => path.endsWith(p))) {
      throw new ProviderError('permission', `permission denied: ${path}`);
    }
  }

  private wrap(provider: Provider): Provider {
    return new Proxy(provider, {
      get: (target, prop, receiver) => {
        if (prop === 'openRead') {
          return async (path: string, opts?: Parameters<Provider['openRead']>[1]) => {
            await this.beforeRead(path, opts?.signal);
            return target.openRead(path, opts);
          };
        }
        // Small files are read whole where the backend can (the engine's fast path): the same seam.
        if (prop === 'readSmall' && target.readSmall) {
          const readSmall = target.readSmall.bind(target);
          return async (path: string, max: number, opts?: Parameters<NonNullable<Provider['readSmall']>>[2]) => {
            await this.beforeRead(path, opts?.signal);
            return readSmall(path, max, opts);
          };
        }
        const value: unknown = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  }
}

export const FINAL_STATES = [0, 3, 4, 5, 6, 10];

/** Polls a task until its state is one of `states`; answers the task and every state seen. */
export async function waitForState(
  call: ReturnType<typeof caller>,
  headers: Record<string, string>,
  id: string,
  states: number[] = FINAL_STATES,
  timeoutMs = 30_000,
): Promise<{ task: TaskDetail; seen: number[] }> {
  const seen: number[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await call<TaskDetail>('GET', `/api/tasks/${id}`, { headers });
    if (res.code !== 0) throw new Error(`task ${id}: ${res.status} ${res.msg}`);
    if (seen[seen.length - 1] !== res.data.state) seen.push(res.data.state);
    if (states.includes(res.data.state)) return { task: res.data, seen };
    if (Date.now() > deadline) throw new Error(`task ${id} stuck in state ${res.data.state} (seen ${seen.join(',')})`);
    await sleep(25);
  }
}

export type { ServerTask };
