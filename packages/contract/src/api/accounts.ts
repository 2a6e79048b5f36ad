import { z } from 'zod';
import { BILLING_MODES } from '../plans.ts';

/**
 * Accounts, sessions, visitors and the start-up call. Times in `user_info`, data packets and
 * subscriptions are Unix seconds (as the spec has them); token lifetimes are seconds.
 */

/** Longest e-mail address accepted (RFC 5321 path limit). */
export const MAX_EMAIL_LENGTH = 254;
export const MIN_PASSWORD_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 256;
/** Longest token the server ever issues, with room to spare; longer input is refused unread. */
export const MAX_TOKEN_LENGTH = 512;

export const ACCOUNT_MESSAGE_TYPES = { loginSuccess: 'login_success', logoutSuccess: 'logout_success' } as const;

/**
 * A sign-in nonce: random, made by the client when it opens the sign-in and kept in its session
 * storage. The account pages send it with the sign-in and hand it back with the login data; the
 * client accepts login data only with its own nonce, and binding visitor clouds needs it again.
 */
export const SIGN_IN_NONCE_PATTERN = /^[A-Za-z0-9_-]{22,128}$/;
export const signInNonceSchema = z.string().regex(SIGN_IN_NONCE_PATTERN);

/** A licence plan on offer (spec section 9), with its price in the smallest currency unit. */
export const licenseOfferSchema = z.object({
  id: z.enum(['month', 'quarter', 'year']),
  name: z.string(),
  period: z.enum(['monthly', 'quarterly', 'yearly']),
  months: z.number().int(),
  /** Bytes of transfer traffic each month of the licence. */
  monthly_allowance: z.number().int(),
  price: z.number().int(),
  currency: z.string(),
});
export type LicenseOffer = z.infer<typeof licenseOfferSchema>;

export const popupNpsRulesSchema = z.object({
  /** Below 0: always show; otherwise the last-shown date must be older than this many days. */
  interval_day: z.number().int(),
  /** Conditions by index: 0 paid, 1 has clouds, 2 has used migrate or sync. */
  condition_index_list: z.array(z.number().int()),
});
export type PopupNpsRules = z.infer<typeof popupNpsRulesSchema>;

/** The operator's service notice (DECISIONS: "The service notice"); null when off. */
export const serviceNoticeSchema = z.object({
  text: z.string(),
  /** Free text as the operator wrote it, e.g. "2025-09-30"; '' when not given. */
  date: z.string(),
  /** A link for questions; '' when not given. */
  contact_url: z.string(),
});
export type ServiceNotice = z.infer<typeof serviceNoticeSchema>;

/** GET /api/v2/init: no auth needed; a valid x-temp-authorization is echoed back as temp_token. */
export const initQuerySchema = z.object({
  /** The client's origin, where the account pages post their messages (must be an allowed origin). */
  origin: z.string().max(300).optional(),
  lang: z.string().max(20).optional(),
});
export const initDataSchema = z.object({
  licenses: z.array(licenseOfferSchema),
  popup_nps_rules: popupNpsRulesSchema,
  /** The sign-in page to frame: `${PUBLIC_URL}/account/signin?origin=<client origin>&lang=<lang>`. */
  sign_in_url: z.string(),
  sign_out_url: z.string(),
  /** The same pages for browsers that block third-party cookies (the pages never need cookies). */
  sign_in_url_disable_cookies: z.string(),
  sign_out_url_disable_cookies: z.string(),
  /** The WOPI host (`${PUBLIC_URL}/wopi`; WOPISrc is `${wopi_url}/files/{file_id}`); '' when no office server is configured. */
  wopi_url: z.string(),
  mandatory_upgrade: z.boolean(),
  /** The visitor identity to send as `x-temp-authorization` while no user is signed in. */
  temp_token: z.string(),
  billing_mode: z.enum(BILLING_MODES),
  service_notice: serviceNoticeSchema.nullable(),
  /** Whether the server can send e-mail (SMTP_URL is set); without it completion e-mails start off. */
  mail_delivery: z.boolean(),
});
export type InitData = z.infer<typeof initDataSchema>;

/** What an account may do on this server: `operator` configures it and decides who may use local folders. */
export const USER_ROLES = ['user', 'operator'] as const;
export type UserRole = (typeof USER_ROLES)[number];

export const userInfoSchema = z.object({
  email: z.string(),
  /** The first account of a fresh install, and those named by SKYFERRY_ADMIN_EMAILS, are operators. */
  role: z.enum(USER_ROLES),
  /** 1: registered (has or had a licence), 0: free. */
  type: z.number().int(),
  /** 1 when the licence has expired. */
  expired: z.number().int(),
  /** Licence end, Unix seconds; 0 when never licensed. */
  expire: z.number().int(),
  /** The spec's paid check (type 1, expired 0, expire later than now). */
  is_paid: z.boolean(),
  notify_email: z.string(),
  remind_me: z.union([z.literal(0), z.literal(1)]),
  avatar: z.string(),
  avatar_md5: z.string(),
  country: z.string(),
  firstname: z.string(),
  lastname: z.string(),
  mobile: z.string(),
  nickname: z.string(),
});
export type UserInfo = z.infer<typeof userInfoSchema>;

