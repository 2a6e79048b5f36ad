import type { ProviderError } from './api/errors.ts';
import { canceled, toProviderError } from './api/errors.ts';

export interface PacerOptions {
  /** First backoff ceiling in ms; each retry doubles it (full jitter picks a delay below it). */
  minSleepMs?: number;
  /** Largest backoff ceiling in ms. */
  maxSleepMs?: number;
  /** Retries after the first attempt. */
  retries?: number;
  /** Longest Retry-After honoured, in ms (a service asking for longer fails the call instead). */
  maxRetryAfterMs?: number;
  /** Requests per second for the whole account; unset: no limit. */
  rateLimitPerSecond?: number;
  /** Requests allowed in a burst above the rate (default: one second's worth, at least 1). */
  burst?: number;
  /** Maps any thrown value to a ProviderError (default: toProviderError). */
  mapError?: (err: unknown) => ProviderError;
  /** Random source in [0, 1) for the jitter (tests pass a fixed one). */
  random?: () => number;
}

/** Resolves after `ms`, or rejects with `canceled` as soon as the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(canceled());
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(canceled());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Paces calls to one account (after rclone's pacer): a token bucket limits the request rate; a
 * call failing with a `retry`-class error is tried again after an exponential backoff with full
 * jitter, or after the service's Retry-After, which also holds back every other call of the account.
 * Errors of other classes are thrown at once. An AbortSignal stops waiting and retrying.
 */
export class Pacer {
  readonly minSleepMs: number;
  readonly maxSleepMs: number;
  readonly retries: number;
  readonly maxRetryAfterMs: number;
  private readonly intervalMs: number;
  private readonly burst: number;
  private readonly mapError: (err: unknown) => ProviderError;
  private readonly random: () => number;
  /** Theoretical arrival time of the next request (GCRA form of the token bucket). */
  private tat = 0;
  /** No call starts before this time (set by Retry-After). */
  private pausedUntil = 0;

  constructor(opts: PacerOptions = {}) {
    this.minSleepMs = opts.minSleepMs ?? 100;
    this.maxSleepMs = opts.maxSleepMs ?? 20_000;
    this.retries = opts.retries ?? 6;
    this.maxRetryAfterMs = opts.maxRetryAfterMs ?? 5 * 60_000;
    const rate = opts.rateLimitPerSecond;
    this.intervalMs = rate && rate > 0 ? 1000 / rate : 0;
    this.burst = Math.max(1, Math.floor(opts.burst ?? (rate && rate > 0 ? rate : 1)));
    this.mapError = opts.mapError ?? toProviderError;
    this.random = opts.random ?? Math.random;
  }

  /** Waits for the account's pause and a token of the rate limit. */
  async acquire(signal?: AbortSignal): Promise<void> {
    for (;;) {
      const now = Date.now();
      if (this.pausedUntil > now) {
        await sleep(this.pausedUntil - now, signal);
        continue;
      }
      if (this.intervalMs === 0) return;
      // Reserve the slot now so waiting callers are served in order.
      const allowAt = this.tat - (this.burst - 1) * this.intervalMs;
      this.tat = Math.max(this.tat, now) + this.intervalMs;
      await sleep(allowAt - now, signal);
      return;
    }
  }

  /** The delay before retry number `attempt` (0-based), without Retry-After. */
  backoffMs(attempt: number): number {
    const ceiling = Math.min(this.maxSleepMs, this.minSleepMs * 2 ** attempt);
    return Math.floor(this.random() * ceiling);
  }

  /** Runs `fn` under the rate limit, retrying `retry`-class failures. */
  async call<T>(fn: (attempt: number) => Promise<T>, opts: { signal?: AbortSignal } = {}): Promise<T> {
    const { signal } = opts;
    for (let attempt = 0; ; attempt++) {
      await this.acquire(signal);
      try {
        return await fn(attempt);
      } catch (err) {
        if (signal?.aborted) throw canceled();
        const pe = this.mapError(err);
        if (pe.retry !== 'retry' || attempt >= this.retries) throw pe;
        let delay: number;
        if (pe.retryAfterMs !== undefined) {
          if (pe.retryAfterMs > this.maxRetryAfterMs) throw pe;
          delay = pe.retryAfterMs;
          this.pausedUntil = Math.max(this.pausedUntil, Date.now() + delay);
        } else {
          delay = this.backoffMs(attempt);
        }
        await sleep(delay, signal);
      }
    }
  }
}

const accountPacers = new Map<string, Pacer>();

/** One pacer per account key, shared by every provider instance of that account in this process. */
export function pacerFor(accountKey: string, opts: PacerOptions = {}): Pacer {
  let p = accountPacers.get(accountKey);
  if (!p) {
    p = new Pacer(opts);
    accountPacers.set(accountKey, p);
  }
  return p;
}

/** Parses an HTTP Retry-After header (seconds or an HTTP date) into milliseconds. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
