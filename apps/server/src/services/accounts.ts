import { isIP } from 'node:net';
import argon2 from 'argon2';
import {
  Code,
  MIN_PASSWORD_LENGTH,
  message,
  type AuthorizationData,
  type AuthorizationsBody,
  type FieldErrorsData,
  type Language,
} from '@skyferry/contract';
import { ApiError, errors } from '../http/errors.ts';
import type { RateLimitsRepository } from '../repositories/rate-limits.ts';
import type { UsersRepository } from '../repositories/users.ts';
import { newId, sha256Hex } from './crypto.ts';
import type { IssuedTokens, SessionClient, TokenService } from './tokens.ts';
import type { UsersService } from './users.ts';

/** Argon2id at OWASP's recommended minimum (19 MiB, 2 passes): memory-hard, yet quick enough on small servers. */
const ARGON2_OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/**
 * Sign-in attempt limits, counted in the database (shared by every API process). Attempts are
 * slowed per (account, address) pair, so a stranger's guesses never lock the owner out from
 * another address; each address also has a cap on failures across accounts (against spraying).
 * Loopback (a desktop install, a proxy on this machine that forwards nothing) counts per account
 * only: its pair is (account, loopback) and it has no address cap.
 */
export const SIGN_IN_LIMITS = {
  /** Per (account, address): 5 attempts at once, then waits from 1 s doubling up to 15 minutes. */
  pair: { windowMs: 60 * 60_000, free: 5, baseDelayMs: 1_000, maxDelayMs: 15 * 60_000 },
  /** Failures per address across every account, per window. */
  perAddress: 50,
  windowMs: 15 * 60_000,
  /** Sign-ups per address per hour. */
  signUpPerAddress: 20,
  signUpWindowMs: 60 * 60_000,
} as const;

/** New visitor identities per address (each is a database row until it expires). */
export const VISITOR_LIMITS = { perAddress: 60, windowMs: 60 * 60_000 } as const;

const EMAIL_RE = /^[^\s@"<>()[\]\\,;:]+@[^\s@"<>()[\]\\,;:]+\.[^\s@"<>()[\]\\,;:]+$/;

/** Trims and lower-cases an e-mail address; undefined when it is not one. */
export function normalizeEmail(email: string): string | undefined {
  const e = email.trim().toLowerCase();
  return e.length <= 254 && EMAIL_RE.test(e) ? e : undefined;
}

/** The e-mail check of the forms: empty, malformed, or the normalised address. */
export function checkEmail(email: string): string {
  if (email.trim() === '') throw errors.badRequest('email_empty');
  const normalized = normalizeEmail(email);
  if (!normalized) throw new ApiError(Code.EMAIL_FORMAT, 'email_format');
  return normalized;
}

/** Argon2id hash of a new password (PHC string). */
export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, ARGON2_OPTIONS);
}

/** The new-password rule of every form: at least MIN_PASSWORD_LENGTH characters. */
export function checkNewPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH)
    throw errors.badRequest('password_too_short', { min: MIN_PASSWORD_LENGTH });
}

/**
 * Sign-up's checks of the e-mail and the password together: every problem at once, the first as
 * the message and each in `data.fields` under its field, in the caller's language.
 */
export function checkSignUpFields(input: { email: string; password: string }, language: Language): string {
  const fields: Record<string, string> = {};
  let first: ApiError | undefined;
  let email = '';
  for (const [field, check] of [
    ['email', () => (email = checkEmail(input.email))],
    ['password', () => checkNewPassword(input.password)],
  ] as const) {
    try {
      check();
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      first ??= err;
      fields[field] = message(language, err.key, err.params);
    }
  }
  if (first) {
    const data: FieldErrorsData = { fields };
    throw new ApiError(first.code, first.key, first.params, data);
  }
  return email;
}

/**
 * What a per-address limit counts: an IPv4 address (also when IPv4-mapped), or the /64 network of an
 * IPv6 address, since one subscriber usually holds a whole /64 and could otherwise take a fresh
 * address for every attempt.
 */