export const dataPacketItemSchema = z.object({
  name: z.string(),
  /** Bytes used and bytes in the packet. */
  usage: z.number().int(),
  size: z.number().int(),
  /** Unix seconds. */
  end_time: z.number().int(),
  /**
   * The deduction date (Unix seconds): from when transfers are deducted from this packet, the start
   * of its licence month for a base packet, the day it was bought for an additional one.
   */
  deduction_time: z.number().int(),
});
export type DataPacketItem = z.infer<typeof dataPacketItemSchema>;

export const myDataPacketSchema = z.object({
  base: z.array(dataPacketItemSchema),
  additional: z.array(dataPacketItemSchema),
});
export type MyDataPacket = z.infer<typeof myDataPacketSchema>;

export const subscriptionSchema = z.object({
  data_packet_name: z.string(),
  /** 1: renewing; 0: will not renew. */
  purchase_state: z.number().int(),
  /** Unix seconds. */
  expires_date: z.number().int(),
});
export type Subscription = z.infer<typeof subscriptionSchema>;

export const usersMeDataSchema = z.object({
  user_info: userInfoSchema,
  my_data_packet: myDataPacketSchema,
  my_subscribe: z.array(subscriptionSchema),
});
export type UsersMeData = z.infer<typeof usersMeDataSchema>;

/** What sign-up, sign-in, refresh and auto-login answer (and what `login_success` carries). */
export const authorizationDataSchema = usersMeDataSchema.extend({
  access_token: z.string(),
  refresh_token: z.string(),
  token_type: z.literal('Bearer'),
  /** Seconds until the access token expires. */
  expires_in: z.number().int(),
  uid: z.string(),
  auto_login_token: z.string(),
  licenses: z.array(licenseOfferSchema),
});
export type AuthorizationData = z.infer<typeof authorizationDataSchema>;

const tokenSchema = z.string().min(1).max(MAX_TOKEN_LENGTH);

/** POST /api/v2/authorizations. `username` (the e-mail or uid), when given, must match the token's account. */
export const authorizationsBodySchema = z.discriminatedUnion('grant_type', [
  z.object({
    grant_type: z.literal('refresh_token'),
    username: z.string().max(MAX_EMAIL_LENGTH).optional(),
    refresh_token: tokenSchema,
  }),
  z.object({
    grant_type: z.literal('auto_login'),
    username: z.string().max(MAX_EMAIL_LENGTH).optional(),
    auto_login_token: tokenSchema,
  }),
]);
export type AuthorizationsBody = z.infer<typeof authorizationsBodySchema>;

/** POST /api/account/signup. The e-mail is checked by the server (message "Email format error."). */
export const signUpBodySchema = z.object({
  email: z.string().max(MAX_EMAIL_LENGTH),
  password: z.string().max(MAX_PASSWORD_LENGTH),
  /** The signing-in browser's nonce; the session remembers its hash (POST /api/clouds/bind asks for it). */
  sign_in_nonce: signInNonceSchema.optional(),
});
export type SignUpBody = z.infer<typeof signUpBodySchema>;

/** POST /api/account/login. */
export const signInBodySchema = z.object({
  email: z.string().max(MAX_EMAIL_LENGTH),
  password: z.string().max(MAX_PASSWORD_LENGTH),
  /** As for sign-up. */
  sign_in_nonce: signInNonceSchema.optional(),
});
export type SignInBody = z.infer<typeof signInBodySchema>;

/**
 * POST (or GET) /api/account/logout with the bearer access token: revokes that session (its refresh
 * tokens, its access tokens and its auto-login token). A body may instead name the refresh or
 * auto-login token to revoke, for a client whose access token has already expired.
 */
export const logoutBodySchema = z
  .object({
    refresh_token: tokenSchema.optional(),
    auto_login_token: tokenSchema.optional(),
  })
  .nullish();
export type LogoutBody = z.infer<typeof logoutBodySchema>;

/** POST /api/users/notify-email; the answer's msg is the server message to show. */
export const notifyEmailBodySchema = z.object({
  notify_email: z.string().max(MAX_EMAIL_LENGTH),
  remind_me: z.union([z.literal(0), z.literal(1)]),
});
export type NotifyEmailBody = z.infer<typeof notifyEmailBodySchema>;

/** GET /api/token: a visitor identity, sent as `x-temp-authorization: <access_token>`. */
export const tempTokenDataSchema = z.object({
  token_type: z.literal('Bearer'),
  access_token: z.string(),
});
export type TempTokenData = z.infer<typeof tempTokenDataSchema>;

