import { timingSafeEqual } from 'node:crypto';
import type { SessionRow, SessionsRepository } from '../repositories/sessions.ts';
import type { VisitorsRepository } from '../repositories/visitors.ts';
import { newId, randomToken, sha256Hex, type SecretBox } from './crypto.ts';

const SECOND = 1000;
const DAY = 86_400_000;

/** Lifetimes. The client refreshes every 30 minutes (spec section 9), well inside the access lifetime. */
export const TOKEN_LIFETIMES = {
  accessMs: 60 * 60 * SECOND,
  refreshMs: 30 * DAY,
  autoLoginMs: 90 * DAY,
  /** A visitor's last-seen time is written at most this often. */
  visitorTouchMs: 10 * 60 * SECOND,
  /** How long after a sign-in its browser may still bind the visitor's temporary clouds. */
  bindAfterSignInMs: 30 * 60 * SECOND,
  /** A visitor with no cloud is forgotten after this long unseen; one with clouds after `visitorIdleMs`. */
  visitorWithoutCloudsIdleMs: DAY,
  visitorIdleMs: 30 * DAY,
  /** A session's last-used time and address are written at most this often by ordinary calls. */
  sessionTouchMs: 5 * 60 * SECOND,
} as const;

/** The device a session is used from, as the account's session list shows it. */
export interface SessionClient {
  ip?: string | undefined;
  userAgent?: string | undefined;
}

/** Longest User-Agent kept for the session list. */
const MAX_USER_AGENT = 512;

/** Compares two hex digests in constant time. */
function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

const PREFIX = { access: 'sk_at_', refresh: 'sk_rt_', autoLogin: 'sk_al_', visitor: 'sk_vt_' } as const;

export interface IssuedTokens {
  sessionId: string;
  accessToken: string;
  refreshToken: string;
  autoLoginToken: string;
  /** Seconds. */
  expiresIn: number;
}

export type RefreshOutcome =
  | { ok: true; userId: string; tokens: IssuedTokens }
  /** reuse: a rotated token came back and the whole session was revoked. */
  | { ok: false; reason: 'unknown' | 'expired' | 'revoked' | 'reuse' };

/**
 * Sessions and tokens. Access and refresh tokens are opaque random strings stored as SHA-256
 * hashes; refresh tokens rotate on every use and a rotated one presented again revokes its whole
 * session (theft detection). The auto-login token is `sk_al_<session id>.<HMAC>`: long-lived,
 * derivable only with the master secret, and revoked with its session.
 */
export class TokenService {
  private readonly sessions: SessionsRepository;
  private readonly visitors: VisitorsRepository;
  private readonly box: SecretBox;
  private readonly now: () => number;

  constructor(deps: {
    sessions: SessionsRepository;
    visitors: VisitorsRepository;
    box: SecretBox;
    now?: () => number;
  }) {
    this.sessions = deps.sessions;
    this.visitors = deps.visitors;
    this.box = deps.box;
    this.now = deps.now ?? Date.now;
  }

  private autoLoginTokenOf(sessionId: string): string {
    return `${PREFIX.autoLogin}${sessionId}.${this.box.mac('auto-login', sessionId)}`;
  }

  /** The session id an auto-login token names, when its MAC is genuine. */
  private sessionOfAutoLoginToken(token: string): string | undefined {
    if (!token.startsWith(PREFIX.autoLogin)) return undefined;
    const [sessionId, mac, extra] = token.slice(PREFIX.autoLogin.length).split('.');
    if (!sessionId || !mac || extra !== undefined) return undefined;
    return this.box.verifyMac('auto-login', sessionId, mac) ? sessionId : undefined;
  }

  private async issueInSession(sessionId: string, userId: string, now: number): Promise<IssuedTokens> {
    const accessToken = randomToken(PREFIX.access);
    const refreshToken = randomToken(PREFIX.refresh);
    await this.sessions.insertAccessToken({
      token_hash: sha256Hex(accessToken),
      session_id: sessionId,
      user_id: userId,
      created_at: now,
      expires_at: now + TOKEN_LIFETIMES.accessMs,
    });
    await this.sessions.insertRefreshToken({
      token_hash: sha256Hex(refreshToken),
      session_id: sessionId,
      user_id: userId,
      created_at: now,
      expires_at: now + TOKEN_LIFETIMES.refreshMs,
      status: 'active',
      used_at: null,
    });
    return {
      sessionId,
      accessToken,
      refreshToken,
      autoLoginToken: this.autoLoginTokenOf(sessionId),
      expiresIn: Math.floor(TOKEN_LIFETIMES.accessMs / SECOND),
    };
  }

