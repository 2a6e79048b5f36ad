import { z } from 'zod';
import { cloudPathSchema, displayNameSchema, entryNameSchema, idSchema } from './common.ts';

/**
 * The app registry ("ecology", spec sections 2, 3 and 7; DECISIONS "Third-party apps"): apps
 * embedded in sandboxed frames that speak the v1 `parent2iframe` window-message protocol. Skyferry
 * ships first-party apps (ids below 100); the operator registers external ones (ids from 100).
 */

/** Ids of the first-party apps. */
export const FIRST_PARTY_APP_IDS = { viewer: 1, editor: 2, converter: 3 } as const;
/** External apps get ids from here on. */
export const EXTERNAL_APP_ID_START = 100;
/** Most files one app token may reach (a folder's pictures for the viewer's next/previous). */
export const MAX_APP_TOKEN_FILES = 500;
/** Header tabs get narrower when more than this many apps are open (spec section 2). */
export const APP_TABS_NARROW_AFTER = 8;

/** What a function does with a file: show it, change it in place, or make new files from it. */
export const APP_ACTIONS = ['view', 'edit', 'convert'] as const;
export type AppAction = (typeof APP_ACTIONS)[number];

/** A file extension without its dot, lower case ("md", "jpg"). */
const extensionSchema = z
  .string()
  .min(1)
  .max(16)
  .regex(/^[a-z0-9]+$/, { message: 'lower-case letters and digits, no dot' });

export const appFunctionSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  /** Where the function is loaded (the app's own origin). */
  url: z.string(),
  action: z.enum(APP_ACTIONS),
  /** The file extensions it accepts; empty: it opens without a file. */
  extensions: z.array(z.string()),
});
export type AppFunction = z.infer<typeof appFunctionSchema>;

/** An app of the registry (spec section 3, "Ecology app"), with Skyferry's own fields. */
export const ecologyAppSchema = z.object({
  app_id: z.number().int(),
  name: z.string(),
  description: z.string(),
  /** A data: URL of the icon, or '' for the default icon. */
  icon: z.string(),
  /** The app's start address. */
  url: z.string(),
  /** The only origin whose window messages the host accepts from the app ('null': a first-party app in its opaque sandbox). */
  origin: z.string(),
  /** The function opened when none is named (null: the start address). */
  function_id: z.number().int().nullable(),
  is_mandatory_login: z.boolean(),
  /** 1 an ordinary app, 2 an office-type app. */
  state: z.number().int(),
  functions: z.array(appFunctionSchema),
  office: z.object({ name: z.string(), token: z.string() }).nullable(),
  first_party: z.boolean(),
});
export type EcologyApp = z.infer<typeof ecologyAppSchema>;

export const appsQuerySchema = z.object({
  /** 1: include office-type apps (state 2). */
  show_office: z.enum(['0', '1']).optional(),
});
export const appsDataSchema = z.object({ items: z.array(ecologyAppSchema) });
export type AppsData = z.infer<typeof appsDataSchema>;

/** GET /ecology/v1/apps/me: the apps the user opened, most recently used first. */
export const myAppsDataSchema = z.object({
  items: z.array(ecologyAppSchema.extend({ last_used_at: z.number(), uses: z.number().int() })),
});
export type MyAppsData = z.infer<typeof myAppsDataSchema>;

export const appIdParamSchema = z.object({ appId: z.coerce.number().int().min(1).max(2_147_483_647) });

/**
 * POST /ecology/v1/app-tokens: the host asks for a token an app may use, reaching only `files`
 * (the one opened first, then e.g. the other pictures of its folder). Reading always; writing only
 * for an app with an edit or convert function. Revoked by POST /ecology/v1/app-tokens/revoke, by
 * logging out, and after `expires_at`.
 */
export const appTokenBodySchema = z.object({
  app_id: z.number().int().min(1).max(2_147_483_647),
  files: z
    .array(z.object({ cloud_id: idSchema, path: cloudPathSchema }))
    .max(MAX_APP_TOKEN_FILES)
    .default([]),
});
export type AppTokenBody = z.input<typeof appTokenBodySchema>;

/** A file an app token reaches, as the app sees it (no cloud or path: only its id in the token). */
export const appFileSchema = z.object({
  file_id: z.string(),
  name: z.string(),
  writable: z.boolean(),
});
export type AppFile = z.infer<typeof appFileSchema>;

