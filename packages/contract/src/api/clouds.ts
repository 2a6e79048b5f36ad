import { z } from 'zod';
import { CLOUD_KINDS, CLOUD_KIND_INFO, type CloudKind } from '../clouds.ts';
import { signInNonceSchema } from './accounts.ts';
import { displayNameSchema, idSchema } from './common.ts';

/** Connected clouds and the registry of kinds. Times are milliseconds since the epoch. */

export const MAX_ALIAS_LENGTH = 100;
/** Longest credential value (an SFTP private key fits comfortably). */
export const MAX_CREDENTIAL_VALUE_LENGTH = 16_384;
export const MAX_CREDENTIAL_FIELDS = 32;

export const CLOUD_STATUSES = ['authorized', 'expired'] as const;
export type CloudStatus = (typeof CLOUD_STATUSES)[number];

/** `type` of a cloud: bound to the account, or a visitor's temporary cloud. */
export const CloudType = { account: 0, temporary: 1 } as const;

export const cloudSchema = z.object({
  /** Skyferry's id of this connection: every other call names the cloud by it (`cloud_id`/`token_id` there). */
  id: z.string(),
  /** Stable identity of the account at the service (equal for the same bucket, server or account). */
  cloud_id: z.string(),
  /** The kind identifier (CLOUD_KINDS). */
  cloud_name: z.string(),
  /** Who or what the connection is, for display (bucket, user@host, folder path, account e-mail). */
  cloud_account: z.string(),
  /** The user's name for it; '' when none (show the kind's display name). */
  cloud_alias_name: z.string(),
  /** CloudType: 0 bound to the account, 1 a visitor's temporary cloud. */
  type: z.number().int(),
  /** Total and used bytes, as last reported (0 when unknown). */
  space: z.number(),
  used_space: z.number(),
  status: z.enum(CLOUD_STATUSES),
  /** Capability and permission bits of the kind (flags.ts). */
  flags: z.number().int(),
  /** Position in the user's order (PUT /api/clouds/sort). */
  sort: z.number().int(),
  created_at: z.number(),
  last_used_at: z.number(),
  /** A "Shared with me" (read-only) variant. */
  shared: z.boolean(),
  /** A photos-type cloud. */
  photos: z.boolean(),
  /** Bound to the account (false for temporary clouds). */
  bound: z.boolean(),
});
export type Cloud = z.infer<typeof cloudSchema>;

/** GET /api/v2/clouds/me: the account's clouds and the visitor's temporary clouds (by x-temp-authorization). */
export const cloudsMeDataSchema = z.object({
  clouds: z.array(cloudSchema),
  temp_clouds: z.array(cloudSchema),
});
export type CloudsMeData = z.infer<typeof cloudsMeDataSchema>;

export const credentialFieldSchema = z.object({
  name: z.string(),
  label: z.string(),
  type: z.enum(['text', 'password', 'number', 'boolean', 'url', 'textarea', 'select']),
  required: z.boolean(),
  secret: z.boolean(),
  /** A sentence shown under the field. */
  hint: z.string().optional(),
  /** `select` fields: the values offered, the first being the default. */
  options: z.array(z.object({ value: z.string(), label: z.string() })).optional(),
  /** Text fields: a regular expression (case-insensitive, whole value) a value must match. */
  pattern: z.string().optional(),
});

/** GET /api/system/clouds: one item per kind in CLOUD_KINDS order. */
export const systemCloudKindSchema = z.object({
  cloud_name: z.enum(CLOUD_KINDS),
  display_name: z.string(),
  flags: z.number().int(),
  auth: z.enum(['oauth', 'form']),
  fields: z.array(credentialFieldSchema),
  photos: z.boolean(),
  shared: z.boolean(),
  available: z.boolean(),
  /** Why the kind is unavailable on this server; null when available. */
  reason: z.string().nullable(),
  /**
   * The local-folder kind: the folders on the server the caller may connect (the operator's roots,
   * or the caller's own folder under each for a user the operator allowed); absent for other kinds.
   */
  roots: z.array(z.string()).optional(),
});
export type SystemCloudKind = z.infer<typeof systemCloudKindSchema>;

