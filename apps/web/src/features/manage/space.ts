import { INTERVALS, hasUsageDetail } from '@skyferry/contract';

/** A random delay between the spec's 1 and 2 s. */
export function staggerDelay(random: () => number = Math.random): number {
  const { cloudSpaceStaggerMin: min, cloudSpaceStaggerMax: max } = INTERVALS;
  return min + Math.floor(random() * (max - min + 1));
}

/**
 * Refreshes each cloud's space one after another, each waiting a random 1 to 2 s (spec section 9),
 * skipping kinds without usage detail and expired clouds. Answers a function that stops it.
 */
export function refreshSpaceStaggered<C extends { id: string; flags: number; status: string }>(
  clouds: readonly C[],
  refresh: (cloud: C) => Promise<void>,
  options: {
    random?: () => number;
    setTimer?: (fn: () => void, ms: number) => unknown;
    clearTimer?: (t: unknown) => void;
  } = {},
): () => void {
  const setTimer = options.setTimer ?? ((fn, ms) => setTimeout(fn, ms));
  const clearTimer = options.clearTimer ?? ((t) => clearTimeout(t as ReturnType<typeof setTimeout>));
  const due = clouds.filter((c) => hasUsageDetail(c.flags) && c.status === 'authorized');
  let stopped = false;
  let timer: unknown;
  const step = (i: number) => {
    if (stopped || i >= due.length) return;
    timer = setTimer(() => {
      const cloud = due[i] as C;
      void refresh(cloud)
        .catch(() => undefined)
        .finally(() => step(i + 1));
    }, staggerDelay(options.random));
  };
  step(0);
  return () => {
    stopped = true;
    if (timer !== undefined) clearTimer(timer);
  };
}
