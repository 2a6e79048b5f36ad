import { SHELL_COOKIES, type Language, type ShellAccount } from '@skyferry/contract';

const YEAR = 365 * 24 * 3600;

function setCookie(name: string, value: string): void {
  if (typeof document === 'undefined') return;
  document.cookie = `${name}=${value}; Path=/; Max-Age=${YEAR}; SameSite=Lax`;
}

/** The next page load's shell (sent by the server before any script runs) in this language. */
export function rememberShellLanguage(lang: Language): void {
  setCookie(SHELL_COOKIES.language, lang);
}

/** The next page load's shell for a signed-in user or a visitor. */
export function rememberShellAccount(account: ShellAccount): void {
  setCookie(SHELL_COOKIES.account, account);
}
