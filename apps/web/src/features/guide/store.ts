import { INTERVALS } from '@skyferry/contract';
import { createStore, useStore } from '../../lib/store.ts';
import { STORAGE_KEYS, readJson, writeJson } from '../../lib/storage.ts';

/** The user guide steps of spec section 2; each is remembered once seen. */
export const GUIDE_STEPS = [
  'add-drive',
  'add-drive-selectone',
  'menu-ecology',
  'menu-slimming',
  'migrate-1',
  'migrate-2',
  'sync-1',
  'sync-2',
] as const;
export type GuideStep = (typeof GUIDE_STEPS)[number];

export interface TipStep {
  /** Acknowledgement key: a guide step or any other tip id. */
  id: string;
  /** The element to highlight: a CSS selector or a getter. */
  target: string | (() => Element | null);
  title?: string;
  content: string;
  /** Default "Got it". */
  gotItLabel?: string;
  /** Shows the Skip button (default label "Skip"). */
  skip?: boolean;
  skipLabel?: string;
  /** mini: 200 px wide at most; small: 288 px (default). */
  size?: 'mini' | 'small';
  /** The tip belongs to a view that a click opens: it appears 300 ms after the click. */
  view?: boolean;
  /** Tips acknowledged together with this one when the user skips. */
  related?: string[];
}

export interface TipChain {
  steps: TipStep[];
  index: number;
  /** Show "n of m" in the panel. */
  showCount: boolean;
}

export interface GuideState {
  acknowledged: Record<string, true>;
  chain: TipChain | null;
  /** True while waiting the 300 ms before a view's tip. */
  pending: boolean;
}

export const guideStore = createStore<GuideState>({
  acknowledged: readJson<Record<string, true>>(STORAGE_KEYS.guide, {}),
  chain: null,
  pending: false,
});

export function useGuide<S>(selector: (s: GuideState) => S): S {
  return useStore(guideStore, selector);
}

export function isAcknowledged(id: string): boolean {
  return guideStore.getState().acknowledged[id] === true;
}

function acknowledge(ids: string[]): void {
  const acknowledged = { ...guideStore.getState().acknowledged };
  for (const id of ids) acknowledged[id] = true;
  guideStore.setState({ acknowledged });
  writeJson(STORAGE_KEYS.guide, acknowledged);
}

let delayTimer: ReturnType<typeof setTimeout> | undefined;

/**
 * Shows a chain of tips, leaving out the ones already acknowledged. Does nothing while another
 * chain is showing or when every tip was acknowledged. Returns whether a chain started.
 */
export function showTips(steps: TipStep[], options: { showCount?: boolean } = {}): boolean {
  const { chain } = guideStore.getState();
  if (chain) return false;
  const open = steps.filter((s) => !isAcknowledged(s.id));
  if (open.length === 0) return false;
  guideStore.setState({ chain: { steps: open, index: 0, showCount: options.showCount ?? open.length > 1 } });
  return true;
}

export function currentTip(state: GuideState = guideStore.getState()): TipStep | null {
  if (!state.chain || state.pending) return null;
  return state.chain.steps[state.chain.index] ?? null;
}

/**
 * Got it (action 'button') or a click on the highlighted element (action 'click'): acknowledges the
 * current tip and moves to the next; a next tip that belongs to a view waits 300 ms after a click.
 */
export function advanceTip(action: 'button' | 'click'): void {
  const { chain } = guideStore.getState();
  if (!chain) return;
  const current = chain.steps[chain.index];
  if (current) acknowledge([current.id]);
  const nextIndex = chain.index + 1;
  const next = chain.steps[nextIndex];
  if (!next) {
    guideStore.setState({ chain: null, pending: false });
    return;
  }
  if (action === 'click' && next.view) {
    guideStore.setState({ chain: { ...chain, index: nextIndex }, pending: true });
    clearTimeout(delayTimer);
    delayTimer = setTimeout(() => guideStore.setState({ pending: false }), INTERVALS.tipDelay);
    return;
  }
  guideStore.setState({ chain: { ...chain, index: nextIndex }, pending: false });
}

/** Skip: acknowledges the current tip, its related tips and all remaining ones, and hides the overlay. */
export function skipTips(): void {
  const { chain } = guideStore.getState();
  if (!chain) return;
  const rest = chain.steps.slice(chain.index);
  acknowledge([...rest.map((s) => s.id), ...rest.flatMap((s) => s.related ?? [])]);
  clearTimeout(delayTimer);
  guideStore.setState({ chain: null, pending: false });
}

/** Hides the overlay without acknowledging (e.g. the page it points at went away). */
export function hideTips(): void {
  clearTimeout(delayTimer);
  guideStore.setState({ chain: null, pending: false });
}

/** "Show the tips again" in the user guide: forgets every acknowledgement. */
export function resetGuide(): void {
  guideStore.setState({ acknowledged: {} });
  writeJson(STORAGE_KEYS.guide, {});
}
