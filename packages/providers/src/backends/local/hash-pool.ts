import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/**
 * Hashes of local files computed on worker threads, one per CPU (at most 4): reading and hashing
 * is the whole cost of comparing two folders or finding duplicates, and on the main thread it
 * would use one CPU however many the machine has. A worker reads the file with synchronous calls
 * (its own thread waits, not the event loop, so a slow disk holds up nobody else) and hashes it
 * as it reads. Requests made in one turn of the event loop go to the workers together, one
 * message each way per batch. The workers do not keep the process alive.
 *
 * The caller passes a path it has already resolved and confined to the folder it serves.
 */

/** The worker's code, plain JavaScript so it runs the same from the sources and from the bundle. */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { openSync, fstatSync, readSync, closeSync } = require('node:fs');
const { createHash } = require('node:crypto');
const buf = Buffer.allocUnsafe(1024 * 1024);
function hashOne(path, type) {
  const fd = openSync(path, 'r');
  try {
    if (fstatSync(fd).isDirectory()) return { code: 'EISDIR' };
    const h = createHash(type);
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      h.update(buf.subarray(0, n));
    }
    return { hex: h.digest('hex') };
  } finally {
    closeSync(fd);
  }
}
parentPort.on('message', (batch) => {
  const out = [];
  for (const r of batch) {
    try {
      out.push({ id: r.id, ...hashOne(r.path, r.type) });
    } catch (err) {
      out.push({ id: r.id, code: (err && err.code) || 'EIO', message: String((err && err.message) || err) });
    }
  }
  parentPort.postMessage(out);
});
`;

interface Request {
  id: number;
  path: string;
  type: string;
}
interface Answer {
  id: number;
  hex?: string;
  code?: string;
  message?: string;
}
interface Waiting {
  resolve: (hex: string) => void;
  reject: (err: Error) => void;
}

/** An error the file system gave, with its code (ENOENT, EISDIR...), for the caller to map. */
export class HashFsError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

interface Thread {
  worker: Worker;
  /** The requests it holds. */
  held: Set<number>;
}

class HashPool {
  private readonly workers: Thread[] = [];
  private readonly waiting = new Map<number, Waiting>();
  private queue: Request[] = [];
  private scheduled = false;
  private nextId = 1;
  private readonly size: number;

  constructor(size: number) {
    this.size = size;
  }

  hash(path: string, type: 'md5' | 'sha1' | 'sha256'): Promise<string> {
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      this.waiting.set(id, { resolve, reject });
      this.queue.push({ id, path, type });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.dispatch());
      }
    });
  }

  /** Splits what waits among the workers, the least busy first. */
  private dispatch(): void {
    this.scheduled = false;
    const queue = this.queue;
    this.queue = [];
    if (queue.length === 0) return;
    while (this.workers.length < Math.min(this.size, queue.length + this.busy())) this.spawn();
    const per = Math.ceil(queue.length / this.workers.length);
    for (let i = 0; i < queue.length; i += per) {
      const w = this.workers.reduce((a, b) => (b.held.size < a.held.size ? b : a));
      const batch = queue.slice(i, i + per);
      for (const r of batch) w.held.add(r.id);
      w.worker.ref();
      w.worker.postMessage(batch);
    }
  }

  private busy(): number {
    return this.workers.reduce((n, w) => n + w.held.size, 0);
  }

  private spawn(): void {
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    const entry: Thread = { worker, held: new Set() };
    worker.unref();
    worker.on('message', (answers: Answer[]) => {
      for (const a of answers) entry.held.delete(a.id);
      if (entry.held.size === 0) worker.unref();
      for (const a of answers) {
        const w = this.waiting.get(a.id);
        if (!w) continue;
        this.waiting.delete(a.id);
        if (a.hex !== undefined) w.resolve(a.hex);
        else w.reject(new HashFsError(a.code ?? 'EIO', a.message ?? 'the file could not be read'));
      }
    });
    // A worker that dies fails what it held; the next requests get a new one.
    worker.on('error', (err) => this.lose(entry, err));
    worker.on('exit', () => this.lose(entry, new Error('a hashing thread stopped')));
    this.workers.push(entry);
  }

  private lose(entry: Thread, err: Error): void {
    const i = this.workers.indexOf(entry);
    if (i >= 0) this.workers.splice(i, 1);
    for (const id of entry.held) {
      this.waiting.get(id)?.reject(err);
      this.waiting.delete(id);
    }
    entry.held.clear();
  }
}

let pool: HashPool | undefined | null;

/**
 * The shared pool, or null on a machine with one CPU (the event loop's own thread hashes there)
 * or with SKYFERRY_HASH_THREADS=0.
 */
export function hashPool(): HashPool | null {
  if (pool === undefined) {
    const cpus = availableParallelism();
    pool = cpus > 1 && process.env.SKYFERRY_HASH_THREADS !== '0' ? new HashPool(Math.min(4, cpus)) : null;
  }
  return pool;
}