  /**
   * A new session (sign-in or sign-up) with its first tokens. `signInNonce` is the nonce the
   * signing-in browser sent; only its hash is kept, for `signedInHere`.
   */
  async startSession(userId: string, signInNonce?: string, client: SessionClient = {}): Promise<IssuedTokens> {
    const now = this.now();
    const sessionId = newId();
    await this.sessions.insertSession({
      id: sessionId,
      user_id: userId,
      created_at: now,
      last_used_at: now,
      auto_login_expires_at: now + TOKEN_LIFETIMES.autoLoginMs,
      revoked_at: null,
      revoked_reason: null,
      sign_in_nonce_hash: signInNonce ? sha256Hex(signInNonce) : null,
      user_agent: client.userAgent ? client.userAgent.slice(0, MAX_USER_AGENT) : null,
      ip: client.ip ?? null,
    });
    return this.issueInSession(sessionId, userId, now);
  }

  /**
   * Whether a session began moments ago with a sign-in that sent this nonce: the proof a browser
   * gives that the account is the one it just signed in to (and not one a forged link put there).
   */
  async signedInHere(sessionId: string, signInNonce: string | undefined): Promise<boolean> {
    if (!signInNonce) return false;
    const session = await this.sessions.findSession(sessionId);
    if (!session?.sign_in_nonce_hash || session.revoked_at !== null) return false;
    if (this.now() - session.created_at > TOKEN_LIFETIMES.bindAfterSignInMs) return false;
    return sameHash(session.sign_in_nonce_hash, sha256Hex(signInNonce));
  }

  /** Exchanges a refresh token for new tokens (the presented one is used up). */
  async refresh(refreshToken: string, client: SessionClient = {}): Promise<RefreshOutcome> {
    const now = this.now();
    const hash = sha256Hex(refreshToken);
    const row = await this.sessions.findRefreshToken(hash);
    if (!row) return { ok: false, reason: 'unknown' };
    const session = await this.sessions.findSession(row.session_id);
    if (!session || session.revoked_at !== null) return { ok: false, reason: 'revoked' };
    if (row.status === 'rotated') {
      await this.sessions.revokeSession(row.session_id, 'reuse', now);
      return { ok: false, reason: 'reuse' };
    }
    if (row.status !== 'active') return { ok: false, reason: 'revoked' };
    if (row.expires_at <= now) return { ok: false, reason: 'expired' };
    if (!(await this.sessions.rotateRefreshToken(hash, now))) {
      // Another request rotated it a moment ago: the same token twice is reuse.
      await this.sessions.revokeSession(row.session_id, 'reuse', now);
      return { ok: false, reason: 'reuse' };
    }
    // An active session keeps its auto-login credential alive.
    await this.sessions.touchSession(row.session_id, now, now + TOKEN_LIFETIMES.autoLoginMs, client.ip);
    return { ok: true, userId: row.user_id, tokens: await this.issueInSession(row.session_id, row.user_id, now) };
  }

  /** Signs in again with an auto-login token: a fresh refresh chain in the same session. */
  async autoLogin(token: string, client: SessionClient = {}): Promise<RefreshOutcome> {
    const now = this.now();
    const sessionId = this.sessionOfAutoLoginToken(token);
    if (!sessionId) return { ok: false, reason: 'unknown' };
    const session = await this.sessions.findSession(sessionId);
    if (!session) return { ok: false, reason: 'unknown' };
    if (session.revoked_at !== null) return { ok: false, reason: 'revoked' };
    if (session.auto_login_expires_at <= now) return { ok: false, reason: 'expired' };
    await this.sessions.revokeActiveRefreshTokens(sessionId);
    await this.sessions.touchSession(sessionId, now, now + TOKEN_LIFETIMES.autoLoginMs, client.ip);
    return { ok: true, userId: session.user_id, tokens: await this.issueInSession(sessionId, session.user_id, now) };
  }

