import { canceled, ProviderError } from '../../api/errors.ts';

/**
 * Groups requests made close together into one call, the way Dropbox wants commits made
 * (upload_session/finish_batch_v2, delete_batch): a commit takes the namespace write lock, so
 * many single commits at once fail with too_many_write_operations while one batch takes the lock
 * once. A batch goes when `size` are waiting, after `windowMs` without a new arrival, or when its
 * first has waited 5 windows;
 * one batch is in flight at a time (Dropbox asks batch jobs of an account to run serially), and
 * what arrives meanwhile forms the next batch. Each caller gets its own result or its own error.
 * An entry the service refused for write contention goes into a later batch (up to `maxTries`).
 * A caller whose signal aborts while waiting leaves the batch; once sent, it stops waiting (the
 * service may still commit it).
 */

/** What `send` answers for one item: its value, or its error (retry: try it again in a later batch). */
export type BatchResult<R> = { value: R } | { error: ProviderError; retry?: boolean };

interface Item<T, R> {
  value: T;
  resolve: (r: R) => void;
  reject: (e: unknown) => void;
  settled: boolean;
  tries: number;
  cleanup: () => void;
}

export class Batcher<T, R> {
  readonly size: number;
  readonly windowMs: number;
  private readonly send: (values: T[]) => Promise<Array<BatchResult<R>>>;
  private readonly maxTries: number;
  private queue: Array<Item<T, R>> = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** When the oldest waiting item arrived. */
  private oldest: number | undefined;
  private inFlight = false;
  /** Batches sent (tests and logs). */
  batches = 0;

  constructor(opts: {
    size: number;
    windowMs: number;
    send: (values: T[]) => Promise<Array<BatchResult<R>>>;
    maxTries?: number;
  }) {
    this.size = Math.max(1, opts.size);
    this.windowMs = Math.max(0, opts.windowMs);
    this.send = opts.send;
    this.maxTries = opts.maxTries ?? 5;
  }

  add(value: T, signal?: AbortSignal): Promise<R> {
    if (signal?.aborted) return Promise.reject(canceled());
    return new Promise<R>((resolve, reject) => {
      const item: Item<T, R> = { value, resolve, reject, settled: false, tries: 0, cleanup: () => undefined };
      if (signal) {
        const onAbort = () => {
          this.queue = this.queue.filter((i) => i !== item);
          this.settle(item, () => reject(canceled()));
        };
        signal.addEventListener('abort', onAbort, { once: true });
        item.cleanup = () => signal.removeEventListener('abort', onAbort);
      }
      this.queue.push(item);
      this.schedule();
    });
  }

  private settle(item: Item<T, R>, fn: () => void): void {
    if (item.settled) return;
    item.settled = true;
    item.cleanup();
    fn();
  }

  /**
   * Sends when `size` are waiting, when nothing new arrived for `windowMs` (the writers close
   * together have all arrived), or when the oldest has waited 5 windows.
   */
  private schedule(): void {
    if (this.inFlight) return;
    if (this.queue.length >= this.size) return this.flush();
    if (!this.queue.length) return;
    const now = Date.now();
    this.oldest ??= now;
    const wait = Math.min(this.windowMs, this.oldest + 5 * this.windowMs - now);
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.flush();
      },
      Math.max(0, wait),
    );
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.inFlight) return;
    const items = this.queue.splice(0, this.size).filter((i) => !i.settled);
    this.oldest = this.queue.length ? Date.now() : undefined;
    if (!items.length) return;
    this.inFlight = true;
    this.batches++;
    void this.send(items.map((i) => i.value))
      .then(
        (results) => {
          items.forEach((item, k) => {
            const r = results[k];
            if (!r) {
              const e = new ProviderError('server', `Dropbox: the batch answered ${results.length} of ${items.length}`);
              return this.settle(item, () => item.reject(e));
            }
            if ('value' in r) return this.settle(item, () => item.resolve(r.value));
            if (r.retry && !item.settled && ++item.tries < this.maxTries) {
              this.queue.push(item);
              return;
            }
            this.settle(item, () => item.reject(r.error));
          });
        },
        (err: unknown) => {
          for (const item of items) this.settle(item, () => item.reject(err));
        },
      )
      .finally(() => {
        this.inFlight = false;
        this.schedule();
      });
  }
}
