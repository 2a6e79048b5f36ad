import { z } from 'zod';
import { cloudSchema, MAX_ALIAS_LENGTH } from './clouds.ts';
import { displayNameSchema, idSchema } from './common.ts';

/**
 * Connecting (or reauthorizing) an OAuth cloud from the connect dialog:
 * 1. POST /api/clouds/oauth/start {cloud_name, alias?, cloud_id?, origin?} answers the service's
 *    authorization URL; the client opens it in a pop-up.
 * 2. The user signs in at the service, which redirects the pop-up to
 *    GET /api/clouds/oauth/callback?code&state. The server exchanges the code (PKCE), stores the
 *    tokens encrypted and connects the cloud (or reauthorizes `cloud_id`).
 * 3. The callback page posts an OAuthResultMessage to its opener at the exact client origin (and on
 *    the BroadcastChannel OAUTH_CHANNEL when the client has the server's origin), then closes.
 * Each OAuth client must list `<PUBLIC_URL>/api/clouds/oauth/callback` as a redirect URI.
 */

export const oauthStartBodySchema = z.object({
  /** An OAuth kind (google_drive, onedrive, dropbox, box, google_photos, ...). */
  cloud_name: z.string().min(1).max(64),
  alias: displayNameSchema(MAX_ALIAS_LENGTH).optional(),
  /** Reauthorize this cloud (its alias, order and tasks stay) instead of connecting a new one. */
  cloud_id: idSchema.optional(),
  /** The client's origin, where the result is posted; must be an allowed origin (default: the server's). */
  origin: z.string().max(300).optional(),
  /**
   * The desktop client's loopback redirect (http://127.0.0.1:<port>/oauth/callback): the service's
   * sign-in runs in the system browser, which comes back there, and the client finishes the flow at
   * /api/clouds/oauth/callback with the same query. Default: the server's own callback.
   */
  redirect_uri: z.string().max(100).optional(),
});
export type OAuthStartBody = z.infer<typeof oauthStartBodySchema>;

export const oauthStartDataSchema = z.object({
  /** Open this in a pop-up. */
  authorize_url: z.string(),
  /** Identifies this attempt in the result message. */
  state: z.string(),
  /** The attempt must finish before this time (ms since the epoch). */
  expires_at: z.number(),
});
export type OAuthStartData = z.infer<typeof oauthStartDataSchema>;

export const oauthCallbackQuerySchema = z.object({
  code: z.string().max(4096).optional(),
  state: z.string().max(4096).optional(),
  error: z.string().max(200).optional(),
  error_description: z.string().max(1000).optional(),
});
export type OAuthCallbackQuery = z.infer<typeof oauthCallbackQuerySchema>;

/** The `type` of the message the callback page posts. */
export const OAUTH_MESSAGE_TYPE = 'skyferry_oauth_result';
/** BroadcastChannel name the callback page also posts on (same-origin clients). */
export const OAUTH_CHANNEL = 'skyferry-oauth';

export const oauthResultMessageSchema = z.object({
  type: z.literal(OAUTH_MESSAGE_TYPE),
  /** The state of the attempt (as answered by start). */
  state: z.string(),
  ok: z.boolean(),
  /** Set when ok: the connected or reauthorized cloud. */
  cloud: cloudSchema.optional(),
  reauthorized: z.boolean().optional(),
  /** Set when not ok: the envelope code and the message in the user's language. */
  code: z.number().int().optional(),
  msg: z.string().optional(),
});
export type OAuthResultMessage = z.infer<typeof oauthResultMessageSchema>;
