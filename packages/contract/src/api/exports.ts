import { z } from 'zod';
import { cloudPathSchema, idSchema } from './common.ts';
import { withCloud } from './files.ts';

/**
 * Export to a cloud (spec sections 2, 4 and 7): a file an embedded app or the explorer hands over
 * (its bytes inline as base64, or an address the server downloads) is written into a folder of one
 * of the caller's clouds by the server, as work owned by the caller; the caller polls its progress
 * every second (INTERVALS.exportPoll) until the status is no longer 0.
 *
 * The export folder is the product's own (EXPORT_FOLDER_NAME), made or reused with
 * `POST /api/cloud-manager/mkdir {folder_name, not_allow_conflict: true}`.
 */

/** The folder exports go to, in the root of the chosen cloud (DECISIONS: named after the product). */
export const EXPORT_FOLDER_NAME = 'Skyferry';

/** Export upload task status (spec section 4): 0 waiting (and running), 1 success, -2 failure. */
export const ExportStatus = { waiting: 0, success: 1, failed: -2 } as const;
export type ExportStatusValue = (typeof ExportStatus)[keyof typeof ExportStatus];

/** Most bytes an export may carry inline (base64_data, decoded). Larger files go by download_url. */
export const EXPORT_INLINE_MAX = 16 * 1024 * 1024;
/** The body limit of start-upload: the inline bytes in base64 (4/3) plus the other fields. */
export const START_UPLOAD_BODY_LIMIT = Math.ceil((EXPORT_INLINE_MAX * 4) / 3) + 64 * 1024;

/**
 * POST /api/third-api/start-upload: starts writing `file_name` into `parent` (a folder path of the
 * cloud, `/Skyferry` for the export folder) of the cloud `token_id` (or `cloud_id`). Exactly one of
 * `download_url` (http or https; fetched by the server through the same private-network guard as
 * clouds, following at most 5 redirects, each checked again) or `base64_data` (a data-URL prefix
 * such as `data:image/png;base64,` is stripped). A download_url of this server's own
 * (`/api/cloud-manager/files?link=...`, from POST /api/cloud-manager/download-link, issued to the
 * caller) is read from the cloud directly: a copy from one of the caller's clouds to another.
 * `file_size` is the expected size; the download's
 * Content-Length, when it sends one, must agree. A name already taken in the folder gets " (1)",
 * " (2)" and so on before its extension. Data: `{ task_id }`.
 */
export const startUploadBodySchema = withCloud({
  file_name: z.string().min(1).max(255),
  file_size: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  /** The page or app the file comes from (kept for the record; not fetched). */
  referer: z.string().max(2048).optional(),
  parent: cloudPathSchema.default('/'),
  download_url: z.string().min(1).max(8192).optional(),
  base64_data: z.string().min(1).max(START_UPLOAD_BODY_LIMIT).optional(),
}).refine((b) => (b.download_url === undefined) !== (b.base64_data === undefined), {
  message: 'exactly one of download_url and base64_data is required',
  path: ['download_url'],
});
export type StartUploadBody = z.input<typeof startUploadBodySchema>;
export const startUploadDataSchema = z.object({ task_id: z.string() });
export type StartUploadData = z.infer<typeof startUploadDataSchema>;

/** GET /api/third-api/poll-progress/{taskId}. Code 404 for an export that is not the caller's. */
export const exportTaskParamSchema = z.object({ taskId: idSchema });
export const exportProgressSchema = z.object({
  task_id: z.string(),
  /** 0 waiting or running, 1 success, -2 failure. */
  status: z.union([z.literal(0), z.literal(1), z.literal(-2)]),
  /** 0 to 100; 100 only once the file is complete in the cloud. */
  percent: z.number(),
  file_name: z.string(),
  /** Where the file is (or goes) in the cloud. */
  path: z.string(),
  cloud_id: z.string(),
  size: z.number(),
  transferred: z.number(),
  /** Why it failed, in the caller's language (null unless status is -2). */
  error: z.object({ code: z.number(), msg: z.string() }).nullable(),
});
export type ExportProgress = z.infer<typeof exportProgressSchema>;

/** Strips a data-URL prefix ("data:<type>;base64,") from base64 data. */
export function stripDataUrlPrefix(data: string): string {
  const m = /^data:[^,]{0,200},/.exec(data);
  return m ? data.slice(m[0].length) : data;
}
