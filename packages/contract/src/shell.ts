import { LANGUAGES, type Language } from './languages.ts';

/**
 * The app shell: the header and menu as the web app first renders them, prerendered by its build
 * per language, account kind and highlighted menu entry (`shell/<lang>-<account>-<menu>.html` in
 * the build) so that the server sends them as the page. The app sets the cookies; the server reads
 * them to pick the file.
 */
export type ShellAccount = 'visitor' | 'member';
export const SHELL_ACCOUNTS: readonly ShellAccount[] = ['visitor', 'member'];

/** Hints only, not credentials: the language and whether someone is signed in (both kept in local storage). */
export const SHELL_COOKIES = { language: 'sf_lang', account: 'sf_account' } as const;

/** Where the build writes the shells and the list of routes they are for. */
export const SHELL_DIR = 'shell';
export const SHELL_MANIFEST = 'shell/routes.json';

/** The build's list: each route (`/tasks/:id`) the shell is for, and which menu entry it highlights. */
export interface ShellManifest {
  routes: Array<{ path: string; menu: string }>;
}

/** `menu`: the highlighted menu entry's name (`transfer`), or `none`. */
export function shellFile(lang: Language, account: ShellAccount, menu: string): string {
  return `${SHELL_DIR}/${lang}-${account}-${menu}.html`;
}

export function shellVariants(): Array<{ lang: Language; account: ShellAccount }> {
  return LANGUAGES.flatMap((lang) => SHELL_ACCOUNTS.map((account) => ({ lang, account })));
}
