import { z } from 'zod';
import { USER_ROLES } from './accounts.ts';
import { idSchema } from './common.ts';

/**
 * The operator's calls: the accounts of the server and who may use local folders. Signed-in
 * operators only (403005 for anyone else). Times are milliseconds since the epoch.
 */

/**
 * The name of a user's own folder under each allowed root: letters, digits, `_`, `.`, `-`, not
 * starting with a dot (so never `.`, `..` or a hidden folder), at most 64 characters. User ids
 * (the default name) are of this form.
 */
export const LOCAL_FOLDER_NAME_PATTERN = '^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$';

export const operatorUserSchema = z.object({
  uid: z.string(),
  email: z.string(),
  role: z.enum(USER_ROLES),
  created_at: z.number(),
  /** The name of the user's own folder under each root when they may use local folders; null otherwise. */
  local_folder: z.string().nullable(),
  /** That folder under each allowed root (paths on the server); empty when not allowed or no root is set. */
  local_roots: z.array(z.string()),
});
export type OperatorUser = z.infer<typeof operatorUserSchema>;

export const operatorUsersQuerySchema = z.object({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  page_size: z.coerce.number().int().min(1).max(100).default(50),
});
export type OperatorUsersQuery = z.infer<typeof operatorUsersQuerySchema>;

/** GET /api/operator/users: the accounts, oldest first, with the folders the server allows now. */
export const operatorUsersDataSchema = z.object({
  items: z.array(operatorUserSchema),
  total: z.number().int(),
  /** The folders the local-folder kind may use now (SKYFERRY_LOCAL_ROOTS, or the single-user home default). */
  roots: z.array(z.string()),
});
export type OperatorUsersData = z.infer<typeof operatorUsersDataSchema>;

export const operatorUserParamSchema = z.object({ uid: idSchema });

/**
 * PUT /api/operator/users/{uid}/local-folder: allow a user to use local folders (`granted: true`,
 * in `<root>/<folder_name>`, the user id when no name is given) or take it back. Answers the user.
 */
export const localGrantBodySchema = z.object({
  granted: z.boolean(),
  folder_name: z.string().max(64).regex(new RegExp(LOCAL_FOLDER_NAME_PATTERN)).optional(),
});
export type LocalGrantBody = z.infer<typeof localGrantBodySchema>;
