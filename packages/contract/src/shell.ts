import { LANGUAGES, type Language } from './languages.ts';

/**
 * The app shell: the header and menu as the web app first renders them, prerendered by its build
 * per language and account kind (`shell/<lang>-<account>.html` in the build) so that the server
 * sends them as the page. The app sets the cookies; the server reads them to pick the file.
 */
export type ShellAccount = 'visitor' | 'member';
export const SHELL_ACCOUNTS: readonly ShellAccount[] = ['visitor', 'member'];

/** Hints only, not credentials: the language and whether someone is signed in (both kept in local storage). */
export const SHELL_COOKIES = { language: 'sf_lang', account: 'sf_account' } as const;

/** Where the build writes the shells and the list of routes they are for. */
export const SHELL_DIR = 'shell';
export const SHELL_MANIFEST = 'shell/routes.json';

export function shellFile(lang: Language, account: ShellAccount): string {
  return `${SHELL_DIR}/${lang}-${account}.html`;
}

export function shellVariants(): Array<{ lang: Language; account: ShellAccount }> {
  return LANGUAGES.flatMap((lang) => SHELL_ACCOUNTS.map((account) => ({ lang, account })));
}
