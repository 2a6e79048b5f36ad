import { isRtl, MIN_PASSWORD_LENGTH, type Language } from '@skyferry/contract';
import { PAGE_STRINGS } from './strings.ts';

export type AccountPage = 'signin' | 'signup' | 'signout';

export interface PageOptions {
  page: AccountPage;
  lang: Language;
  /** The validated client origin messages go to; undefined when the requested one is not allowed. */
  origin: string | undefined;
  /** The no-cookie variant (the pages never need cookies; the flag is carried along in links). */
  noCookies: boolean;
  /** The unvalidated origin parameter, carried to the sibling page's link. */
  requestedOrigin: string | undefined;
  /** The client's sign-in nonce (well-formed), carried to the sign-in, the result and the sibling page. */
  nonce?: string | undefined;
  assetVersion: string;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

function pageLink(page: AccountPage, o: PageOptions): string {
  const q = new URLSearchParams();
  if (o.requestedOrigin) q.set('origin', o.requestedOrigin);
  q.set('lang', o.lang);
  if (o.noCookies) q.set('cookies', '0');
  if (o.nonce && page !== 'signout') q.set('nonce', o.nonce);
  return `/account/${page}?${q.toString()}`;
}

/** A server-rendered account page; its behaviour is in /account/assets/account.js (no inline script). */
export function renderAccountPage(o: PageOptions): string {
  const t = PAGE_STRINGS[o.lang];
  const title = o.page === 'signin' ? t.signInTitle : o.page === 'signup' ? t.signUpTitle : t.signOutTitle;
  const data = [
    `data-page="${o.page}"`,
    `data-lang="${o.lang}"`,
    `data-origin="${escapeHtml(o.origin ?? '')}"`,
    `data-nonce="${escapeHtml(o.nonce ?? '')}"`,
    `data-working="${escapeHtml(t.working)}"`,
    `data-network-error="${escapeHtml(t.networkError)}"`,
    `data-passwords-differ="${escapeHtml(t.passwordsDiffer)}"`,
  ].join(' ');
  let body: string;
  if (!o.origin) {
    body = `<p class="notice error" role="alert">${escapeHtml(t.originRejected)}</p>`;
  } else if (o.page === 'signout') {
    body = `<p class="notice" role="status">${escapeHtml(t.signedOut)}</p>
      <p class="links"><a href="${escapeHtml(pageLink('signin', o))}">${escapeHtml(t.signInLink)}</a></p>`;
  } else {
    const signup = o.page === 'signup';
    body = `<form id="account-form" novalidate>
        <label for="email">${escapeHtml(t.email)}</label>
        <input id="email" name="email" type="email" autocomplete="email" maxlength="254" required autofocus>
        <label for="password">${escapeHtml(t.password)}</label>
        <input id="password" name="password" type="password" maxlength="256" required
          autocomplete="${signup ? 'new-password' : 'current-password'}"${signup ? ` minlength="${MIN_PASSWORD_LENGTH}" aria-describedby="password-hint"` : ''}>
        ${signup ? `<p id="password-hint" class="hint">${escapeHtml(t.passwordHint)}</p>` : ''}
        ${
          signup
            ? `<label for="confirm">${escapeHtml(t.confirmPassword)}</label>
        <input id="confirm" name="confirm" type="password" maxlength="256" autocomplete="new-password" required>`
            : ''
        }
        <p id="error" class="error" role="alert" aria-live="assertive"></p>
        <button id="submit" type="submit">${escapeHtml(signup ? t.signUp : t.signIn)}</button>
      </form>
      <div id="done" class="notice" role="status" hidden>
        <p>${escapeHtml(t.signedIn)}</p>
        <p><a id="open-app" href="/">${escapeHtml(t.openApp)}</a></p>
      </div>
      <p class="links">${
        signup
          ? `${escapeHtml(t.haveAccount)} <a href="${escapeHtml(pageLink('signin', o))}">${escapeHtml(t.signInLink)}</a>`
          : `${escapeHtml(t.noAccount)} <a href="${escapeHtml(pageLink('signup', o))}">${escapeHtml(t.createAccount)}</a>`
      }</p>`;
  }
  return `<!doctype html>
<html lang="${o.lang === 'br' ? 'pt-BR' : o.lang}" dir="${isRtl(o.lang) ? 'rtl' : 'ltr'}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="/account/assets/account.css?v=${o.assetVersion}">
<script src="/account/assets/account.js?v=${o.assetVersion}" defer></script>
</head>
<body>
<main id="account" class="card" ${data}>
  <div class="brand" aria-hidden="true"><span class="logo"></span>Skyferry</div>
  <h1>${escapeHtml(title)}</h1>
  ${body}
</main>
</body>
</html>
`;
}