/** A kind as `GET /api/system/clouds` lists it, with whether the operator made it available and why not. */
export function systemCloudKind(kind: CloudKind, available = true, reason: string | null = null): SystemCloudKind {
  const info = CLOUD_KIND_INFO[kind];
  return {
    cloud_name: kind,
    display_name: info.displayName,
    flags: info.flags,
    auth: info.auth,
    fields: info.fields.map((f) => ({ ...f })),
    photos: info.photos,
    shared: info.shared,
    available,
    reason,
  };
}
export const systemCloudsDataSchema = z.array(systemCloudKindSchema);

const credentialValueSchema = z.union([z.string().max(MAX_CREDENTIAL_VALUE_LENGTH), z.number(), z.boolean()]);
/** Credential fields by name (snake_case, as GET /api/system/clouds lists them). Never returned by any call. */
export const credentialsSchema = z
  .record(z.string().max(64), credentialValueSchema)
  .refine((c) => Object.keys(c).length <= MAX_CREDENTIAL_FIELDS, { message: 'too many fields' });
export type CloudCredentials = z.infer<typeof credentialsSchema>;

/** POST /api/clouds: connect a form kind after verifying the credentials against the service. Answers the Cloud. */
export const connectCloudBodySchema = z.object({
  cloud_name: z.string().min(1).max(64),
  alias: displayNameSchema(MAX_ALIAS_LENGTH).optional(),
  credentials: credentialsSchema,
});
export type ConnectCloudBody = z.infer<typeof connectCloudBodySchema>;

/** PUT /api/clouds/{id}: any of the fields. Answers the Cloud. */
export const updateCloudBodySchema = z.object({
  space: z.number().nonnegative().max(Number.MAX_SAFE_INTEGER).optional(),
  used_space: z.number().nonnegative().max(Number.MAX_SAFE_INTEGER).optional(),
  /** '' clears the alias. */
  alias: displayNameSchema(MAX_ALIAS_LENGTH).optional(),
});
export type UpdateCloudBody = z.infer<typeof updateCloudBodySchema>;

/** PUT /api/clouds/sort: `sort_val` is a JSON array of cloud ids, in the new order. Answers null. */
export const sortCloudsBodySchema = z.object({
  sort_val: z.string().max(20_000),
});
export type SortCloudsBody = z.infer<typeof sortCloudsBodySchema>;

/**
 * POST /api/clouds/bind (signed in, with the visitor's x-temp-authorization): binds up to 5 of the
 * named temporary clouds, most recently used first; every other temporary cloud of the visitor is
 * discarded. An empty relation_id discards them all. Only a session that this browser signed in to
 * moments ago may do it: `sign_in_nonce` is the nonce that sign-in sent (code 403020 otherwise).
 */
export const bindCloudsBodySchema = z.object({
  relation_id: z.string().max(5_000),
  sign_in_nonce: signInNonceSchema.optional(),
});
export type BindCloudsBody = z.infer<typeof bindCloudsBodySchema>;
export const bindCloudsDataSchema = z.object({
  /** Ids of the clouds now bound to the account (their ids do not change). */
  bound: z.array(z.string()),
  /** Ids of the temporary clouds discarded. */
  discarded: z.array(z.string()),
});
export type BindCloudsData = z.infer<typeof bindCloudsDataSchema>;

/** PUT /api/clouds/{id}/credentials: reauthorize with new credentials (verified); keeps the cloud's settings. */
export const reauthorizeCloudBodySchema = z.object({
  credentials: credentialsSchema,
});
export type ReauthorizeCloudBody = z.infer<typeof reauthorizeCloudBodySchema>;

export const cloudIdParamSchema = z.object({ id: idSchema });
