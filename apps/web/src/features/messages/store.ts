import { createStore, useStore } from '../../lib/store.ts';

export type ConfirmResult = 'yes' | 'no' | 'third';

export interface ConfirmOptions {
  title?: string;
  message: string;
  /** Default "Yes". */
  yesLabel?: string;
  /** Default "No". */
  noLabel?: string;
  /** An optional third button; resolves 'third'. */
  thirdLabel?: string;
  /** Show the Yes button in red (destructive actions). */
  danger?: boolean;
}

export interface ErrorOptions {
  title?: string;
  message: string;
  /** Default "OK". */
  buttonLabel?: string;
}

export interface ReauthorizeOptions {
  /** The cloud whose authorisation expired, shown in the title. */
  cloudName?: string;
  message?: string;
}

export type DialogRequest =
  | { id: number; kind: 'confirm'; options: ConfirmOptions; resolve: (r: ConfirmResult) => void }
  | { id: number; kind: 'error'; options: ErrorOptions; resolve: () => void }
  | { id: number; kind: 'reauthorize'; options: ReauthorizeOptions; resolve: (reauthorize: boolean) => void };

export interface MessagesState {
  dialogs: DialogRequest[];
  /** How many blocking operations are under way; the global loading overlay shows while > 0. */
  loading: number;
}

export const messagesStore = createStore<MessagesState>({ dialogs: [], loading: 0 });

export function useMessages<S>(selector: (s: MessagesState) => S): S {
  return useStore(messagesStore, selector);
}

let nextId = 1;

function push(request: DialogRequest): void {
  messagesStore.setState((s) => ({ dialogs: [...s.dialogs, request] }));
}

export function closeDialog(id: number): void {
  messagesStore.setState((s) => ({ dialogs: s.dialogs.filter((d) => d.id !== id) }));
}

/** The generic confirm: Yes / No and an optional third button. Closing it counts as No. */
export function confirm(options: ConfirmOptions): Promise<ConfirmResult> {
  return new Promise((resolve) => push({ id: nextId++, kind: 'confirm', options, resolve }));
}

/** The error variant: a message and one button. */
export function showError(options: ErrorOptions): Promise<void> {
  return new Promise((resolve) => push({ id: nextId++, kind: 'error', options, resolve }));
}

/**
 * "Authorization has expired, please reauthorize." with a Reauthorize button; resolves true when
 * the user chose to reauthorize.
 */
export function showReauthorize(options: ReauthorizeOptions = {}): Promise<boolean> {
  return new Promise((resolve) => push({ id: nextId++, kind: 'reauthorize', options, resolve }));
}

export function showLoading(): void {
  messagesStore.setState((s) => ({ loading: s.loading + 1 }));
}

export function hideLoading(): void {
  messagesStore.setState((s) => ({ loading: Math.max(0, s.loading - 1) }));
}

/** Shows the global loading overlay while a blocking operation runs. */
export async function withLoading<T>(work: Promise<T> | (() => Promise<T>)): Promise<T> {
  showLoading();
  try {
    return await (typeof work === 'function' ? work() : work);
  } finally {
    hideLoading();
  }
}
