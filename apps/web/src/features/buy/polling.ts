import { isPaid } from '@skyferry/contract';
import { refreshMe } from '../session/actions.ts';
import { sessionStore } from '../session/store.ts';

/** Spec section 9: after Buy, user info is polled every 10 s, about 5 more times. */
export const BUY_POLL_INTERVAL_MS = 10_000;
export const BUY_POLL_MORE_TIMES = 5;

export interface BuyPollDeps {
  /** Fetches user info (GET /api/users/me) into the session. */
  refresh: () => Promise<void>;
  /** What the licence looks like now: a change of it, while paid, means the purchase went through. */
  licence: () => { paid: boolean; key: string };
  target: Pick<Window, 'addEventListener' | 'removeEventListener'>;
}

const defaultDeps = (): BuyPollDeps => ({
  refresh: refreshMe,
  licence: () => {
    const { info, subscribe, data_packet } = sessionStore.getState().user;
    return {
      paid: isPaid(info),
      key: JSON.stringify([info?.expire, subscribe.length, data_packet.additional.length]),
    };
  },
  target: window,
});

let stopCurrent: (() => void) | undefined;

/**
 * ST-BUY: after Buy is clicked and the window regains focus (the buyer comes back from the checkout
 * window), user info is polled: at once, then every 10 s up to 5 more times, until the licence is
 * active (paid, and changed since Buy for a renewal or a packet). A new Buy starts over.
 */
export function startBuyPolling(deps: BuyPollDeps = defaultDeps()): () => void {
  stopCurrent?.();
  const before = deps.licence();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const done = () => {
    const now = deps.licence();
    return now.paid && (!before.paid || now.key !== before.key);
  };
  const poll = async (more: number) => {
    if (stopped) return;
    await deps.refresh().catch(() => undefined);
    if (stopped || done() || more <= 0) return stop();
    timer = setTimeout(() => void poll(more - 1), BUY_POLL_INTERVAL_MS);
  };
  const onFocus = () => {
    deps.target.removeEventListener('focus', onFocus);
    void poll(BUY_POLL_MORE_TIMES);
  };
  const stop = () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    deps.target.removeEventListener('focus', onFocus);
    if (stopCurrent === stop) stopCurrent = undefined;
  };
  deps.target.addEventListener('focus', onFocus);
  stopCurrent = stop;
  return stop;
}
