import {
  Code,
  EMAIL_CHANGE_LINK_MS,
  PASSWORD_RESET_LINK_MS,
  toLanguage,
  type AccountSession,
  type ChangePasswordData,
  type Language,
} from '@skyferry/contract';
import type { Logger } from 'pino';
import { ApiError, errors } from '../http/errors.ts';
import type { AccountTokenPurpose, AccountTokensRepository } from '../repositories/account-tokens.ts';
import type { RateLimitsRepository } from '../repositories/rate-limits.ts';
import type { UserRow, UsersRepository } from '../repositories/users.ts';
import {
  addressKey,
  checkEmail,
  checkNewPassword,
  hashPassword,
  isLoopback,
  normalizeEmail,
  SIGN_IN_LIMITS,
  slowedDown,
  type AccountsService,
} from './accounts.ts';
import type { Authorization } from './authorization.ts';
import { randomToken, sha256Hex } from './crypto.ts';
import { accountEmail, type AccountMailKind, type Mailer } from './mail/index.ts';
import type { TokenService } from './tokens.ts';

/** Limits of the forgotten-password form. */
export const FORGOT_PASSWORD_LIMITS = {
  /** Links mailed to one address per window, whoever asks (keeps a mailbox from being flooded). */
  perEmail: 3,
  /** Requests from one network address per window (loopback exempt, as for sign-ups). */
  perAddress: 20,
  windowMs: 60 * 60_000,
} as const;

const LINK_PREFIX: Record<AccountTokenPurpose, string> = { password_reset: 'sk_pr_', email_change: 'sk_ec_' };

/** The signed-in caller of an account call: the account and the session making the call. */
export interface AccountCaller {
  userId: string;
  sessionId: string;
}

/** Ends what belongs to an account elsewhere before it goes (tasks and their runs, clean-up scans). */
export interface AccountClosure {
  removeAllOf(userId: string): Promise<unknown>;
}

export interface AccountSettingsDeps {
  users: UsersRepository;
  accounts: AccountsService;
  tokens: TokenService;
  links: AccountTokensRepository;
  limits: RateLimitsRepository;
  authz: Authorization;
  mailer: Mailer;
  /** Tasks and clean-up scans, removed with the account (clouds, sessions and licences go by foreign key). */
  closures: readonly AccountClosure[];
  /** PUBLIC_URL: named in the e-mails that carry no link. */
  publicUrl: string;
  log: Logger;
  now?: () => number;
}

/**
 * The signed-in account's own settings and the mailed links: change the password (other sessions
 * end), change the e-mail (confirmed by a link sent to the new address; the old one is told),
 * forgotten password (a single-use, expiring link; the same answer for every address), the list of
 * sessions with revoke, and deleting the account. Every change asks for the current password,
 * checked under the sign-in slow-down (per account) so it cannot be guessed through these calls.
 */
export class AccountSettingsService {
  private readonly d: AccountSettingsDeps;
  private readonly now: () => number;

  constructor(deps: AccountSettingsDeps) {
    this.d = deps;
    this.now = deps.now ?? Date.now;
  }

  private async account(userId: string): Promise<UserRow> {
    const user = await this.d.users.findById(userId);
    if (!user) throw errors.unauthenticated();
    return user;
  }

  /** The account's password, checked under the slow-down of sign-ins (counted per account). */
  private async checkPassword(user: UserRow, password: string): Promise<void> {
    const key = `password:${user.id}`;
    const wait = await this.d.limits.admit(key, SIGN_IN_LIMITS.pair, this.now());
    if (wait > 0) throw slowedDown(wait);
    if (!(await this.d.accounts.verifyOrBurn(user.password_hash, password))) {
      throw new ApiError(Code.PASSWORD_INCORRECT, 'password_incorrect');
    }
    await this.d.limits.reset(key);
  }

  /** A mail that reports a change: its failure is logged and does not undo the change. */
  private async tell(to: string, kind: AccountMailKind, language: Language, email: string): Promise<void> {
    try {
      await this.d.mailer.send({ to, ...accountEmail({ kind, language, email, appUrl: this.d.publicUrl }) });
    } catch (err) {
      this.d.log.warn({ err, kind }, 'account e-mail not sent');
    }
  }

  private language(user: UserRow): Language {
    return toLanguage(user.language) ?? 'en';
  }

  /** A new single-use link: the token goes in the mail, only its hash is kept. */
  private async newLink(
    user: UserRow,
    purpose: AccountTokenPurpose,
    ttlMs: number,
    email: string | null,
  ): Promise<string> {
    const token = randomToken(LINK_PREFIX[purpose]);
    const now = this.now();
    await this.d.links.insert({
      token_hash: sha256Hex(token),
      user_id: user.id,
      purpose,
      email,
      created_at: now,
      expires_at: now + ttlMs,
      used_at: null,
    });
    return token;
  }

