import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ProviderError } from './api/errors.ts';
import { Pacer, pacerFor, parseRetryAfter } from './pacer.ts';

describe('Pacer', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2030-01-01T00:00:00Z'));
  });
  afterEach(() => vi.useRealTimers());

  it('retries retry-class errors with exponential backoff and full jitter, then succeeds', async () => {
    const pacer = new Pacer({ minSleepMs: 100, maxSleepMs: 1000, random: () => 0.5 });
    const starts: number[] = [];
    const t0 = Date.now();
    const result = pacer.call(async (attempt) => {
      starts.push(Date.now() - t0);
      if (attempt < 4) throw new ProviderError('server', 'boom');
      return 'done';
    });
    await vi.runAllTimersAsync();
    await expect(result).resolves.toBe('done');
    // Ceilings 100, 200, 400, 800 (capped at 1000); jitter 0.5 -> sleeps 50, 100, 200, 400.
    expect(starts).toEqual([0, 50, 150, 350, 750]);
  });

  it('caps the backoff ceiling at maxSleepMs and keeps jitter within it', () => {
    let r = 0.999;
    const pacer = new Pacer({ minSleepMs: 100, maxSleepMs: 1000, random: () => r });
    expect(pacer.backoffMs(0)).toBe(99);
    expect(pacer.backoffMs(10)).toBe(999);
    r = 0;
    expect(pacer.backoffMs(10)).toBe(0);
  });

  it('does not retry no_retry or fatal errors', async () => {
    const pacer = new Pacer();
    let calls = 0;
    const notFound = pacer.call(async () => {
      calls++;
      throw new ProviderError('not_found', 'nope');
    });
    await expect(notFound).rejects.toMatchObject({ code: 'not_found' });
    const fatal = pacer.call(async () => {
      calls++;
      throw new ProviderError('auth_invalid', 'bad key');
    });
    await expect(fatal).rejects.toMatchObject({ code: 'auth_invalid' });
    expect(calls).toBe(2);
  });

  it('gives up after the configured retries with the last error', async () => {
    const pacer = new Pacer({ retries: 2, random: () => 0 });
    let calls = 0;
    const p = pacer.call(async () => {
      calls++;
      throw new ProviderError('network', `fail ${calls}`);
    });
    const settled = expect(p).rejects.toMatchObject({ code: 'network', message: 'fail 3' });
    await vi.runAllTimersAsync();
    await settled;
    expect(calls).toBe(3);
  });

  it('honours Retry-After and holds back other calls of the account meanwhile', async () => {
    const pacer = new Pacer({ random: () => 0 });
    const t0 = Date.now();
    let first = true;
    const times: Record<string, number[]> = { a: [], b: [] };
    const a = pacer.call(async () => {
      times.a!.push(Date.now() - t0);
      if (first) {
        first = false;
        throw new ProviderError('rate_limited', 'slow down', { retryAfterMs: 3000 });
      }
      return 'a';
    });
    await vi.advanceTimersByTimeAsync(10);
    const b = pacer.call(async () => {
      times.b!.push(Date.now() - t0);
      return 'b';
    });
    await vi.runAllTimersAsync();
    await expect(Promise.all([a, b])).resolves.toEqual(['a', 'b']);
    expect(times.a).toEqual([0, 3000]);
    expect(times.b).toEqual([3000]);
  });

  it('fails at once when Retry-After is longer than the pacer accepts', async () => {
    const pacer = new Pacer({ maxRetryAfterMs: 1000 });
    let calls = 0;
    const p = pacer.call(async () => {
      calls++;
      throw new ProviderError('rate_limited', 'come back tomorrow', { retryAfterMs: 86_400_000 });
    });
    await expect(p).rejects.toMatchObject({ code: 'rate_limited' });
    expect(calls).toBe(1);
  });

  it('limits the request rate with a token bucket and a burst', async () => {
    const pacer = new Pacer({ rateLimitPerSecond: 10, burst: 2 });
    const t0 = Date.now();
    const starts: number[] = [];
    const calls = Array.from({ length: 6 }, () =>
      pacer.call(async () => {
        starts.push(Date.now() - t0);
      }),
    );
    await vi.runAllTimersAsync();
    await Promise.all(calls);
    // Two at once (the burst), then one every 100 ms.
    expect(starts).toEqual([0, 0, 100, 200, 300, 400]);
  });

  it('an AbortSignal stops a backoff sleep and the rate-limit wait', async () => {
    const pacer = new Pacer({ minSleepMs: 10_000, random: () => 0.99 });
    const ac = new AbortController();
    let calls = 0;
    const p = pacer.call(
      async () => {
        calls++;
        throw new ProviderError('server', 'boom');
      },
      { signal: ac.signal },
    );
    const settled = expect(p).rejects.toMatchObject({ code: 'canceled' });
    await vi.advanceTimersByTimeAsync(500);
    ac.abort();
    await settled;
    expect(calls).toBe(1);

    const limited = new Pacer({ rateLimitPerSecond: 1, burst: 1 });
    await limited.call(async () => 1);
    const ac2 = new AbortController();
    const waiting = limited.call(async () => 2, { signal: ac2.signal });
    const settled2 = expect(waiting).rejects.toMatchObject({ code: 'canceled' });
    await vi.advanceTimersByTimeAsync(100);
    ac2.abort();
    await settled2;
  });

  it('maps foreign errors (network codes) to retry-class ProviderErrors', async () => {
    const pacer = new Pacer({ random: () => 0 });
    let calls = 0;
    const p = pacer.call(async () => {
      calls++;
      if (calls === 1) throw Object.assign(new Error('reset'), { code: 'ECONNRESET' });
      return 'ok';
    });
    await vi.runAllTimersAsync();
    await expect(p).resolves.toBe('ok');
    expect(calls).toBe(2);
  });

  it('shares one pacer per account key', () => {
    expect(pacerFor('acct-1')).toBe(pacerFor('acct-1'));
    expect(pacerFor('acct-1')).not.toBe(pacerFor('acct-2'));
  });

  it('parses Retry-After seconds and dates', () => {
    expect(parseRetryAfter('7')).toBe(7000);
    expect(parseRetryAfter('1.5')).toBe(1500);
    const now = Date.parse('2030-01-01T00:00:00Z');
    expect(parseRetryAfter('Tue, 01 Jan 2030 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});
