import { Code, INTERVALS } from '@skyferry/contract';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiRequestError, NetworkError } from '../../api/client.ts';
import { createTokenRefresher } from './refresher.ts';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

const flush = () => vi.advanceTimersByTimeAsync(0);

describe('token refresh', () => {
  it('refreshes every 30 minutes, not before', async () => {
    const refresh = vi.fn(async () => undefined);
    const lightLogout = vi.fn();
    const r = createTokenRefresher({ refresh, lightLogout });
    r.start();
    await vi.advanceTimersByTimeAsync(INTERVALS.tokenRefresh - 1);
    expect(refresh).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(refresh).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(30 * 60_000);
    expect(refresh).toHaveBeenCalledTimes(2);
    expect(lightLogout).not.toHaveBeenCalled();
    r.stop();
    await vi.advanceTimersByTimeAsync(60 * 60_000);
    expect(refresh).toHaveBeenCalledTimes(2);
  });

  it('retries other failures 3 times 1 s apart, then does a light logout', async () => {
    const refresh = vi.fn(async () => {
      throw new NetworkError('Network Error', false);
    });
    const lightLogout = vi.fn();
    const r = createTokenRefresher({ refresh, lightLogout });
    r.start();
    await vi.advanceTimersByTimeAsync(INTERVALS.tokenRefresh);
    expect(refresh).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(999);
    expect(refresh).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(refresh).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(1000);
    expect(refresh).toHaveBeenCalledTimes(3);
    expect(lightLogout).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1000);
    expect(refresh).toHaveBeenCalledTimes(4);
    await flush();
    expect(lightLogout).toHaveBeenCalledTimes(1);
    expect(r.running).toBe(false);
    await vi.advanceTimersByTimeAsync(2 * INTERVALS.tokenRefresh);
    expect(refresh).toHaveBeenCalledTimes(4);
  });

  it('keeps the session when a retry succeeds', async () => {
    let calls = 0;
    const refresh = vi.fn(async () => {
      calls += 1;
      if (calls < 3) throw new ApiRequestError(Code.INTERNAL, 'boom', 500, null);
    });
    const lightLogout = vi.fn();
    const r = createTokenRefresher({ refresh, lightLogout });
    r.start();
    await vi.advanceTimersByTimeAsync(INTERVALS.tokenRefresh + 2000);
    expect(refresh).toHaveBeenCalledTimes(3);
    expect(lightLogout).not.toHaveBeenCalled();
    expect(r.running).toBe(true);
    r.stop();
  });

  it('does a light logout at once on code 230011, without retrying', async () => {
    const refresh = vi.fn(async () => {
      throw new ApiRequestError(Code.REFRESH_REJECTED, 'rejected', 401, null);
    });
    const lightLogout = vi.fn();
    const r = createTokenRefresher({ refresh, lightLogout });
    r.start();
    await vi.advanceTimersByTimeAsync(INTERVALS.tokenRefresh);
    await flush();
    expect(lightLogout).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(5000);
    expect(refresh).toHaveBeenCalledTimes(1);
  });
});
