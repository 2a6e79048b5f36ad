import { isRtl, message, MIN_PASSWORD_LENGTH, type Language } from '@skyferry/contract';
import { PAGE_STRINGS, type PageStrings } from './strings.ts';

export type AccountPage = 'signin' | 'signup' | 'signout' | 'forgot' | 'reset' | 'confirm-email';

/** Pages reached from a mailed link or the sign-in page's "Forgot password?": they post no message to a client. */
export const LINK_PAGES: ReadonlySet<AccountPage> = new Set(['forgot', 'reset', 'confirm-email']);

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
  /**
   * A mailed link's page: its token (well-formed) and what it is for: the address it confirms or
   * whose password it resets; `valid: false` when the link no longer works.
   */
  link?: { token: string; email: string; valid: true } | { valid: false } | undefined;
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

const TITLES: Record<AccountPage, keyof PageStrings> = {
  signin: 'signInTitle',
  signup: 'signUpTitle',
  signout: 'signOutTitle',
  forgot: 'forgotTitle',
  reset: 'resetTitle',
  'confirm-email': 'confirmEmailTitle',
};

/** A labelled input with its own error line (each field shows its problem at once, beside it). */
function field(id: string, label: string, input: string, options: { hint?: string } = {}): string {
  const described = [options.hint ? `${id}-hint` : '', `${id}-error`].filter(Boolean).join(' ');
  return `<label for="${id}">${escapeHtml(label)}</label>
        <input id="${id}" name="${id}" ${input} aria-describedby="${described}">
        ${options.hint ? `<p id="${id}-hint" class="hint">${escapeHtml(options.hint)}</p>` : ''}
        <p id="${id}-error" class="field-error"></p>`;
}

function emailField(t: PageStrings): string {
  return field('email', t.email, 'type="email" autocomplete="email" maxlength="254" required autofocus');
}

function newPasswordFields(t: PageStrings, label: string): string {
  return `${field(
    'password',
    label,
    `type="password" maxlength="256" required autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}"`,
    { hint: t.passwordHint },
  )}
        ${field('confirm', t.confirmPassword, 'type="password" maxlength="256" autocomplete="new-password" required')}`;
}

function tokenInput(o: PageOptions): string {
  return o.link?.valid ? `<input type="hidden" id="token" name="token" value="${escapeHtml(o.link.token)}">` : '';
}

/** The form part of the page. */
function body(o: PageOptions, t: PageStrings): string {
  const linkInvalid = `<p class="notice error" role="alert">${escapeHtml(
    o.link === undefined ? t.linkMissing : message(o.lang, 'account_link_invalid'),
  )}</p>`;
  const openApp = `<p><a href="/">${escapeHtml(t.openApp)}</a></p>`;
  const done = (extra: string) =>
    `<div id="done" class="notice" role="status" hidden><p id="done-text"></p>${extra}</div>`;
  switch (o.page) {
    case 'signout':
      return `<p class="notice" role="status">${escapeHtml(t.signedOut)}</p>
      <p class="links"><a href="${escapeHtml(pageLink('signin', o))}">${escapeHtml(t.signInLink)}</a></p>`;
    case 'forgot':
      return `<form id="account-form" novalidate>
        <p class="intro">${escapeHtml(t.forgotIntro)}</p>
        ${emailField(t)}
        <p id="error" class="error" role="alert" aria-live="assertive"></p>
        <button id="submit" type="submit">${escapeHtml(t.sendLink)}</button>
      </form>
      ${done('')}
      <p class="links back"><a href="${escapeHtml(pageLink('signin', o))}">${escapeHtml(t.backToSignIn)}</a></p>`;
    case 'reset':
      if (!o.link?.valid) {
        return `${linkInvalid}
      <p class="links"><a href="${escapeHtml(pageLink('forgot', o))}">${escapeHtml(t.forgotLink)}</a></p>`;
      }
      return `<form id="account-form" novalidate>
        ${tokenInput(o)}
        <p class="intro"><bdi>${escapeHtml(o.link.email)}</bdi></p>
        ${newPasswordFields(t, t.newPassword)}
        <p id="error" class="error" role="alert" aria-live="assertive"></p>
        <button id="submit" type="submit">${escapeHtml(t.setPassword)}</button>
      </form>
      ${done(openApp)}`;
    case 'confirm-email':
      if (!o.link?.valid) return linkInvalid;
      return `<form id="account-form" novalidate>
        ${tokenInput(o)}
        <p class="intro">${escapeHtml(t.confirmEmailIntro)}</p>
        <p class="address"><bdi>${escapeHtml(o.link.email)}</bdi></p>
        <p id="error" class="error" role="alert" aria-live="assertive"></p>
        <button id="submit" type="submit">${escapeHtml(t.confirmEmail)}</button>
      </form>
      ${done(openApp)}`;
    case 'signin':
    case 'signup': {
      const signup = o.page === 'signup';
      return `<form id="account-form" novalidate>
        ${emailField(t)}
        ${
          signup
            ? newPasswordFields(t, t.password)
            : field('password', t.password, 'type="password" maxlength="256" required autocomplete="current-password"')
        }
        ${signup ? '' : `<p class="forgot"><a id="forgot-link" href="${escapeHtml(pageLink('forgot', o))}">${escapeHtml(t.forgotLink)}</a></p>`}
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
  }
}

/** A server-rendered account page; its behaviour is in /account/assets/account.js (no inline script). */
export function renderAccountPage(o: PageOptions): string {
  const t = PAGE_STRINGS[o.lang];
  const title = t[TITLES[o.page]];
  const data = [
    `data-page="${o.page}"`,
    `data-lang="${o.lang}"`,
    `data-origin="${escapeHtml(o.origin ?? '')}"`,
    `data-nonce="${escapeHtml(o.nonce ?? '')}"`,
    `data-working="${escapeHtml(t.working)}"`,
    `data-network-error="${escapeHtml(t.networkError)}"`,
    `data-passwords-differ="${escapeHtml(t.passwordsDiffer)}"`,
    `data-email-empty="${escapeHtml(message(o.lang, 'email_empty'))}"`,
    `data-email-format="${escapeHtml(message(o.lang, 'email_format'))}"`,
    `data-password-short="${escapeHtml(message(o.lang, 'password_too_short', { min: MIN_PASSWORD_LENGTH }))}"`,
    `data-password-empty="${escapeHtml(message(o.lang, 'field_required', { field: t.password }))}"`,
    `data-min-password="${MIN_PASSWORD_LENGTH}"`,
  ].join(' ');
  // Pages that answer the client window need its origin; those of mailed links do not.
  const content =
    !o.origin && !LINK_PAGES.has(o.page)
      ? `<p class="notice error" role="alert">${escapeHtml(t.originRejected)}</p>`
      : body(o, t);
  return `<!doctype html>
<html lang="${o.lang === 'br' ? 'pt-BR' : o.lang}" dir="${isRtl(o.lang) ? 'rtl' : 'ltr'}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="/account/assets/account.css?v=${o.assetVersion}">
<script src="/account/assets/account.js?v=${o.assetVersion}" defer></script>
</head>
<body>
<main id="account" class="card" ${data}>
  <div class="brand" aria-hidden="true"><span class="logo"></span>Skyferry</div>
  <h1>${escapeHtml(title)}</h1>
  ${content}
</main>
</body>
</html>
`;
}
