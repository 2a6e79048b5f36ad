import { createStore, useStore } from '../../lib/store.ts';
import type { Cloud } from '../session/types.ts';

/** Third-party cookie check state (spec section 4, Login). */
export type CookieCheck = 'unknown' | 'checking' | 'enabled' | 'blocked';

export interface AuthUiState {
  loginOpen: boolean;
  /** The hidden logout frame's address while a logout runs. */
  logoutFrameSrc: string | null;
  /** Temporary clouds to offer for binding after a login, or null. */
  bindPrompt: Cloud[] | null;
  cookieCheck: CookieCheck;
}

export const authUiStore = createStore<AuthUiState>({
  loginOpen: false,
  logoutFrameSrc: null,
  bindPrompt: null,
  cookieCheck: 'unknown',
});

export function useAuthUi<S>(selector: (s: AuthUiState) => S): S {
  return useStore(authUiStore, selector);
}
