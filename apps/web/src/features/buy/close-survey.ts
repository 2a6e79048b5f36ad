import type { PopupNpsRules } from '@skyferry/contract';
import { STORAGE_KEYS, readJson, writeJson } from '../../lib/storage.ts';
import { createStore, useStore } from '../../lib/store.ts';

/** Spec section 9: the survey frame closes if it has not loaded within 5 s. */
export const SURVEY_LOAD_TIMEOUT_MS = 5_000;
const DAY = 86_400_000;

export interface SurveyFacts {
  paid: boolean;
  hasClouds: boolean;
  usedTransfer: boolean;
}

/**
 * ST-SURV: whether the survey shows on client close. interval_day below 0 means always; otherwise
 * the last time it showed must be more than interval_day days ago. Every condition listed must hold
 * (0 paid, 1 has clouds, 2 has used migrate or sync).
 */
export function closeSurveyAllowed(
  rules: PopupNpsRules | null | undefined,
  lastShownAt: number | null,
  now: number,
  facts: SurveyFacts,
): boolean {
  if (!rules) return false;
  if (rules.interval_day >= 0 && lastShownAt !== null && now - lastShownAt <= rules.interval_day * DAY) return false;
  const holds: Record<number, boolean> = { 0: facts.paid, 1: facts.hasClouds, 2: facts.usedTransfer };
  return rules.condition_index_list.every((i) => holds[i] ?? false);
}

/** Notes that the user ran a migration or sync (condition 2 of the close survey). */
export function noteTransferUsed(): void {
  writeJson(STORAGE_KEYS.usedTransfer, true);
}

export function transferUsed(): boolean {
  return readJson<boolean>(STORAGE_KEYS.usedTransfer, false);
}

interface CloseSurveyState {
  /** The survey is asked for; `then` closes the window once it is done with. */
  open: boolean;
  then: (() => void) | null;
}

const store = createStore<CloseSurveyState>({ open: false, then: null });

export function useCloseSurvey<S>(selector: (s: CloseSurveyState) => S): S {
  return useStore(store, selector);
}

/** On client close: the survey when the rules allow (remembering when), else `close` at once. */
export function closeWithSurvey(allowed: boolean, close: () => void, now = Date.now()): void {
  if (!allowed) {
    close();
    return;
  }
  writeJson(STORAGE_KEYS.closeSurveyShownAt, now);
  store.setState({ open: true, then: close });
}

/** The survey is done with (closed, answered, or it did not load in time): the window closes. */
export function finishCloseSurvey(): void {
  const { then } = store.getState();
  store.setState({ open: false, then: null });
  then?.();
}

export function lastCloseSurveyAt(): number | null {
  return readJson<number | null>(STORAGE_KEYS.closeSurveyShownAt, null);
}
