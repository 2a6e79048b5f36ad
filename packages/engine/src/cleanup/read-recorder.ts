import { Transform, type Readable } from 'node:stream';
import { relayErrors, type Provider, type ReadOptions } from '@skyferry/providers';

/** One read of a file: the bytes asked for (inclusive) and the bytes that arrived. */
export interface RecordedRead {
  path: string;
  start: number;
  end: number | undefined;
  bytes: number;
}

/**
 * Wraps a provider and records every `openRead` and the bytes it delivered, to prove how much a
 * scan downloads and that it never fetches the same byte of a file twice (tests and the benchmark).
 */
export function recordReads(provider: Provider): { provider: Provider; reads: RecordedRead[]; bytes(): number } {
  const reads: RecordedRead[] = [];
  const openRead = async (path: string, opts: ReadOptions = {}): Promise<Readable> => {
    const rec: RecordedRead = { path, start: opts.range?.start ?? 0, end: opts.range?.end, bytes: 0 };
    reads.push(rec);
    const stream = await provider.openRead(path, opts);
    const counter = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        rec.bytes += chunk.length;
        cb(null, chunk);
      },
    });
    relayErrors(stream, counter);
    return stream.pipe(counter);
  };
  // Every other member goes to the provider itself, bound to it (backends may keep private state).
  const wrapped = new Proxy(provider, {
    get(target, prop) {
      if (prop === 'openRead') return openRead;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { provider: wrapped, reads, bytes: () => reads.reduce((n, r) => n + r.bytes, 0) };
}

/** Files some byte of which was read more than once (overlapping ranges of one path). */
export function overlappingReads(reads: readonly RecordedRead[]): string[] {
  const byPath = new Map<string, Array<[number, number]>>();
  for (const r of reads) {
    const list = byPath.get(r.path) ?? [];
    list.push([r.start, r.start + r.bytes - 1]);
    byPath.set(r.path, list);
  }
  const out: string[] = [];
  for (const [path, ranges] of byPath) {
    const sorted = ranges.filter(([s, e]) => e >= s).sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < sorted.length; i++) {
      if ((sorted[i]?.[0] ?? 0) <= (sorted[i - 1]?.[1] ?? -1)) {
        out.push(path);
        break;
      }
    }
  }
  return out.sort();
}
