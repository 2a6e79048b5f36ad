import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BUY_POLL_INTERVAL_MS, startBuyPolling } from './polling.ts';

describe('buy polling (ST-BUY)', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const setup = (activeAfter = Number.POSITIVE_INFINITY) => {
    const target = new EventTarget();
    let calls = 0;
    const refresh = vi.fn(async () => {
      calls++;
    });
    const licence = () => ({ paid: calls >= activeAfter, key: calls >= activeAfter ? 'new' : 'old' });
    startBuyPolling({ refresh, licence, target: target as unknown as Window });
    return { target, refresh };
  };

  it('polls nothing until the window regains focus, then at once and every 10 s, 5 more times', async () => {
    const { target, refresh } = setup();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(refresh).not.toHaveBeenCalled();
    target.dispatchEvent(new Event('focus'));
    await vi.advanceTimersByTimeAsync(0);
    expect(refresh).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(BUY_POLL_INTERVAL_MS - 1);
    expect(refresh).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(refresh).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(10 * BUY_POLL_INTERVAL_MS);
    expect(refresh).toHaveBeenCalledTimes(6);
    // A second focus does not start it again.
    target.dispatchEvent(new Event('focus'));
    await vi.advanceTimersByTimeAsync(10 * BUY_POLL_INTERVAL_MS);
    expect(refresh).toHaveBeenCalledTimes(6);
  });

  it('stops as soon as the licence is active', async () => {
    const { target, refresh } = setup(2);
    target.dispatchEvent(new Event('focus'));
    await vi.advanceTimersByTimeAsync(10 * BUY_POLL_INTERVAL_MS);
    expect(refresh).toHaveBeenCalledTimes(2);
  });
});