export const appTokenDataSchema = z.object({
  token: z.string(),
  expires_at: z.number(),
  files: z.array(appFileSchema),
});
export type AppTokenData = z.infer<typeof appTokenDataSchema>;

export const appTokenRevokeBodySchema = z.object({ token: z.string().min(1).max(200) });

/** GET /ecology/v1/app/files: the files of the caller's app token. */
export const appFilesDataSchema = z.object({ app_id: z.number().int(), files: z.array(appFileSchema) });
export type AppFilesData = z.infer<typeof appFilesDataSchema>;

export const appFileParamSchema = z.object({ fileId: z.string().min(1).max(32) });

/** A file's current state: its ETag is what a save sends back as If-Match (the conflict check). */
export const appFileInfoSchema = appFileSchema.extend({
  size: z.number(),
  modified: z.number(),
  mime_type: z.string(),
  etag: z.string(),
});
export type AppFileInfo = z.infer<typeof appFileInfoSchema>;

/** PUT .../content and POST .../save-as: raw bodies; save-as names a new file in the same folder. */
export const appSaveAsQuerySchema = z.object({ name: entryNameSchema });

export const CONVERT_FORMATS = ['jpeg', 'png', 'webp', 'avif'] as const;
export type ConvertFormat = (typeof CONVERT_FORMATS)[number];

/** POST /ecology/v1/app/files/{fileId}/convert: a new picture beside the original. */
export const appConvertBodySchema = z.object({
  format: z.enum(CONVERT_FORMATS),
  /** The longest side in pixels (never enlarged); none: the original size. */
  max_side: z.number().int().min(1).max(16_384).optional(),
  quality: z.number().int().min(1).max(100).default(82),
  name: entryNameSchema,
});
export type AppConvertBody = z.input<typeof appConvertBodySchema>;

/** The operator's registration of an external app (GET/POST /api/operator/apps, PUT/DELETE /api/operator/apps/{appId}). */
export const externalAppBodySchema = z.object({
  name: displayNameSchema(60, 1),
  description: displayNameSchema(300).default(''),
  /** A data:image URL (PNG, JPEG, WebP, GIF) of at most 64 KB, or ''. */
  icon: z
    .string()
    .max(90_000)
    .refine((s) => s === '' || /^data:image\/(png|jpeg|webp|gif);base64,[A-Za-z0-9+/=]+$/.test(s), {
      message: 'a data:image URL (png, jpeg, webp, gif)',
    })
    .default(''),
  /** http(s) address of the app; its origin is the only one whose messages are accepted. */
  url: z.url({ protocol: /^https?$/ }).max(2000),
  is_mandatory_login: z.boolean().default(false),
  state: z.union([z.literal(1), z.literal(2)]).default(1),
  functions: z
    .array(
      z.object({
        name: displayNameSchema(60, 1),
        /** On the app's origin; none: the app's url. */
        url: z
          .url({ protocol: /^https?$/ })
          .max(2000)
          .optional(),
        action: z.enum(APP_ACTIONS),
        extensions: z.array(extensionSchema).max(100),
      }),
    )
    .max(20)
    .default([]),
});
export type ExternalAppBody = z.input<typeof externalAppBodySchema>;

export const operatorAppsDataSchema = z.object({ items: z.array(ecologyAppSchema) });

/** POST /ecology/v1/office/open: an office-type app (state 2) opens one file through the WOPI host. */
export const officeOpenBodySchema = z.object({
  app_id: z.number().int().min(1).max(2_147_483_647),
  cloud_id: idSchema,
  path: cloudPathSchema,
});
export type OfficeOpenBody = z.input<typeof officeOpenBodySchema>;
export const officeOpenDataSchema = z.object({
  /** The frame's address: the app's address, then the office name and the encoded token as a path, WOPISrc in the query. */
  url: z.string(),
  office: z.object({ name: z.string(), token: z.string() }),
  /** The file's WOPI address (WOPISrc). */
  wopi_src: z.string(),
  /** When the token stops working, ms since the epoch. */
  access_token_ttl: z.number(),
  file_name: z.string(),
});
export type OfficeOpenData = z.infer<typeof officeOpenDataSchema>;
