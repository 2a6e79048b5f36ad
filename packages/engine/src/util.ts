import type { Entry, HashType, Hashes, ProviderError } from '@skyferry/providers';
import type { Fingerprint, Side } from './types.ts';

/**
 * Errors that end a listing or comparison walk instead of being recorded against one folder or
 * file: an expired or refused sign-in, a cancel, a changed host key, or what the backend calls fatal.
 */
export function isFatal(e: ProviderError): boolean {
  return (
    e.code === 'auth_expired' ||
    e.code === 'auth_invalid' ||
    e.code === 'canceled' ||
    e.code === 'host_key_changed' ||
    e.retry === 'fatal'
  );
}

/** Modification times closer than this are the same (services round to seconds). */
export const MODTIME_WINDOW_MS = 1000;

export function joinRel(root: string, rel: string): string {
  if (rel === '/' || rel === '') return root;
  if (root === '/' || root === '') return rel;
  return root.replace(/\/+$/, '') + rel;
}

export function childRel(rel: string, name: string): string {
  return rel === '/' ? `/${name}` : `${rel}/${name}`;
}

/** `path` is below `root` (not `root` itself). */
export function isBelow(root: string, path: string): boolean {
  return root === '/' ? path !== '/' : path.startsWith(`${root}/`);
}

export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

export function parentPath(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

/** An item's path below its pair's root on one side (each side keeps its own spelling of a name). */
export function relOn(item: { rel: string; targetRel?: string }, side: Side): string {
  return side === 'target' ? (item.targetRel ?? item.rel) : item.rel;
}

export function fingerprintOf(e: Entry): Fingerprint {
  const fp: Fingerprint = { size: e.size };
  if (e.modTime) fp.mtime = e.modTime.getTime();
  if (e.hashes && Object.keys(e.hashes).length > 0) fp.hashes = e.hashes;
  if (e.id !== undefined) fp.id = e.id;
  if (e.mimeType) fp.mimeType = e.mimeType;
  if (e.md5Hint) fp.md5Hint = e.md5Hint;
  return fp;
}

/** Compares hashes of a type both carry: true/false, or undefined when they share none. */
export function sameHashes(a: Hashes | undefined, b: Hashes | undefined): boolean | undefined {
  if (!a || !b) return undefined;
  for (const t of Object.keys(a) as HashType[]) {
    const x = a[t];
    const y = b[t];
    if (x && y) return x.toLowerCase() === y.toLowerCase();
  }
  return undefined;
}

export function mtimeDiffers(a: number | undefined, b: number | undefined): boolean | undefined {
  if (a === undefined || b === undefined) return undefined;
  return Math.abs(a - b) > MODTIME_WINDOW_MS;
}

/** Whether `a` is newer than `b` beyond the window (false when either is unknown). */
export function isNewer(a: number | undefined, b: number | undefined): boolean {
  return a !== undefined && b !== undefined && a - b > MODTIME_WINDOW_MS;
}

/** A weighted FIFO semaphore: `acquire(n)` waits until n units are free and nobody queued before it. */
export class Semaphore {
  private available: number;
  private readonly waiting: { n: number; resolve: () => void }[] = [];
  constructor(n: number) {
    this.available = n;
  }
  acquire(n = 1): Promise<void> {
    if (this.waiting.length === 0 && this.available >= n) {
      this.available -= n;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => this.waiting.push({ n, resolve }));
  }
  release(n = 1): void {
    this.available += n;
    while (this.waiting.length > 0) {
      const head = this.waiting[0] as { n: number; resolve: () => void };
      if (this.available < head.n) break;
      this.available -= head.n;
      this.waiting.shift();
      head.resolve();
    }
  }
  async with<T>(fn: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await fn();
    } finally {
      this.release();
    }
  }
}

/**
 * Runs `fn` over `items`, `n` at a time, in order. An item that calls `sent` (all its bytes are on
 * their way) frees its place for the next while it waits for the service's answer, so the link
 * does not idle through each item's last round trip; at most `2n` items are under way. No further
 * item starts once `stopped()` is true (`sent` is called for an item when it settles without).
 * Settles once every item started has settled. A failure `fn` throws stops further items and is
 * thrown then (the first one), so nothing is left running behind the caller; `fn` catches what
 * should not stop the others.
 */
export async function poolSent<T>(
  items: Iterable<T> | AsyncIterable<T>,
  n: number,
  fn: (item: T, sent: () => void) => Promise<void>,
  stopped: () => boolean,
): Promise<void> {
  const places = new Semaphore(Math.max(1, n));
  const underWay = new Semaphore(2 * Math.max(1, n));
  // Only the items under way are held (a run of a million files keeps no promise per finished file).
  const running = new Set<Promise<void>>();
  let escaped: { err: unknown } | undefined;
  const stop = () => escaped !== undefined || stopped();
  const start = async (item: T): Promise<boolean> => {
    if (stop()) return false;
    await underWay.acquire();
    await places.acquire();
    if (stop()) {
      places.release();
      underWay.release();
      return false;
    }
    let holding = true;
    const sent = () => {
      if (!holding) return;
      holding = false;
      places.release();
    };
    const p = (async () => {
      try {
        await fn(item, sent);
      } catch (err) {
        escaped ??= { err };
      } finally {
        sent();
        underWay.release();
      }
    })();
    running.add(p);
    void p.finally(() => running.delete(p));
    return true;
  };
  if (Symbol.asyncIterator in items) {
    for await (const item of items) if (!(await start(item))) break;
  } else {
    for (const item of items) if (!(await start(item))) break;
  }
  await Promise.all(running);
  if (escaped) throw escaped.err;
}
