import type { Readable } from 'node:stream';
import type { Entry, HashType } from '@skyferry/providers';
import type { Fingerprint, Side } from '../types.ts';
import { Semaphore, sameHashes } from '../util.ts';
import type { Walker } from './walk.ts';

/**
 * How files are told apart: sizes, hashes both sides give, modification times at the precision
 * each side really keeps them, and where none of that settles it, the bytes themselves.
 */

/**
 * The step of a side's modification times in ms (1 where milliseconds are kept, 1000 where seconds
 * are): times of one file closer than that are the same time.
 */
export function precisionOf(features: { modTimePrecisionMs?: number }): number {
  return features.modTimePrecisionMs ?? 1000;
}

const asBuffer = (v: Buffer | Uint8Array): Buffer =>
  Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);

/** Whether two streams carry the same bytes (both are consumed or destroyed). */
export async function sameBytes(x: Readable, y: Readable): Promise<boolean> {
  const a = x[Symbol.asyncIterator]() as AsyncIterator<Buffer | Uint8Array>;
  const b = y[Symbol.asyncIterator]() as AsyncIterator<Buffer | Uint8Array>;
  let ca: Buffer = Buffer.alloc(0);
  let cb: Buffer = Buffer.alloc(0);
  let aDone = false;
  let bDone = false;
  try {
    for (;;) {
      if (ca.length === 0 && !aDone) {
        const n = await a.next();
        if (n.done) aDone = true;
        else ca = asBuffer(n.value);
        continue;
      }
      if (cb.length === 0 && !bDone) {
        const n = await b.next();
        if (n.done) bDone = true;
        else cb = asBuffer(n.value);
        continue;
      }
      if (ca.length === 0 || cb.length === 0) return ca.length === cb.length;
      const k = Math.min(ca.length, cb.length);
      if (!ca.subarray(0, k).equals(cb.subarray(0, k))) return false;
      ca = ca.subarray(k);
      cb = cb.subarray(k);
    }
  } finally {
    x.destroy();
    y.destroy();
  }
}

export class Comparer {
  readonly walker: Walker;
  /** Files read or hashed at once to compare them. */
  readonly reads = new Semaphore(4);
  readonly precision: Record<Side, number>;
  readonly keepsTimes: Record<Side, boolean>;
  /** Times of the two sides closer than this are the same (the coarser side's step). */
  readonly window: number;
  readonly now = Date.now();

  constructor(walker: Walker) {
    this.walker = walker;
    const s = walker.provider('source').features;
    const t = walker.provider('target').features;
    this.precision = { source: precisionOf(s), target: precisionOf(t) };
    this.keepsTimes = { source: s.setModTime, target: t.setModTime };
    this.window = Math.max(this.precision.source, this.precision.target);
  }

  /** Whether both sides keep the times given on write to below a second (then equal times mean a copy). */
  get fineTimes(): boolean {
    return this.keepsTimes.source && this.keepsTimes.target && this.window < 1000;
  }

  /** Whether two times of the two sides are the same, as far as both keep them (undefined: one is unknown). */
  sameTime(a: number | undefined, b: number | undefined): boolean | undefined {
    if (a === undefined || b === undefined) return undefined;
    return Math.abs(a - b) < this.window;
  }

  /** Whether time `a` is later than `b` beyond what the sides' precision blurs. */
  isNewer(a: number | undefined, b: number | undefined): boolean {
    return a !== undefined && b !== undefined && a - b >= this.window;
  }

  /** A target time later than now: it cannot say which file is newer. */
  inFuture(t: number | undefined): boolean {
    return t !== undefined && t - this.now > this.window;
  }

  /** Whether a side's file changed since a record of it (the previous run's, or what was written). */
  changedSince(side: Side, e: Entry, rec: Fingerprint | undefined): boolean {
    if (!rec) return true;
    if (e.size !== rec.size) return true;
    const h = sameHashes(e.hashes, rec.hashes);
    if (h !== undefined) return !h;
    const t = e.modTime?.getTime();
    if (t === undefined || rec.mtime === undefined) return false;
    // A side lists an unchanged file's time the same each time: any step of its precision is a change.
    return Math.abs(t - rec.mtime) >= this.precision[side];
  }

  /** changedSince, asking the file for its exact time when only the listed time differs. */
  async changedSinceExact(side: Side, e: Entry, rec: Fingerprint | undefined): Promise<boolean> {
    if (!this.changedSince(side, e, rec)) return false;
    if (!rec || e.size !== rec.size || sameHashes(e.hashes, rec.hashes) !== undefined) return true;
    return this.changedSince(side, await this.walker.precise(side, e), rec);
  }

  /** A hash of one of `types` of a side's file: listed, or asked of the service (the local disk computes it). */
  private async hashOf(side: Side, e: Entry, type: HashType): Promise<string | undefined> {
    const listed = e.hashes?.[type];
    if (listed) return listed;
    const p = this.walker.provider(side);
    if (!p.hash) return undefined;
    return p.hash(e.path, type, { signal: this.walker.req.signal });
  }

  /** Whether a hash both sides give (listed, or asked of them) is equal; undefined when they share none. */
  async sameHash(a: Entry, b: Entry): Promise<boolean | undefined> {
    const listed = sameHashes(a.hashes, b.hashes);
    if (listed !== undefined) return listed;
    const src = this.walker.provider('source');
    const dst = this.walker.provider('target');
    await this.reads.acquire();
    try {
      for (const type of src.hashes) {
        if (!dst.hashes.has(type)) continue;
        const [x, y] = await Promise.all([this.hashOf('source', a, type), this.hashOf('target', b, type)]);
        if (x && y) return x.toLowerCase() === y.toLowerCase();
      }
      return undefined;
    } finally {
      this.reads.release();
    }
  }

  /**
   * Whether two files of the two sides hold the same bytes: by a hash both give (the local disk
   * computes one), else by reading both. Undefined when neither could be done (a doubt).
   */
  async sameContent(a: Entry, b: Entry): Promise<boolean | undefined> {
    if (a.size !== b.size) return false;
    try {
      const hashed = await this.sameHash(a, b);
      if (hashed !== undefined) return hashed;
      const signal = this.walker.req.signal;
      await this.reads.acquire();
      try {
        const [x, y] = await Promise.all([
          this.walker.provider('source').openRead(a.path, { signal }),
          this.walker.provider('target').openRead(b.path, { signal }),
        ]);
        return await sameBytes(x, y);
      } finally {
        this.reads.release();
      }
    } catch {
      this.walker.checkAbort();
      return undefined;
    }
  }

  /**
   * Whether the two sides' files are the same (two-way: both new, or both changed): equal sizes and
   * a shared hash, or times equal to the millisecond on sides that keep them so (a copy), or else
   * the same bytes. Any doubt answers false (a conflict keeps both).
   */
  async sameFile(a: Entry, b: Entry): Promise<boolean> {
    if (a.size !== b.size) return false;
    const h = sameHashes(a.hashes, b.hashes);
    if (h !== undefined) return h;
    if (this.fineTimes) {
      if (this.sameTime(a.modTime?.getTime(), b.modTime?.getTime())) return true;
      const [pa, pb] = await Promise.all([this.walker.precise('source', a), this.walker.precise('target', b)]);
      const ph = sameHashes(pa.hashes, pb.hashes);
      if (ph !== undefined) return ph;
      if (this.sameTime(pa.modTime?.getTime(), pb.modTime?.getTime())) return true;
    }
    return (await this.sameContent(a, b)) === true;
  }
}
