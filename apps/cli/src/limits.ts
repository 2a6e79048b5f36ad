/**
 * rclone's run limits, in rclone's own syntax: `--bwlimit` (a bandwidth, `up:down`, or a timetable
 * of them by time of day and day of the week), `--max-transfer` (a size) and `--stats` (a duration).
 * Bandwidth is enforced on the bytes read from (`down`) and written to (`up`) the two places, by
 * wrapping their providers; server-side copies move no bytes through here and are not limited.
 */
import { Transform, pipeline, type Readable } from 'node:stream';
import type { ChunkWriter, Provider } from '@skyferry/providers';
import { UsageError } from './errors.ts';

const UNITS: Record<string, number> = { b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4, p: 1024 ** 5 };

/** A size as rclone writes one: a number with B, K, M, G, T or P (powers of 1024), KiB when bare. */
export function parseSize(text: string, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)([bkmgtp])?(?:i?b)?$/i.exec(text.trim());
  if (!m) throw new UsageError(`--${flag}: "${text}" is not a size (like 512K, 10M, 1.5G)`);
  const unit = UNITS[(m[2] ?? 'k').toLowerCase()] as number;
  return Math.round(Number(m[1]) * unit);
}

/** A duration as rclone writes one (`500ms`, `10s`, `1m30s`, `1h`), seconds when bare. */
export function parseDuration(text: string, flag: string): number {
  const t = text.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t) * 1000;
  const part = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;
  const ms: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  let end = 0;
  for (let m = part.exec(t); m; m = part.exec(t)) {
    total += Number(m[1]) * (ms[m[2] as string] as number);
    end = part.lastIndex;
  }
  if (t === '' || end !== t.length)
    throw new UsageError(`--${flag}: "${text}" is not a duration (like 10s, 1m, 1h30m)`);
  return total;
}

/** Bytes a second each way; 0 is no limit. */
export interface BwPair {
  up: number;
  down: number;
}

interface Slot {
  /** Minutes from Sunday 00:00 of the week. */
  at: number;
  bw: BwPair;
}

const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

function parseBandwidth(text: string): BwPair {
  const one = (t: string) => (t.toLowerCase() === 'off' ? 0 : parseSize(t, 'bwlimit'));
  const [up, down, more] = text.split(':');
  if (more !== undefined || up === undefined || up === '' || down === '') {
    throw new UsageError(`--bwlimit: "${text}" is not a bandwidth (like 1M, off, or up:down as 10M:1M)`);
  }
  const u = one(up);
  return { up: u, down: down === undefined ? u : one(down) };
}

/**
 * A bandwidth timetable: one bandwidth for all the time, or entries `[Day-]HH:MM,BANDWIDTH`
 * separated by spaces or semicolons. An entry without a day holds on every day; each holds until
 * the next one starts (the last of the week until the first).
 */
export class BwTimetable {
  readonly slots: Slot[];

  constructor(text: string) {
    const entries = text
      .trim()
      .split(/[\s;]+/)
      .filter(Boolean);
    if (entries.length === 0) throw new UsageError('--bwlimit: give a bandwidth or a timetable');
    if (entries.length === 1 && !entries[0]?.includes(',')) {
      this.slots = [{ at: 0, bw: parseBandwidth(entries[0] as string) }];
      return;
    }
    const slots: Slot[] = [];
    for (const entry of entries) {
      const m = /^(?:([a-z]{3})-)?(\d{1,2}):(\d{2}),(.+)$/i.exec(entry);
      const day = m?.[1] ? DAYS.indexOf(m[1].toLowerCase()) : undefined;
      const hh = Number(m?.[2]);
      const mm = Number(m?.[3]);
      if (!m || day === -1 || hh > 23 || mm > 59) {
        throw new UsageError(`--bwlimit: "${entry}" is not a timetable entry (like 08:00,512K or Mon-18:30,off)`);
      }
      const bw = parseBandwidth(m[4] as string);
      for (const d of day === undefined ? [0, 1, 2, 3, 4, 5, 6] : [day])
        slots.push({ at: d * 1440 + hh * 60 + mm, bw });
    }
    this.slots = slots.sort((a, b) => a.at - b.at);
  }

  /** The bandwidth that holds at `when` (local time). */
  at(when: Date): BwPair {
    const minute = when.getDay() * 1440 + when.getHours() * 60 + when.getMinutes();
    let current = this.slots[this.slots.length - 1] as Slot;
    for (const s of this.slots) if (s.at <= minute) current = s;
    return current.bw;
  }
}

