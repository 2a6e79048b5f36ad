import type { Generated } from 'kysely';

/**
 * Accounts, sessions, visitors, plans and connected clouds (migration 0002). Times are integer
 * milliseconds, booleans 0/1, tokens are stored only as SHA-256 hashes (hex), cloud credentials and
 * backend state only encrypted (AES-256-GCM, see apps/server/src/services/crypto.ts).
 */
export interface UsersTable {
  id: string;
  /** Lower-cased, trimmed; unique. */
  email: string;
  /** Argon2id PHC string. */
  password_hash: string;
  nickname: string;
  firstname: string;
  lastname: string;
  country: string;
  mobile: string;
  avatar: string;
  /** Where transfer e-mails go; '' means the account e-mail. */
  notify_email: string;
  remind_me: number;
  /** The language the user last used (e-mails are written in it). */
  language: string;
  created_at: number;
  updated_at: number;
  /** 'operator' (the first account; SKYFERRY_ADMIN_EMAILS adds others without storing them) or 'user' (migration 0008). */
  role: Generated<string>;
  /** The user's own folder name under each local root, when the operator allows them local folders; unique. */
  local_folder: string | null;
}

/** One signed-in device: a family of rotating refresh tokens plus its auto-login credential. */
export interface SessionsTable {
  id: string;
  user_id: string;
  created_at: number;
  last_used_at: number;
  /** The auto-login token works until then (extended on each use). */
  auto_login_expires_at: number;
  revoked_at: number | null;
  /** logout, reuse (a rotated refresh token came back), password, admin. */
  revoked_reason: string | null;
  /** SHA-256 (hex) of the sign-in nonce the signing-in browser sent (migration 0009); null when none. */
  sign_in_nonce_hash: string | null;
  /** The browser or client that started the session (its User-Agent, cut to 512 characters; migration 0013). */
  user_agent: string | null;
  /** The address it was last used from (migration 0013). */
  ip: string | null;
}

/**
 * A single-use link Skyferry mailed (migration 0013): `password_reset`, or `email_change` to the
 * new address in `email`. Only the token's SHA-256 hash (hex) is stored.
 */
export interface AccountTokensTable {
  token_hash: string;
  user_id: string;
  purpose: string;
  email: string | null;
  created_at: number;
  expires_at: number;
  /** When the link was used (it works once); null while unused. */
  used_at: number | null;
}

export interface RefreshTokensTable {
  token_hash: string;
  session_id: string;
  user_id: string;
  created_at: number;
  expires_at: number;
  /** active, rotated (exchanged once; presenting it again revokes the session), revoked. */
  status: string;
  used_at: number | null;
}

export interface AccessTokensTable {
  token_hash: string;
  session_id: string;
  user_id: string;
  created_at: number;
  expires_at: number;
}

/** A visitor's temporary identity (GET /api/token, init's temp_token). */
export interface VisitorsTable {
  id: string;
  token_hash: string;
  created_at: number;
  last_seen_at: number;
}

export interface CloudsTable {
  id: string;
  /** Exactly one of user_id and visitor_id is set: the owner. */
  user_id: string | null;
  visitor_id: string | null;
  /** Kind identifier (cloud_name). */
  kind: string;
  /** Stable identity of the account at the service (duplicate detection). */
  cloud_id: string;
  cloud_account: string;
  alias: string;
  space: number;
  used_space: number;
  /** 1 authorized, 0 expired. */
  status: number;
  sort: number;
  /** Encrypted JSON of the credentials; record id as associated data. */
  credentials_enc: string;
  /** Encrypted JSON of the backend's state (host keys, refreshed tokens); null when none. */
  state_enc: string | null;
  key_version: number;
  created_at: number;
  updated_at: number;
  last_used_at: number;
}

export interface LicensesTable {
  id: string;
  user_id: string;
  /** month, quarter, year (LICENSES in the contract). */
  plan_id: string;
  /** 1 renews automatically, 0 ends at expires_at. */
  renewing: number;
  started_at: number;
  expires_at: number;
  /** Where it came from: grant (operator or test), test (built-in checkout), stripe. */
  source: string;
  external_id: string | null;
  created_at: number;
  updated_at: number;
}

export interface DataPacketsTable {
  id: string;
  user_id: string;
  /** base (a licence's monthly allowance) or additional (a bought packet). */
  kind: string;
  name: string;
  size: number;
  usage: number;
  starts_at: number;
  ends_at: number;
  license_id: string | null;
  created_at: number;
}

/** Fixed-window counters (sign-in attempts per account and per address). */
export interface RateLimitsTable {
  key: string;
  count: number;
  reset_at: number;
}

export interface AccountsTables {
  users: UsersTable;
  sessions: SessionsTable;
  refresh_tokens: RefreshTokensTable;
  access_tokens: AccessTokensTable;
  visitors: VisitorsTable;
  clouds: CloudsTable;
  licenses: LicensesTable;
  data_packets: DataPacketsTable;
  rate_limits: RateLimitsTable;
  account_tokens: AccountTokensTable;
}
