import { Code, INTERVALS } from '@skyferry/contract';
import { ApiRequestError } from '../../api/client.ts';

export interface TokenRefresherOptions {
  /** Refreshes the tokens and stores them; rejects when the server refuses or cannot be reached. */
  refresh(): Promise<void>;
  /** Ends the session but keeps the auto-login data (spec section 4, Login). */
  lightLogout(): void;
  interval?: number;
  retries?: number;
  retryDelay?: number;
}

export interface TokenRefresher {
  start(): void;
  stop(): void;
  readonly running: boolean;
}

/** Whether a refresh failure must end the session at once (code 230011). */
export function isRefreshRejected(err: unknown): boolean {
  return err instanceof ApiRequestError && err.code === Code.REFRESH_REJECTED;
}

/**
 * Refreshes the access token every 30 minutes. A 230011 answer is a light logout at once; other
 * failures are retried up to 3 times 1 s apart, and then end in a light logout too.
 */
export function createTokenRefresher(options: TokenRefresherOptions): TokenRefresher {
  const interval = options.interval ?? INTERVALS.tokenRefresh;
  const retries = options.retries ?? INTERVALS.tokenRefreshRetries;
  const retryDelay = options.retryDelay ?? INTERVALS.tokenRefreshRetryDelay;
  let intervalTimer: ReturnType<typeof setInterval> | undefined;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let generation = 0;

  const stop = () => {
    generation += 1;
    if (intervalTimer !== undefined) clearInterval(intervalTimer);
    if (retryTimer !== undefined) clearTimeout(retryTimer);
    intervalTimer = undefined;
    retryTimer = undefined;
  };

  const fail = () => {
    stop();
    options.lightLogout();
  };

  const attempt = (retry: number, gen: number) => {
    options.refresh().then(
      () => undefined,
      (err: unknown) => {
        if (gen !== generation) return;
        if (isRefreshRejected(err)) return fail();
        if (retry >= retries) return fail();
        retryTimer = setTimeout(() => attempt(retry + 1, gen), retryDelay);
      },
    );
  };

  return {
    start() {
      stop();
      const gen = generation;
      intervalTimer = setInterval(() => {
        if (retryTimer !== undefined) clearTimeout(retryTimer);
        attempt(0, gen);
      }, interval);
    },
    stop,
    get running() {
      return intervalTimer !== undefined;
    },
  };
}
