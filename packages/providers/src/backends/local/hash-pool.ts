import { availableParallelism } from 'node:os';
import { sep } from 'node:path';
import { Worker } from 'node:worker_threads';

/**
 * Hashes of local files computed on worker threads, one per CPU (at most 4): reading and hashing
 * is the whole cost of comparing two folders or finding duplicates, and on the main thread it
 * would use one CPU however many the machine has. A worker opens the file itself, checks where
 * what it opened really is (the folder it serves, outside the paths it must not serve), and reads
 * it with synchronous calls into one buffer it keeps (its own thread waits, not the event loop, so
 * a slow disk holds up nobody else), hashing as it reads. Requests go to the workers in batches
 * (see `dispatch`), one message each way per batch, the paths and the answers each as one string:
 * the event loop's thread does no file system call and little copying per file. The workers do
 * not keep the process alive.
 */

/** The worker's code, plain JavaScript so it runs the same from the sources and from the bundle. */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { openSync, fstatSync, readSync, closeSync, readlinkSync, realpathSync, constants } = require('node:fs');
const { createHash } = require('node:crypto');
const sep = ${JSON.stringify(sep)};
const buf = Buffer.allocUnsafe(1024 * 1024);
// Where an open file really is, in one call: Linux names it in /proc (a file deleted since shows
// as "<path> (deleted)"). Elsewhere the path is resolved before it is opened.
let proc = true;
try {
  const fd = openSync('/proc/self/stat', 'r');
  try { readlinkSync('/proc/self/fd/' + fd); } finally { closeSync(fd); }
} catch { proc = false; }
function within(root, real) {
  return root === sep || real === root || real.startsWith(root + sep);
}
function refused(real, root, shut) {
  return !within(root, real) || shut.some((p) => real === p || real.startsWith(p + sep));
}
function outside() {
  const err = new Error('outside the allowed folder');
  err.code = 'EOUTSIDE';
  return err;
}
function hashOne(path, type, root, shut) {
  if (!proc && refused(realpathSync.native(path), root, shut)) throw outside();
  // Not blocking: a named pipe put where a file was listed opens at once (and is refused below).
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    if (proc) {
      const real = readlinkSync('/proc/self/fd/' + fd);
      const gone = real.endsWith(' (deleted)') ? real.slice(0, -10) : real;
      if (refused(real, root, shut) || refused(gone, root, shut)) throw outside();
    }
    // Only a regular file is read: a folder, a device or a pipe put where a file was listed is
    // refused before any read (a device could be read without end).
    const st = fstatSync(fd);
    if (!st.isFile()) {
      const folder = st.isDirectory();
      const err = new Error(folder ? 'illegal operation on a directory' : 'not a regular file');
      err.code = folder ? 'EISDIR' : 'ENOTREG';
      throw err;
    }
    const h = createHash(type);
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      h.update(n === buf.length ? buf : buf.subarray(0, n));
    }
    return h.digest('hex');
  } finally {
    closeSync(fd);
  }
}
// A message: groups of { type, root, shut (paths never served), paths joined by NUL }. The
// answer: one string, an item a file in order, joined by NUL: its hex hash, or "!" code, newline, message.
parentPort.on('message', (groups) => {
  const out = [];
  for (const g of groups) {
    for (const path of g.paths.split('\\0')) {
      try {
        out.push(hashOne(path, g.type, g.root, g.shut));
      } catch (err) {
        out.push('!' + ((err && err.code) || 'EIO') + '\\n' + String((err && err.message) || err).replace(/\\0/g, ''));
      }
    }
  }
  parentPort.postMessage(out.join('\\0'));
});
`;

/** The folder a provider serves: its real root, and real paths inside it never served. */
export interface HashScope {
  root: string;
  shut: readonly string[];
}

/** Files in one message at most (a batch is answered whole). */
const MAX_BATCH = 256;
/** Files that make it worth sending a worker still busy a second batch. */
const SECOND_BATCH = 32;

interface Request {
  scope: HashScope;
  path: string;
  type: string;
  resolve: (hex: string) => void;
  reject: (err: Error) => void;
}

/**
 * An error the file system gave, with its code (ENOENT, EISDIR...; EOUTSIDE: outside the scope;
 * ENOTREG: neither a file nor a folder), for the caller to map.
 */
export class HashFsError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

interface Thread {
  worker: Worker;
  /** The batches it was sent and has not answered, in order. */
  sent: Request[][];
  held: number;
}

class HashPool {
  private readonly workers: Thread[] = [];
  private queue: Request[] = [];
  private scheduled = false;
  private readonly size: number;

  constructor(size: number) {
    this.size = size;
  }

  /** The hash of the file at `path` (the lexical path below `scope.root`). */
  hash(scope: HashScope, path: string, type: 'md5' | 'sha1' | 'sha256'): Promise<string> {
    return new Promise((resolve, reject) => {
      this.queue.push({ scope, path, type, resolve, reject });
      this.schedule();
    });
  }

  /**
   * Hands what waits to the workers: an idle worker gets its share at once; one still busy with a
   * batch gets a second only when at least SECOND_BATCH files wait (so it never idles between
   * two), else they wait for its answer and go with what comes meanwhile. Each answer wakes this
   * thread and the worker gives up its CPU for it, so few large batches cost far less than many
   * small ones.
   */
  private dispatch(): void {
    this.scheduled = false;
    if (this.queue.length === 0) return;
    while (this.workers.length < Math.min(this.size, this.queue.length + this.busy())) this.spawn();
    for (const pending of [0, 1]) {
      const ready = this.workers.filter((w) => w.sent.length === pending);
      if (ready.length === 0 || (pending > 0 && this.queue.length < SECOND_BATCH)) continue;
      const per = Math.min(MAX_BATCH, Math.ceil(this.queue.length / ready.length));
      for (const w of ready) {
        if (this.queue.length === 0) return;
        const { groups, order } = groupsOf(this.queue.splice(0, per));
        w.sent.push(order);
        w.held += order.length;
        w.worker.ref();
        w.worker.postMessage(groups);
      }
    }
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.dispatch());
  }

  private busy(): number {
    return this.workers.reduce((n, w) => n + w.held, 0);
  }

  private spawn(): void {
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    const entry: Thread = { worker, sent: [], held: 0 };
    worker.unref();
    worker.on('message', (answer: string) => {
      const batch = entry.sent.shift();
      if (!batch) return;
      entry.held -= batch.length;
      if (entry.held === 0) worker.unref();
      // What waited for this worker goes with what its answer's callers ask next.
      if (this.queue.length > 0) this.schedule();
      const items = answer.split('\0');
      batch.forEach((r, i) => {
        const item = items[i] ?? '!EIO\nno answer';
        if (item[0] !== '!') return r.resolve(item);
        const nl = item.indexOf('\n');
        r.reject(new HashFsError(item.slice(1, nl), item.slice(nl + 1)));
      });
    });
    // A worker that dies fails what it held; the next requests get a new one.
    worker.on('error', (err) => this.lose(entry, err));
    worker.on('exit', () => this.lose(entry, new Error('a hashing thread stopped')));
    this.workers.push(entry);
  }

  private lose(entry: Thread, err: Error): void {
    const i = this.workers.indexOf(entry);
    if (i >= 0) this.workers.splice(i, 1);
    for (const batch of entry.sent) for (const r of batch) r.reject(err);
    entry.sent = [];
    entry.held = 0;
    if (this.queue.length > 0) this.schedule();
  }
}

type Group = { type: string; root: string; shut: readonly string[]; paths: string };

/**
 * A batch as the worker takes it: its requests of the same scope and type together, their paths
 * joined; and the requests in the order of the answers.
 */
function groupsOf(batch: readonly Request[]): { groups: Group[]; order: Request[] } {
  const runs = new Map<HashScope, Map<string, Request[]>>();
  for (const r of batch) {
    let byType = runs.get(r.scope);
    if (!byType) runs.set(r.scope, (byType = new Map()));
    const run = byType.get(r.type);
    if (run) run.push(r);
    else byType.set(r.type, [r]);
  }
  const groups: Group[] = [];
  const order: Request[] = [];
  for (const [scope, byType] of runs) {
    for (const [type, run] of byType) {
      groups.push({ type, root: scope.root, shut: scope.shut, paths: run.map((r) => r.path).join('\0') });
      for (const r of run) order.push(r);
    }
  }
  return { groups, order };
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
