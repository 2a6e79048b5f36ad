import { z } from 'zod';
import { cloudPathSchema } from './common.ts';
import { withCloud } from './files.ts';

/**
 * The WOPI host (Microsoft's Web Application Open Platform Interface): an office server the operator
 * runs (Collabora Online, OnlyOffice; SKYFERRY_WOPI_CLIENT_URL) opens and saves documents of the
 * user's clouds through `${wopi_url}/files/{file_id}` (init's `wopi_url`; empty when no office
 * server is configured, and then every WOPI call answers 404).
 *
 * POST /api/wopi/sessions hands the app host an access token for one file of one of the caller's
 * clouds, for that caller only, until `access_token_ttl` (ms since the epoch); a user's token also
 * ends with the session it was issued in (logout). The office server is then given `WOPISrc`
 * (`wopi_src`) and the token, as WOPI prescribes.
 */

/** Longest lock id a WOPI client may set (WOPI: 1024 ASCII characters). */
export const WOPI_LOCK_MAX = 1024;
/** A WOPI lock lasts 30 minutes unless refreshed. */
export const WOPI_LOCK_TTL_MS = 30 * 60_000;

export const wopiSessionBodySchema = withCloud({
  path: cloudPathSchema,
  /** 'view' gives a token that cannot write (UserCanWrite false; PutFile and locks refused). */
  mode: z.enum(['view', 'edit']).default('edit'),
});
export type WopiSessionBody = z.input<typeof wopiSessionBodySchema>;
export const wopiSessionDataSchema = z.object({
  file_id: z.string(),
  access_token: z.string(),
  /** When the token stops working, ms since the epoch (WOPI's access_token_ttl). */
  access_token_ttl: z.number(),
  /** The file's WOPI address (WOPISrc) for the office server. */
  wopi_src: z.string(),
  /** The office server the operator configured. */
  office_url: z.string(),
});
export type WopiSessionData = z.infer<typeof wopiSessionDataSchema>;

export const wopiFileParamSchema = z.object({ file_id: z.string().min(1).max(128) });
export const wopiTokenQuerySchema = z.object({ access_token: z.string().max(4096).optional() });