export function addressKey(ip: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped?.[1]) return mapped[1];
  if (isIP(ip) !== 6) return ip;
  const [head = '', tail] = ip.toLowerCase().split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const hextets = [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${hextets
    .slice(0, 4)
    .map((h) => h.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** 429 for a slowed (account, address) pair: the wait in seconds, or in minutes once it is long. */
export function slowedDown(waitMs: number): ApiError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return seconds < 90
    ? errors.rateLimited('login_slowed', { seconds })
    : errors.rateLimited('login_rate_limited', { minutes: Math.ceil(seconds / 60) });
}

/** The session's device as the account's session list shows it. */
function sessionClient(client: ClientInfo): SessionClient {
  return { ip: client.ip, userAgent: client.userAgent };
}

export function isLoopback(ip: string): boolean {
  return ip === '::1' || ip.startsWith('127.') || ip.startsWith('::ffff:127.');
}

export interface ClientInfo {
  /** The client's address, for rate limits (and the session list). */
  ip: string;
  language: Language;
  /** The User-Agent, shown in the account's session list. */
  userAgent?: string | undefined;
}

/**
 * Sign-up, sign-in, token grants and logout. Each successful one answers the same data: tokens,
 * user info, packets, subscriptions and the licence offers.
 */
export class AccountsService {
  private readonly users: UsersRepository;
  private readonly userService: UsersService;
  private readonly tokens: TokenService;
  private readonly limits: RateLimitsRepository;
  private readonly operators: { claimFirstOperator(userId: string): Promise<boolean> };
  private readonly now: () => number;
  private readonly mailDelivers: boolean;
  private dummyHash: Promise<string> | undefined;

  constructor(deps: {
    users: UsersRepository;
    userService: UsersService;
    tokens: TokenService;
    limits: RateLimitsRepository;
    /** The authorization module: the install's first account becomes its operator. */
    operators: { claimFirstOperator(userId: string): Promise<boolean> };
    now?: () => number;
    /** Mail reaches people (SMTP_URL is set): new accounts start with completion e-mails on. Default true. */
    mailDelivers?: boolean;
  }) {
    this.users = deps.users;
    this.userService = deps.userService;
    this.tokens = deps.tokens;
    this.limits = deps.limits;
    this.operators = deps.operators;
    this.now = deps.now ?? Date.now;
    this.mailDelivers = deps.mailDelivers ?? true;
  }

  /** The answer of every successful sign-in or grant. */
  async authorizationData(userId: string, tokens: IssuedTokens): Promise<AuthorizationData> {
    const me = await this.userService.me(userId);
    if (!me) throw errors.refreshRejected();
    return {
      access_token: tokens.accessToken,
      refresh_token: tokens.refreshToken,
      token_type: 'Bearer',
      expires_in: tokens.expiresIn,
      uid: userId,
      auto_login_token: tokens.autoLoginToken,
      licenses: this.userService.licenseOffers(),
      ...me,
    };
  }

  async signUp(
    input: { email: string; password: string; sign_in_nonce?: string | undefined },
    client: ClientInfo,
  ): Promise<AuthorizationData> {
    const email = checkSignUpFields(input, client.language);
    const now = this.now();
    // Sign-ups from the machine itself (a desktop install, the operator, tests) are not limited.
    if (!isLoopback(client.ip)) {
      const ipKey = `signup:ip:${addressKey(client.ip)}`;
      const ipCount = await this.limits.get(ipKey, now);
      if (ipCount.count >= SIGN_IN_LIMITS.signUpPerAddress) throw errors.rateLimited();
      await this.limits.hit(ipKey, SIGN_IN_LIMITS.signUpWindowMs, now);
    }
    const id = newId();
    const inserted = await this.users.insert({
      id,
      email,
      password_hash: await hashPassword(input.password),
      nickname: email.split('@')[0] ?? '',
      firstname: '',
      lastname: '',
      country: '',
      mobile: '',
      avatar: '',
      notify_email: '',
      // Without a mail server the reminders could only land in the outbox: off until asked for.
      remind_me: this.mailDelivers ? 1 : 0,
      language: client.language,
      created_at: now,
      updated_at: now,
    });
    if (!inserted) throw new ApiError(Code.CONFLICT, 'account_exists');
    await this.operators.claimFirstOperator(id);
    return this.authorizationData(id, await this.tokens.startSession(id, input.sign_in_nonce, sessionClient(client)));
  }

  /** Whether `password` is the one of this Argon2id hash; with no hash, spends the same time and says no. */
  async verifyOrBurn(hash: string | undefined, password: string): Promise<boolean> {
    if (hash) {
      try {
        return await argon2.verify(hash, password);
      } catch {
        return false;
      }
    }
    // No such account: spend the same time, so timing does not tell which e-mails exist.
    this.dummyHash ??= argon2.hash('skyferry-no-such-account', ARGON2_OPTIONS);
    await argon2.verify(await this.dummyHash, password).catch(() => false);
    return false;
  }

  async signIn(
    input: { email: string; password: string; sign_in_nonce?: string | undefined },
    client: ClientInfo,
  ): Promise<AuthorizationData> {
    const email = checkEmail(input.email);
    if (input.password === '') throw errors.badRequest('field_required', { field: 'password' });
    const now = this.now();
    const loopback = isLoopback(client.ip);
    const ipKey = `signin:ip:${addressKey(client.ip)}`;
    if (!loopback) {
      const perAddress = await this.limits.get(ipKey, now);
      if (perAddress.count >= SIGN_IN_LIMITS.perAddress) {
        const minutes = Math.max(1, Math.ceil((perAddress.resetAt - now) / 60_000));
        throw errors.rateLimited('login_rate_limited', { minutes });
      }
    }
    const pairKey = `signin:pair:${sha256Hex(email)}:${loopback ? 'loopback' : addressKey(client.ip)}`;
    const wait = await this.limits.admit(pairKey, SIGN_IN_LIMITS.pair, now);
    if (wait > 0) throw slowedDown(wait);
    const user = await this.users.findByEmail(email);
    if (!(await this.verifyOrBurn(user?.password_hash, input.password)) || !user) {
      if (!loopback) await this.limits.hit(ipKey, SIGN_IN_LIMITS.windowMs, now);
      throw errors.badRequest('login_failed');
    }
    await this.limits.reset(pairKey);
    if (user.language !== client.language) await this.userService.setLanguage(user.id, client.language);
    return this.authorizationData(
      user.id,
      await this.tokens.startSession(user.id, input.sign_in_nonce, sessionClient(client)),
    );
  }

  /**
   * A new visitor identity (GET /api/token, init), at most VISITOR_LIMITS.perAddress an hour per
   * address (loopback exempt, as for sign-ups); undefined when the address has had its share.
   */
  async newVisitor(client: Pick<ClientInfo, 'ip'>): Promise<string | undefined> {
    if (!isLoopback(client.ip)) {
      const now = this.now();
      const key = `visitor:ip:${addressKey(client.ip)}`;
      if ((await this.limits.get(key, now)).count >= VISITOR_LIMITS.perAddress) return undefined;
      await this.limits.hit(key, VISITOR_LIMITS.windowMs, now);
    }
    return (await this.tokens.issueVisitor()).token;
  }

  /** POST /api/v2/authorizations: refresh (rotating) or auto-login. Any rejection is code 230011. */
  async authorize(body: AuthorizationsBody, client: Partial<ClientInfo> = {}): Promise<AuthorizationData> {
    const outcome =
      body.grant_type === 'refresh_token'
        ? await this.tokens.refresh(body.refresh_token, { ip: client.ip })
        : await this.tokens.autoLogin(body.auto_login_token, { ip: client.ip });
    if (!outcome.ok) throw errors.refreshRejected();
    if (body.username) {
      const user = await this.users.findById(outcome.userId);
      const name = body.username.trim().toLowerCase();
      if (!user || (name !== user.email && body.username !== user.id)) {
        await this.tokens.revokeSession(outcome.tokens.sessionId, 'username_mismatch');
        throw errors.refreshRejected();
      }
    }
    return this.authorizationData(outcome.userId, outcome.tokens);
  }

  /**
   * Logout: ends the session of the access token, or of the refresh or auto-login token given.
   * Answers whether a session was ended (logging out twice is not an error).
   */
  async logout(
    sessionId: string | undefined,
    body: { refresh_token?: string; auto_login_token?: string },
  ): Promise<boolean> {
    const sessions = new Set<string>();
    if (sessionId) sessions.add(sessionId);
    const fromBody = await this.tokens.sessionOf({
      refreshToken: body.refresh_token,
      autoLoginToken: body.auto_login_token,
    });
    if (fromBody) sessions.add(fromBody);
    let ended = false;
    for (const id of sessions) ended = (await this.tokens.revokeSession(id, 'logout')) || ended;
    return ended;
  }
}
