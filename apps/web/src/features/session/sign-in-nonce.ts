/**
 * The sign-in nonce: a random value this tab makes when it opens the sign-in, keeps in session
 * storage (it survives the no-cookie round trip through the account pages, and no other site or
 * tab can read it) and sends to the account pages. Login data is taken only when it comes back
 * with this nonce, so a forged `/callback-login` link or message cannot put another account here;
 * the server asks for it again before binding the visitor's clouds.
 */
const KEY = 'skyferry.sign_in_nonce';
/** A sign-in left open longer than this starts over with a new nonce. */
export const SIGN_IN_NONCE_LIFETIME_MS = 60 * 60_000;

interface Pending {
  nonce: string;
  at: number;
}

/** Where session storage is unavailable, the nonce lasts as long as the page. */
let memory: Pending | null = null;

function read(): Pending | null {
  try {
    const raw = sessionStorage.getItem(KEY);
    if (raw === null) return memory;
    const value = JSON.parse(raw) as Partial<Pending>;
    return typeof value.nonce === 'string' && typeof value.at === 'number'
      ? { nonce: value.nonce, at: value.at }
      : null;
  } catch {
    return memory;
  }
}

function write(value: Pending | null): void {
  memory = value;
  try {
    if (value) sessionStorage.setItem(KEY, JSON.stringify(value));
    else sessionStorage.removeItem(KEY);
  } catch {
    // session storage unavailable: the in-memory copy serves this page
  }
}

function randomNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  let text = '';
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The nonce of the sign-in this tab is opening: the pending one, or a new one. */
export function signInNonce(now = Date.now()): string {
  const pending = read();
  if (pending && now - pending.at >= 0 && now - pending.at < SIGN_IN_NONCE_LIFETIME_MS) return pending.nonce;
  const nonce = randomNonce();
  write({ nonce, at: now });
  return nonce;
}

/** Whether `given` is this tab's pending sign-in nonce; a match is used up (one login per sign-in). */
export function takeSignInNonce(given: unknown, now = Date.now()): given is string {
  const pending = read();
  if (!pending || typeof given !== 'string' || given === '' || given !== pending.nonce) return false;
  write(null);
  return now - pending.at < SIGN_IN_NONCE_LIFETIME_MS;
}