/** The messages the account pages post to the client window (exact client origin, never '*'). */
export type AccountPageMessage =
  | { type: typeof ACCOUNT_MESSAGE_TYPES.loginSuccess; data: AuthorizationData }
  | { type: typeof ACCOUNT_MESSAGE_TYPES.logoutSuccess };

// --- Account basics: password, e-mail, forgotten password, sessions, deleting the account ------

/** How long a mailed password-reset link works. */
export const PASSWORD_RESET_LINK_MS = 60 * 60_000;
/** How long a mailed link confirming a new e-mail address works. */
export const EMAIL_CHANGE_LINK_MS = 24 * 60 * 60_000;

/**
 * Fields of a form the server checked, each with its message in the caller's language: the `data`
 * of a 400 that found several problems at once (sign-up: the e-mail and the password).
 */
export const fieldErrorsDataSchema = z.object({ fields: z.record(z.string(), z.string()) });
export type FieldErrorsData = z.infer<typeof fieldErrorsDataSchema>;

/** POST /api/account/password: the current password and the new one. Other sessions end; this one stays. */
export const changePasswordBodySchema = z.object({
  current_password: z.string().max(MAX_PASSWORD_LENGTH),
  new_password: z.string().max(MAX_PASSWORD_LENGTH),
});
export type ChangePasswordBody = z.infer<typeof changePasswordBodySchema>;
export const changePasswordDataSchema = z.object({
  /** How many other sessions (devices) were signed out. */
  ended_sessions: z.number().int(),
});
export type ChangePasswordData = z.infer<typeof changePasswordDataSchema>;

/** POST /api/account/email: mails a confirmation link to `new_email`; the address changes when it is opened. */
export const changeEmailBodySchema = z.object({
  new_email: z.string().max(MAX_EMAIL_LENGTH),
  password: z.string().max(MAX_PASSWORD_LENGTH),
});
export type ChangeEmailBody = z.infer<typeof changeEmailBodySchema>;
export const changeEmailDataSchema = z.object({ sent_to: z.string() });
export type ChangeEmailData = z.infer<typeof changeEmailDataSchema>;

/** A mailed link's token (POST /api/account/email/confirm). */
export const accountLinkBodySchema = z.object({ token: tokenSchema });
export type AccountLinkBody = z.infer<typeof accountLinkBodySchema>;
export const confirmEmailDataSchema = z.object({ email: z.string() });
export type ConfirmEmailData = z.infer<typeof confirmEmailDataSchema>;

/** POST /api/account/password/forgot: the same answer whether or not the address has an account. */
export const forgotPasswordBodySchema = z.object({ email: z.string().max(MAX_EMAIL_LENGTH) });
export type ForgotPasswordBody = z.infer<typeof forgotPasswordBodySchema>;

/** POST /api/account/password/reset: the mailed link's token and the new password. Every session ends. */
export const resetPasswordBodySchema = z.object({
  token: tokenSchema,
  new_password: z.string().max(MAX_PASSWORD_LENGTH),
});
export type ResetPasswordBody = z.infer<typeof resetPasswordBodySchema>;

/** One signed-in device of the account (GET /api/account/sessions). Times are milliseconds since the epoch. */
export const accountSessionSchema = z.object({
  id: z.string(),
  /** The session making this call. */
  current: z.boolean(),
  /** The browser or client that started it ('' when not known). */
  user_agent: z.string(),
  /** The address it was last used from ('' when not known). */
  ip: z.string(),
  created_at: z.number(),
  last_used_at: z.number(),
});
export type AccountSession = z.infer<typeof accountSessionSchema>;
export const accountSessionsDataSchema = z.object({ items: z.array(accountSessionSchema) });
export type AccountSessionsData = z.infer<typeof accountSessionsDataSchema>;
export const accountSessionParamSchema = z.object({ id: z.string().min(1).max(64) });
export const endedSessionsDataSchema = z.object({ ended: z.number().int() });
export type EndedSessionsData = z.infer<typeof endedSessionsDataSchema>;

/**
 * POST /api/account/delete: the password, and when the caller is the server's last operator while
 * other accounts exist, `successor_email`: the account that becomes the operator.
 */
export const deleteAccountBodySchema = z.object({
  password: z.string().max(MAX_PASSWORD_LENGTH),
  successor_email: z.string().max(MAX_EMAIL_LENGTH).optional(),
});
export type DeleteAccountBody = z.infer<typeof deleteAccountBodySchema>;
export const deleteAccountDataSchema = z.object({
  /** The account that became the operator, when one was named. */
  successor_email: z.string().nullable(),
});
export type DeleteAccountData = z.infer<typeof deleteAccountDataSchema>;