  /** Takes a mailed link (once); 410030 when it is unknown, expired or used. */
  private async takeLink(token: string, purpose: AccountTokenPurpose) {
    const row = token.startsWith(LINK_PREFIX[purpose])
      ? await this.d.links.take(sha256Hex(token), purpose, this.now())
      : undefined;
    if (!row) throw new ApiError(Code.ACCOUNT_LINK_INVALID, 'account_link_invalid');
    return row;
  }

  /** A mailed link to an account page at `base` (the address the user reached the server at). */
  private pageUrl(base: string, page: string, token: string, language: Language): string {
    const q = new URLSearchParams({ token, lang: language });
    return `${base.replace(/\/+$/, '')}/account/${page}?${q.toString()}`;
  }

  /**
   * What a mailed link's page shows before it is used: for an e-mail change the new address, for a
   * reset the account's; undefined when the link is unknown, expired or used (nothing is consumed).
   */
  async peekLink(token: string, purpose: AccountTokenPurpose): Promise<{ email: string } | undefined> {
    if (!token.startsWith(LINK_PREFIX[purpose])) return undefined;
    const row = await this.d.links.find(sha256Hex(token), purpose, this.now());
    if (!row) return undefined;
    if (purpose === 'email_change') return row.email ? { email: row.email } : undefined;
    const user = await this.d.users.findById(row.user_id);
    return user ? { email: user.email } : undefined;
  }

  /** POST /api/account/password: needs the current password; every other session ends, this one stays. */
  async changePassword(
    caller: AccountCaller,
    input: { current_password: string; new_password: string },
  ): Promise<ChangePasswordData> {
    const user = await this.account(caller.userId);
    await this.checkPassword(user, input.current_password);
    checkNewPassword(input.new_password);
    if (input.new_password === input.current_password) throw errors.badRequest('password_unchanged');
    const now = this.now();
    await this.d.users.updatePassword(user.id, await hashPassword(input.new_password), now);
    await this.d.links.retire(user.id, 'password_reset', now);
    const ended = await this.d.tokens.revokeSessionsOf(user.id, 'password', caller.sessionId);
    this.d.log.info({ user: user.id, ended }, 'password changed');
    await this.tell(user.email, 'password_changed', this.language(user), user.email);
    return { ended_sessions: ended };
  }

  /**
   * POST /api/account/email: mails a link to the new address (it changes when the link is opened)
   * and tells the current address that a change was asked for.
   */
  async requestEmailChange(
    caller: AccountCaller,
    input: { new_email: string; password: string },
    client: { language: Language; base: string },
  ): Promise<{ sent_to: string }> {
    const { language } = client;
    const user = await this.account(caller.userId);
    const email = checkEmail(input.new_email);
    await this.checkPassword(user, input.password);
    if (email === user.email) throw errors.badRequest('email_same');
    if (await this.d.users.findByEmail(email)) throw new ApiError(Code.CONFLICT, 'account_exists');
    const now = this.now();
    await this.d.links.retire(user.id, 'email_change', now);
    const token = await this.newLink(user, 'email_change', EMAIL_CHANGE_LINK_MS, email);
    await this.d.mailer.send({
      to: email,
      ...accountEmail({
        kind: 'email_confirm',
        language,
        email,
        link: this.pageUrl(client.base, 'confirm-email', token, language),
        hours: EMAIL_CHANGE_LINK_MS / 3_600_000,
        appUrl: client.base,
      }),
    });
    await this.tell(user.email, 'email_change_requested', this.language(user), email);
    this.d.log.info({ user: user.id }, 'e-mail change asked for');
    return { sent_to: email };
  }

  /** POST /api/account/email/confirm: the link mailed to the new address makes it the account's; the old one is told. */
  async confirmEmailChange(token: string): Promise<{ email: string }> {
    const link = await this.takeLink(token, 'email_change');
    const user = await this.d.users.findById(link.user_id);
    if (!user || !link.email) throw new ApiError(Code.ACCOUNT_LINK_INVALID, 'account_link_invalid');
    const old = user.email;
    if (old !== link.email) {
      if (!(await this.d.users.updateEmail(user.id, link.email, this.now()))) {
        throw new ApiError(Code.CONFLICT, 'account_exists');
      }
      this.d.log.info({ user: user.id }, 'e-mail changed');
      await this.tell(old, 'email_changed', this.language(user), link.email);
    }
    return { email: link.email };
  }

