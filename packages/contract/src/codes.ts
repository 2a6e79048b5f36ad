/**
 * Response codes carried in the envelope's `code`. 0 is success.
 * The spec's own codes (section 8) keep their numbers; Skyferry's additions use six-digit codes
 * whose first three digits are the HTTP status they travel with, except those that report what a
 * cloud did (see CLOUD_SIDE below).
 */
export const Code = {
  OK: 0,
  // Spec section 8.
  /** The request is malformed or invalid; msg says why. */
  BAD_REQUEST: 400,
  /** A connected cloud's authorisation has expired; the user must reauthorize it. */
  CLOUD_AUTH_EXPIRED: 401,
  /** The resource does not exist or is not the caller's. */
  NOT_FOUND: 404,
  /** The caller's access token is missing, invalid or expired (passes through; the client refreshes). */
  UNAUTHENTICATED: 140013,
  /** A refresh or auto-login credential was rejected: the client does a light logout. */
  REFRESH_REJECTED: 230011,
  /** A ticket's e-mail address is malformed. */
  EMAIL_FORMAT: 312212,
  /** The user's licence has expired (or the feature needs a licence). */
  LICENSE_EXPIRED: 4011001,
  /** Not enough transfer traffic left. */
  TRAFFIC_INSUFFICIENT: 4001001,
  /** A storage service's transaction cap was exceeded (Backblaze B2's transaction_cap_exceeded). */
  TRANSACTION_CAP: 6007001,
  // Skyferry's additions.
  PREMIUM_REQUIRED: 403001,
  CLOUD_LIMIT_REACHED: 403002,
  FORBIDDEN: 403003,
  CLOUD_ALREADY_BOUND: 409001,
  ALREADY_EXISTS: 409002,
  CONFIRM_SAME_CLOUD: 409003,
  CONFIRM_INSUFFICIENT_SPACE: 409004,
  CONFIRM_DELETIONS: 409005,
  CONFLICT: 409006,
  PAYLOAD_TOO_LARGE: 413001,
  CLOUD_CREDENTIALS_INVALID: 422001,
  RATE_LIMITED: 429001,
  INTERNAL: 500001,
  CLOUD_OPERATION_ERROR: 502001,
  CLOUD_UNAVAILABLE: 503001,
  INSUFFICIENT_TARGET_STORAGE: 507001,
  // Sessions and sign-in (issue 34).
  /** Binding visitor clouds needs a sign-in this browser just made (its sign-in nonce). */
  BIND_REQUIRES_SIGN_IN: 403020,
  /** The request named a host this server is not configured to answer (DNS rebinding guard). */
  HOST_NOT_ALLOWED: 421001,
  // Operators and local folders.
  /** The local-folder kind is not open to this identity (visitors, users the operator has not allowed). */
  LOCAL_FOLDER_FORBIDDEN: 403004,
  /** Only the server's operator may make this call. */
  OPERATOR_REQUIRED: 403005,
  // Account basics.
  /** The password given to confirm an account change is not the account's. */
  PASSWORD_INCORRECT: 403030,
  /** The last operator deletes their account while others exist: name the account that takes over. */
  OPERATOR_SUCCESSOR_REQUIRED: 409030,
  /** A mailed link (password reset, e-mail confirmation) has expired, was used, or never existed. */
  ACCOUNT_LINK_INVALID: 410030,
  // Clean-up.
  /** Another deletion of the same clean-up scan holds its lease (409006 stays "try the upload part again"). */
  CLEANUP_DELETION_RUNNING: 409007,
} as const;

export type CodeName = keyof typeof Code;
export type CodeValue = (typeof Code)[CodeName];