  /**
   * Who an access token belongs to, or undefined when it is unknown, expired or revoked. The
   * session's last use (and address, when given) is recorded at most every few minutes.
   */
  async authenticate(
    accessToken: string,
    client: SessionClient = {},
  ): Promise<{ userId: string; email: string; sessionId: string } | undefined> {
    if (!accessToken.startsWith(PREFIX.access)) return undefined;
    const now = this.now();
    const owner = await this.sessions.findAccessTokenOwner(sha256Hex(accessToken), now);
    if (!owner) return undefined;
    if (now - owner.lastUsedAt >= TOKEN_LIFETIMES.sessionTouchMs || (client.ip && client.ip !== owner.ip)) {
      await this.sessions.touchSession(owner.sessionId, now, undefined, client.ip);
    }
    return { userId: owner.userId, email: owner.email, sessionId: owner.sessionId };
  }

  /** The account's sessions that still work, most recently used first. */
  async sessionsOf(userId: string): Promise<SessionRow[]> {
    return this.sessions.listActive(userId, this.now());
  }

  /** Ends every session of the account but `keep` (all of them without it); answers how many ended. */
  async revokeSessionsOf(userId: string, reason: string, keep?: string): Promise<number> {
    let ended = 0;
    for (const id of await this.sessions.activeIds(userId, keep)) {
      if (await this.sessions.revokeSession(id, reason, this.now())) ended += 1;
    }
    return ended;
  }

  /** Ends a session: its access, refresh and auto-login tokens stop working at once. */
  async revokeSession(sessionId: string, reason = 'logout'): Promise<boolean> {
    return this.sessions.revokeSession(sessionId, reason, this.now());
  }

  /** Whether a session still works (not revoked, auto-login not expired): tokens issued under it follow it. */
  async sessionActive(sessionId: string): Promise<boolean> {
    const row = await this.sessions.findSession(sessionId);
    return row !== undefined && row.revoked_at === null && row.auto_login_expires_at > this.now();
  }

  /** The session a refresh or auto-login token belongs to (for logout without an access token). */
  async sessionOf(token: { refreshToken?: string; autoLoginToken?: string }): Promise<string | undefined> {
    if (token.refreshToken) {
      const row = await this.sessions.findRefreshToken(sha256Hex(token.refreshToken));
      if (row) return row.session_id;
    }
    if (token.autoLoginToken) return this.sessionOfAutoLoginToken(token.autoLoginToken);
    return undefined;
  }

  /** A new visitor identity. */
  async issueVisitor(): Promise<{ visitorId: string; token: string }> {
    const now = this.now();
    const token = randomToken(PREFIX.visitor);
    const visitorId = newId();
    await this.visitors.insert({ id: visitorId, token_hash: sha256Hex(token), created_at: now, last_seen_at: now });
    return { visitorId, token };
  }

  /** The visitor a temporary token names (its last-seen time refreshed), or undefined. */
  async authenticateVisitor(token: string): Promise<string | undefined> {
    if (!token.startsWith(PREFIX.visitor)) return undefined;
    const row = await this.visitors.findByTokenHash(sha256Hex(token));
    if (!row) return undefined;
    const now = this.now();
    if (now - row.last_seen_at > TOKEN_LIFETIMES.visitorTouchMs) await this.visitors.touch(row.id, now);
    return row.id;
  }

  async purgeExpired(): Promise<void> {
    const now = this.now();
    await this.sessions.purgeExpired(now, now - TOKEN_LIFETIMES.refreshMs);
  }

  /**
   * Forgets idle visitors: one without a cloud a day after it was last seen, any other after 30
   * days (its temporary clouds, credentials included, go with it). Answers how many went.
   */
  async purgeIdleVisitors(): Promise<number> {
    const now = this.now();
    return this.visitors.purgeIdle({
      withoutCloudsBefore: now - TOKEN_LIFETIMES.visitorWithoutCloudsIdleMs,
      before: now - TOKEN_LIFETIMES.visitorIdleMs,
    });
  }
}