/** One token bucket a direction, shared by every file of the run; the rate is read from the timetable. */
export class Bandwidth {
  private readonly table: BwTimetable;
  private readonly now: () => number;
  private readonly state = { up: { tokens: 0, at: 0 }, down: { tokens: 0, at: 0 } };

  constructor(table: BwTimetable, now: () => number = Date.now) {
    this.table = table;
    this.now = now;
  }

  /** Waits until `bytes` more may move this way. */
  async take(way: 'up' | 'down', bytes: number, signal?: AbortSignal): Promise<void> {
    const t = this.now();
    const rate = this.table.at(new Date(t))[way];
    const s = this.state[way];
    if (rate === 0) {
      s.tokens = 0;
      s.at = t;
      return;
    }
    // Debt-based: the bucket may go below zero and the taker waits the debt off; a quarter second of
    // burst at most is saved up while nothing moves.
    s.tokens = Math.min(rate / 4, s.tokens + ((t - (s.at || t)) / 1000) * rate) - bytes;
    s.at = t;
    if (s.tokens < 0) {
      const wait = (-s.tokens / rate) * 1000;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, wait);
        signal?.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            reject(signal.reason as Error);
          },
          { once: true },
        );
      });
    }
  }

  /** `body` through the bucket of `way`; an error of either stream ends both. */
  stream(body: Readable, way: 'up' | 'down'): Readable {
    const take = (n: number) => this.take(way, n);
    const limited = new Transform({
      transform(chunk: Buffer, _enc, done) {
        take(chunk.length).then(() => done(null, chunk), done);
      },
    });
    return pipeline(body, limited, () => undefined);
  }
}

/** What a Provider is made of: anything else (a backend's own fast paths) is hidden, so every byte passes the limit. */
const PROVIDER_KEYS = new Set<string | symbol>([
  'kind',
  'accountKey',
  'features',
  'hashes',
  'checkedWrites',
  'chunkedWriteHashes',
  'list',
  'stat',
  'openRead',
  'put',
  'mkdir',
  'remove',
  'rmdir',
  'rename',
  'about',
  'copy',
  'move',
  'openChunkWriter',
  'listRecursive',
  'hash',
  'trash',
  'removeTemps',
  'close',
]);

function limitWriter(w: ChunkWriter, bw: Bandwidth): ChunkWriter {
  return new Proxy(w, {
    get(target, key) {
      if (key === 'writeChunk') {
        return async (index: number, data: Buffer, signal?: AbortSignal) => {
          await bw.take('up', data.length, signal);
          return target.writeChunk(index, data, signal);
        };
      }
      if (key === 'writeRange' && target.writeRange) {
        return (offset: number, length: number, body: Readable, signal?: AbortSignal) =>
          target.writeRange?.(offset, length, bw.stream(body, 'up'), signal);
      }
      const v = Reflect.get(target, key, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/**
 * `provider` with every byte read from it and written to it passing `bw`. A local folder's
 * "server-side" copy is a copy on this machine's disk: it is hidden, so those bytes pass too.
 */
export function limitProvider(provider: Provider, bw: Bandwidth): Provider {
  const hidden = provider.kind === 'local' ? new Set<string | symbol>(['copy', 'move']) : new Set<string | symbol>();
  const own: Partial<Provider> = {
    openRead: async (path, opts) => bw.stream(await provider.openRead(path, opts), 'down'),
    put: (path, body, src, opts) => provider.put(path, bw.stream(body, 'up'), src, opts),
    ...(provider.openChunkWriter
      ? {
          openChunkWriter: async (...args: Parameters<NonNullable<Provider['openChunkWriter']>>) =>
            limitWriter(await (provider.openChunkWriter as NonNullable<Provider['openChunkWriter']>)(...args), bw),
        }
      : {}),
  };
  return new Proxy(provider, {
    get(target, key) {
      if (typeof key === 'string' && key in own) return own[key as keyof Provider];
      if (!PROVIDER_KEYS.has(key) || hidden.has(key)) return undefined;
      if (key === 'features' && hidden.size > 0) return { ...target.features, copy: false, move: false };
      const v = Reflect.get(target, key, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
    has(target, key) {
      return PROVIDER_KEYS.has(key) && !hidden.has(key) && Reflect.has(target, key);
    },
  });
}
