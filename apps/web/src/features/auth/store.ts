import { createStore, useStore } from '../../lib/store.ts';
import type { Cloud } from '../session/types.ts';

/** Third-party cookie check state (spec section 4, Login). */
export type CookieCheck = 'unknown' | 'checking' | 'enabled' | 'blocked';

/** The account page the login panel shows (the panel is titled after it). */
export type LoginPage = 'signin' | 'signup' | 'forgot';
export const LOGIN_PAGES: readonly LoginPage[] = ['signin', 'signup', 'forgot'];

export interface AuthUiState {
  loginOpen: boolean;
  loginPage: LoginPage;
  /** The hidden logout frame's address while a logout runs. */
  logoutFrameSrc: string | null;
  /** Temporary clouds to offer for binding after a login, or null. */
  bindPrompt: Cloud[] | null;
  /** The sign-in nonce of the login that opened the bind prompt (the server asks for it). */
  bindNonce: string | null;
  cookieCheck: CookieCheck;
}

const initialAuthUi = (): AuthUiState => ({
  loginOpen: false,
  loginPage: 'signin',
  logoutFrameSrc: null,
  bindPrompt: null,
  bindNonce: null,
  cookieCheck: 'unknown',
});

export const authUiStore = createStore<AuthUiState>(initialAuthUi());

/** Back to the state of a fresh page (tests). */
export function resetAuthUi(): void {
  authUiStore.setState(initialAuthUi());
}

export function useAuthUi<S>(selector: (s: AuthUiState) => S): S {
  return useStore(authUiStore, selector);
}