/** What each code means, for documentation and the OpenAPI description. */
export const CODE_MEANINGS: Record<CodeValue, string> = {
  [Code.OK]: 'Success.',
  [Code.BAD_REQUEST]: 'The request is invalid; msg tells why (or "An unknown error occurred").',
  [Code.CLOUD_AUTH_EXPIRED]: 'The cloud authorisation has expired; reauthorize the cloud.',
  [Code.NOT_FOUND]: 'Not found (or not yours). A progress poll answering 404 stops polling.',
  [Code.UNAUTHENTICATED]: 'Not signed in, or the access token is invalid or expired.',
  [Code.REFRESH_REJECTED]: 'The refresh or auto-login credential was rejected; the client does a light logout.',
  [Code.EMAIL_FORMAT]: 'Email format error.',
  [Code.LICENSE_EXPIRED]: 'Your current license has expired.',
  [Code.TRAFFIC_INSUFFICIENT]: 'Your current remaining transfer data is insufficient.',
  [Code.TRANSACTION_CAP]: 'Transaction cap exceeded.',
  [Code.PREMIUM_REQUIRED]: 'This feature needs a premium licence.',
  [Code.CLOUD_LIMIT_REACHED]: 'The maximum number of cloud drives is reached.',
  [Code.FORBIDDEN]: 'The cloud or folder does not allow this operation.',
  [Code.CLOUD_ALREADY_BOUND]: 'This cloud drive has been bound.',
  [Code.ALREADY_EXISTS]: 'A file or folder with this name already exists.',
  [Code.CONFIRM_SAME_CLOUD]: 'Source and target are the same cloud drive; confirm to continue.',
  [Code.CONFIRM_INSUFFICIENT_SPACE]: 'Not enough space on a cloud drive; confirm to continue.',
  [Code.CONFIRM_DELETIONS]: 'The sync would delete more than half of the target; confirm to continue.',
  [Code.CONFLICT]: 'The request conflicts with the current state of the resource.',
  [Code.PAYLOAD_TOO_LARGE]: 'The request body is too large.',
  [Code.CLOUD_CREDENTIALS_INVALID]: 'The cloud credentials are incorrect.',
  [Code.RATE_LIMITED]: 'Too many requests; try again later.',
  [Code.INTERNAL]: 'Server did not respond, please try again later.',
  [Code.CLOUD_OPERATION_ERROR]: 'The cloud drive reported an error.',
  [Code.CLOUD_UNAVAILABLE]: 'The cloud drive could not be reached.',
  [Code.INSUFFICIENT_TARGET_STORAGE]: 'Insufficient target cloud storage.',
  [Code.BIND_REQUIRES_SIGN_IN]: 'Temporary clouds are bound only right after a sign-in made in this browser.',
  [Code.HOST_NOT_ALLOWED]: 'The server does not answer at this host name (PUBLIC_URL, SKYFERRY_ALLOWED_HOSTS).',
  [Code.LOCAL_FOLDER_FORBIDDEN]:
    'Folders on the server are not open to this identity (visitors, users the operator has not allowed).',
  [Code.OPERATOR_REQUIRED]: "Only the server's operator may do this.",
  [Code.PASSWORD_INCORRECT]: 'The password is incorrect.',
  [Code.OPERATOR_SUCCESSOR_REQUIRED]:
    'The last operator must name another account to become the operator before deleting theirs.',
  [Code.ACCOUNT_LINK_INVALID]: 'The mailed link has expired or has already been used.',
  [Code.CLEANUP_DELETION_RUNNING]: 'A deletion of this clean-up scan is already running; try again when it ends.',
};

/**
 * Codes that report a cloud's failure (it answered an error, could not be reached, is full):
 * Skyferry itself worked, and whoever chose the cloud's server chose the failure, so these travel
 * with 424 Failed Dependency. No request answers 5xx because of what a cloud's server did.
 */
const CLOUD_SIDE: ReadonlySet<number> = new Set([
  Code.CLOUD_OPERATION_ERROR,
  Code.CLOUD_UNAVAILABLE,
  Code.INSUFFICIENT_TARGET_STORAGE,
]);

/** The HTTP status each code travels with. */
export function httpStatusOf(code: number): number {
  if (code === Code.OK) return 200;
  if (CLOUD_SIDE.has(code)) return 424;
  if (code === Code.BAD_REQUEST || code === Code.CLOUD_AUTH_EXPIRED || code === Code.NOT_FOUND) return code;
  if (code === Code.UNAUTHENTICATED || code === Code.REFRESH_REJECTED) return 401;
  if (code === Code.EMAIL_FORMAT) return 400;
  if (code === Code.LICENSE_EXPIRED || code === Code.TRAFFIC_INSUFFICIENT) return 402;
  if (code === Code.TRANSACTION_CAP) return 429;
  if (code >= 100_000 && code <= 599_999) return Math.floor(code / 1000);
  return 400;
}