  /**
   * POST /api/account/password/forgot: a reset link to the address when it has an account. The
   * answer is the same either way, and the mail leaves after it (so its time tells nothing);
   * limited per address asked for and per network address.
   */
  async forgotPassword(
    input: { email: string },
    client: { ip: string; language: Language; base: string },
  ): Promise<void> {
    const email = checkEmail(input.email);
    const now = this.now();
    if (!isLoopback(client.ip)) {
      const ipKey = `forgot:ip:${addressKey(client.ip)}`;
      if ((await this.d.limits.get(ipKey, now)).count >= FORGOT_PASSWORD_LIMITS.perAddress) {
        throw errors.rateLimited();
      }
      await this.d.limits.hit(ipKey, FORGOT_PASSWORD_LIMITS.windowMs, now);
    }
    const emailKey = `forgot:email:${sha256Hex(email)}`;
    if ((await this.d.limits.get(emailKey, now)).count >= FORGOT_PASSWORD_LIMITS.perEmail) throw errors.rateLimited();
    await this.d.limits.hit(emailKey, FORGOT_PASSWORD_LIMITS.windowMs, now);
    const user = await this.d.users.findByEmail(email);
    if (!user) return;
    const token = await this.newLink(user, 'password_reset', PASSWORD_RESET_LINK_MS, null);
    const mail = accountEmail({
      kind: 'password_reset',
      language: client.language,
      email: user.email,
      link: this.pageUrl(client.base, 'reset', token, client.language),
      minutes: PASSWORD_RESET_LINK_MS / 60_000,
      appUrl: client.base,
    });
    void this.d.mailer
      .send({ to: user.email, ...mail })
      .then(() => this.d.log.info({ user: user.id }, 'password reset link sent'))
      .catch((err: unknown) => this.d.log.warn({ err }, 'password reset e-mail not sent'));
  }

  /** POST /api/account/password/reset: the mailed link (once) sets a new password and ends every session. */
  async resetPassword(input: { token: string; new_password: string }): Promise<void> {
    // A password the rule refuses leaves the link usable for a better one.
    checkNewPassword(input.new_password);
    const link = await this.takeLink(input.token, 'password_reset');
    const user = await this.d.users.findById(link.user_id);
    if (!user) throw new ApiError(Code.ACCOUNT_LINK_INVALID, 'account_link_invalid');
    const now = this.now();
    await this.d.users.updatePassword(user.id, await hashPassword(input.new_password), now);
    await this.d.links.retire(user.id, 'password_reset', now);
    await this.d.limits.reset(`password:${user.id}`);
    const ended = await this.d.tokens.revokeSessionsOf(user.id, 'password_reset');
    this.d.log.info({ user: user.id, ended }, 'password reset');
    await this.tell(user.email, 'password_changed', this.language(user), user.email);
  }

  /** GET /api/account/sessions: the account's working sessions, this one marked. */
  async sessions(caller: AccountCaller): Promise<AccountSession[]> {
    return (await this.d.tokens.sessionsOf(caller.userId)).map((s) => ({
      id: s.id,
      current: s.id === caller.sessionId,
      user_agent: s.user_agent ?? '',
      ip: s.ip ?? '',
      created_at: s.created_at,
      last_used_at: s.last_used_at,
    }));
  }

  /** DELETE /api/account/sessions/{id}: ends one of the account's sessions (404 for any other id). */
  async revokeSession(caller: AccountCaller, id: string): Promise<void> {
    const mine = await this.d.tokens.sessionsOf(caller.userId);
    if (!mine.some((s) => s.id === id)) throw errors.notFound();
    await this.d.tokens.revokeSession(id, 'revoked');
  }

  /** POST /api/account/sessions/revoke-others: ends every session but this one; answers how many. */
  async revokeOtherSessions(caller: AccountCaller): Promise<number> {
    return this.d.tokens.revokeSessionsOf(caller.userId, 'revoked', caller.sessionId);
  }

  /**
   * POST /api/account/delete: with the password, deletes the account with its clouds (and their
   * credentials), tasks and their runs, clean-up scans, sessions, licences and mailed links. The
   * last operator names a successor first (Authorization.beforeAccountDeleted).
   */
  async deleteAccount(
    caller: AccountCaller,
    input: { password: string; successor_email?: string | undefined },
  ): Promise<{ successor_email: string | null }> {
    const user = await this.account(caller.userId);
    await this.checkPassword(user, input.password);
    const successorEmail =
      input.successor_email === undefined || input.successor_email.trim() === ''
        ? undefined
        : (normalizeEmail(input.successor_email) ?? input.successor_email.trim());
    const successor = await this.d.authz.beforeAccountDeleted(user, successorEmail);
    // Sessions first, so nothing more happens in the account's name while it goes.
    await this.d.tokens.revokeSessionsOf(user.id, 'account_deleted');
    for (const closure of this.d.closures) await closure.removeAllOf(user.id);
    await this.d.users.delete(user.id);
    await this.d.limits.reset(`password:${user.id}`);
    await this.d.authz.afterAccountDeleted();
    this.d.log.info({ user: user.id }, 'account deleted');
    return { successor_email: successor?.email ?? null };
  }
}
