import { z } from 'zod';
import { BUFFERS } from '../constants.ts';
import { cloudPathSchema, idSchema } from './common.ts';

/**
 * A new file or folder name. The server checks it with the contract's naming rules (validateName)
 * and answers 400 with the rule's message (NAME_PROBLEM_MESSAGE) in the caller's language.
 */
const newNameSchema = z.string().max(1024);

/**
 * File calls of a connected cloud (the explorer, the photos view, exports). Every call names the
 * cloud by Skyferry's id of the connection (`Cloud.id`): as `cloud_id`, or as `token_id` the way the
 * spec's embedded-app calls do (`cloud_type`, the kind, may come along and must then match).
 * Paths are absolute POSIX paths inside the cloud. Times are milliseconds since the epoch.
 * Errors: 404 "The path does not exist." for a missing path (and for a cloud that is not the
 * caller's: 404 "Not found."), 401 when the cloud's authorisation expired (the cloud is marked
 * expired), 400 with the naming rule's message for a bad name, 409002 when a name is taken,
 * 403003 when the cloud kind does not allow the operation, 507001 when the cloud is full,
 * 429001 when the service rate-limits, 503001 when it cannot be reached, and 502001
 * "Cloud Drive operation error! [{code}]" for any other failure the service reports.
 */

/** Remote file types (spec section 3). */
export const RemoteFileType = { folder: 0, file: 1 } as const;
export type RemoteFileTypeValue = (typeof RemoteFileType)[keyof typeof RemoteFileType];

/** Most entries one list page may return, and the default page. */
export const MAX_LIST_PAGE_SIZE = 5000;
/** Most paths one delete or download call may name. */
export const MAX_FILES_PER_CALL = 1000;
/** Part size of the resumable upload (the spec's 4 MB upload buffer). */
export const UPLOAD_PART_SIZE = BUFFERS.upload;
/** Largest file one upload may carry (Skyferry's limit; services have their own). */
export const MAX_UPLOAD_SIZE = 5 * 1024 ** 4;

/** Names the cloud: `cloud_id`, or `token_id` (the spec's name); `cloud_type` is optional. */
export const cloudRefSchema = z.object({
  cloud_id: idSchema.optional(),
  token_id: idSchema.optional(),
  cloud_type: z.string().max(64).optional(),
});
export type CloudRef = z.infer<typeof cloudRefSchema>;

/** A call's body naming its cloud (`cloud_id` or `token_id`) with the fields of `shape`. */
export const withCloud = <T extends z.ZodRawShape>(shape: T) =>
  cloudRefSchema.extend(shape).refine((b) => Boolean((b as CloudRef).cloud_id ?? (b as CloudRef).token_id), {
    message: 'cloud_id (or token_id) is required',
    path: ['cloud_id'],
  });

export const fileItemSchema = z.object({
  /** The service's id of the entry where it has one, else its path. */
  id: z.string(),
  name: z.string(),
  path: z.string(),
  /** 0 folder, 1 file. */
  type: z.union([z.literal(0), z.literal(1)]),
  /** Bytes; 0 for folders. */
  size: z.number(),
  /** Last modification, ms; 0 when the service does not say. */
  modified: z.number(),
  mime_type: z.string().nullable(),
});
export type FileItem = z.infer<typeof fileItemSchema>;

/**
 * POST /api/cloud-manager/list: one page of a folder. Pages are cached on the server per cloud and
 * folder for a short time (a few seconds); `refresh: true` reads the service again. Pass the
 * answer's `page_token` back for the next page; null means the folder ends here.
 */
export const listFilesBodySchema = withCloud({
  path: cloudPathSchema.default('/'),
  page_token: z.string().max(8192).nullable().optional(),
  page_size: z.number().int().min(1).max(MAX_LIST_PAGE_SIZE).optional(),
  refresh: z.boolean().optional(),
  /**
   * A read the app makes on its own (a tree it opens on the first cloud): it does not count as
   * using the cloud, which decides which temporary clouds are kept at sign-in and when they expire.
   */
  background: z.boolean().optional(),
});
export type ListFilesBody = z.input<typeof listFilesBodySchema>;
export const listFilesDataSchema = z.object({
  items: z.array(fileItemSchema),
  page_token: z.string().nullable(),
});
export type ListFilesData = z.infer<typeof listFilesDataSchema>;

/**
 * POST /api/cloud-manager/mkdir: creates `folder_name` in `path` (default the root). With
 * `not_allow_conflict: true` an existing folder of that name is reused; otherwise an existing name
 * answers 409002. Data: the folder's id (its path on path-based services).
 */
export const mkdirBodySchema = withCloud({
  path: cloudPathSchema.default('/'),
  folder_name: newNameSchema,
  not_allow_conflict: z.boolean().optional(),
});
export type MkdirBody = z.input<typeof mkdirBodySchema>;
export const mkdirDataSchema = z.string();

/** POST /api/cloud-manager/rename: renames in place. Answers the renamed entry; 409002 when the name is taken. */
export const renameBodySchema = withCloud({
  path: cloudPathSchema,
  new_name: newNameSchema,
});
export type RenameBody = z.input<typeof renameBodySchema>;

/**
 * POST /api/cloud-manager/delete: deletes files and folders (a folder with everything in it), to the
 * cloud's trash where it has one (restorable there) unless `permanent`. Each path is tried; the
 * answer says which went and which failed, with the reason.
 */
export const deleteFilesBodySchema = withCloud({
  files: z.array(cloudPathSchema).min(1).max(MAX_FILES_PER_CALL),
  permanent: z.boolean().optional(),
});
export type DeleteFilesBody = z.input<typeof deleteFilesBodySchema>;
export const deleteFilesDataSchema = z.object({
  deleted: z.array(z.string()),
  failed: z.array(z.object({ path: z.string(), code: z.number().int(), msg: z.string() })),
  /** Whether the deleted items went to the cloud's trash. */
  trashed: z.boolean(),
});
export type DeleteFilesData = z.infer<typeof deleteFilesDataSchema>;

/**
 * POST /api/cloud-manager/info: the cloud's space as the service reports it now (also stored on the
 * cloud: space and used_space of /api/v2/clouds/me). 0 when the service does not say; `reported`
 * false when it reports neither (an FTP server, a WebDAV server without RFC 4331 quota): the space
 * is then not known, and will not be.
 */
export const cloudInfoBodySchema = withCloud({
  /** A refresh the app makes on its own (/manage's staggered one): not a use of the cloud (see list). */
  background: z.boolean().optional(),
});
export type CloudInfoBody = z.input<typeof cloudInfoBodySchema>;
export const cloudInfoDataSchema = z.object({
  space_amount: z.number(),
  space_used: z.number(),
  /** Whether the service reported its space (total or used) now. */
  reported: z.boolean(),
});
export type CloudInfoData = z.infer<typeof cloudInfoDataSchema>;

/**
 * PUT /api/cloud-manager/files?cloud_id=ID&path=/folder/name: a plain upload, the raw bytes as the
 * body, streamed to the cloud (no copy on the server's disk). Replaces an existing file unless
 * `overwrite=0` (then 409002). `modified` (ms) sets the modification time where the service keeps it.
 * Answers the new entry.
 *
 * GET /api/cloud-manager/files?cloud_id=ID&path=/folder/name: downloads a file, streamed, with
 * HTTP Range support (206, Content-Range; If-Range with the ETag); a folder comes as one zip stream.
 * A browser, which cannot add headers to a navigation, uses `link` from POST download-link instead.
 */
export const uploadFileQuerySchema = z.object({
  cloud_id: idSchema,
  path: cloudPathSchema,
  overwrite: z.enum(['0', '1']).optional(),
  modified: z.coerce.number().int().min(0).optional(),
});
export type UploadFileQuery = z.infer<typeof uploadFileQuerySchema>;
export const downloadFileQuerySchema = z.object({
  cloud_id: idSchema.optional(),
  path: cloudPathSchema.optional(),
  /** A signed link from POST /api/cloud-manager/download-link (no headers needed). */
  link: z.string().max(12_000).optional(),
  /** `inline` shows the file in the browser (images, PDFs) instead of saving it. */
  disposition: z.enum(['attachment', 'inline']).optional(),
  /**
   * A nonce the web app picks: once the download starts, the answer sets the cookie
   * `sf-dl-<notify>=<bytes>` (the download's whole size: a file's, or a zip's exact length), so the
   * page learns that the browser's download began and how large it is (an error answers the
   * envelope instead).
   */
  notify: z
    .string()
    .regex(/^[a-z0-9]{8,64}$/)
    .optional(),
});
export type DownloadFileQuery = z.infer<typeof downloadFileQuerySchema>;

/**
 * POST /api/cloud-manager/download-link: a short-lived signed URL (5 minutes) for GET
 * /api/cloud-manager/files that a browser can navigate to. One file path downloads the file; a
 * folder, or several paths (of one folder), download as one zip named `name` (default: the folder's
 * name, else "download.zip").
 */
export const downloadLinkBodySchema = withCloud({
  paths: z.array(cloudPathSchema).min(1).max(MAX_FILES_PER_CALL),
  name: newNameSchema.optional(),
});
export type DownloadLinkBody = z.input<typeof downloadLinkBodySchema>;
export const downloadLinkDataSchema = z.object({ url: z.string(), expires_at: z.number() });
export type DownloadLinkData = z.infer<typeof downloadLinkDataSchema>;

/**
 * The resumable upload the web client uses for files over one part:
 * 1. POST /api/cloud-manager/uploads {cloud_id, path, size} opens a session (`upload_id`).
 * 2. PUT /api/cloud-manager/uploads/{upload_id}?offset=N with one part (UPLOAD_PART_SIZE bytes, the
 *    last one shorter) as the raw body; `offset` must be the session's offset. A part is taken whole
 *    or not at all, so after a dropped connection GET /api/cloud-manager/uploads/{upload_id} tells
 *    where to resume; resending a part already taken is harmless.
 * 3. POST /api/cloud-manager/uploads/{upload_id}/complete publishes the file and answers its entry.
 * DELETE /api/cloud-manager/uploads/{upload_id} abandons it. A session left idle for an hour expires.
 */
export const createUploadBodySchema = withCloud({
  path: cloudPathSchema,
  size: z.number().int().min(0).max(MAX_UPLOAD_SIZE),
  modified: z.number().int().min(0).optional(),
  /** false: answer 409002 when the file exists (default: replace it). */
  overwrite: z.boolean().optional(),
});
export type CreateUploadBody = z.input<typeof createUploadBodySchema>;
export const uploadSessionSchema = z.object({
  upload_id: z.string(),
  path: z.string(),
  size: z.number(),
  /** Bytes taken so far: where the next part starts. */
  offset: z.number(),
  part_size: z.number(),
  /** When the session expires if nothing more arrives (ms). */
  expires_at: z.number(),
});
export type UploadSession = z.infer<typeof uploadSessionSchema>;
export const uploadIdParamSchema = z.object({ upload_id: z.string().min(1).max(64) });
export const uploadPartQuerySchema = z.object({ offset: z.coerce.number().int().min(0) });
export const uploadPartDataSchema = z.object({ offset: z.number() });

/**
 * GET /api/cloud-manager/thumbnail?cloud_id=ID&path=/photo.jpg&size=256: a JPEG or WebP thumbnail
 * (longest side `size` pixels, default 256) made by the server and cached, for image files. `link`
 * (a download link of the file) works as for downloads, so an <img> can show it without headers.
 */
export const THUMBNAIL_SIZES = [128, 256, 512] as const;
export const thumbnailQuerySchema = z.object({
  cloud_id: idSchema.optional(),
  path: cloudPathSchema.optional(),
  link: z.string().max(12_000).optional(),
  size: z.coerce
    .number()
    .int()
    .refine((n) => (THUMBNAIL_SIZES as readonly number[]).includes(n), { message: 'size must be 128, 256 or 512' })
    .optional(),
});

/** Albums of a photos cloud (Google Photos): POST /api/cloud-manager/albums/list. */
export const albumSchema = z.object({
  id: z.string(),
  title: z.string(),
  /** Number of items, when the service says. */
  count: z.number().nullable(),
  /** The path of a cover item (for its thumbnail), when known. */
  cover_path: z.string().nullable(),
});
export type Album = z.infer<typeof albumSchema>;
export const listAlbumsBodySchema = withCloud({});
export const listAlbumsDataSchema = z.object({ albums: z.array(albumSchema) });
export type ListAlbumsData = z.infer<typeof listAlbumsDataSchema>;
/** POST /api/cloud-manager/albums/create {title}: answers the album. */
export const createAlbumBodySchema = withCloud({ title: z.string().trim().min(1).max(500) });
/** POST /api/cloud-manager/albums/add {album_id, files}: adds the photos (paths) to the album. */
export const addToAlbumBodySchema = withCloud({
  album_id: z.string().min(1).max(512),
  files: z.array(cloudPathSchema).min(1).max(50),
});
export const addToAlbumDataSchema = z.object({ added: z.number().int() });
/** POST /api/cloud-manager/albums/items {album_id, page_token?}: the photos in an album. */
export const albumItemsBodySchema = withCloud({
  album_id: z.string().min(1).max(512),
  page_token: z.string().max(8192).nullable().optional(),
});

/**
 * The cloud's trash (its deleted files): what Skyferry's own trash of a local folder
 * (`.skyferry-trash`) or the service's trash (Nextcloud's trashbin) holds. Each item is one deleted
 * file or folder (a folder with what it held), named by the `id` the backend gives it.
 * POST /api/cloud-manager/trash/list: `supported` false (and no items) where the cloud has no
 * trash Skyferry can read; `page_token` as in list.
 */
export const trashListBodySchema = withCloud({ page_token: z.string().max(8192).nullable().optional() });
export type TrashListBody = z.input<typeof trashListBodySchema>;
export const trashItemSchema = z.object({
  id: z.string(),
  name: z.string(),
  /** Where it was before it went (a path in the cloud), when the service says. */
  original_path: z.string().nullable(),
  /** 0 folder, 1 file. */
  type: z.union([z.literal(0), z.literal(1)]),
  /** Bytes; 0 for folders and when the service does not say. */
  size: z.number(),
  /** When it was deleted, ms; 0 when the service does not say. */
  deleted_at: z.number(),
});
export type TrashItem = z.infer<typeof trashItemSchema>;
export const trashListDataSchema = z.object({
  supported: z.boolean(),
  /**
   * With `supported` false: whether the service keeps what is deleted in a trash of its own that it
   * lets no other app read (OneDrive's recycle bin, which Microsoft Graph does not list): its own
   * website shows it. False: what is deleted here is gone for good.
   */
  service_trash: z.boolean(),
  /** Whether items can be deleted for good here (trash/delete), and the whole trash emptied (trash/empty). */
  can_purge: z.boolean(),
  can_empty: z.boolean(),
  items: z.array(trashItemSchema),
  page_token: z.string().nullable(),
});
export type TrashListData = z.infer<typeof trashListDataSchema>;

/**
 * POST /api/cloud-manager/trash/restore {ids}: puts each item back where it was (beside it as
 * "name (restored)" when the name is taken again). POST /api/cloud-manager/trash/delete {ids}:
 * deletes each for good. Each id is tried; the answer says which worked and which failed and why.
 * 403003 where the cloud has no trash.
 */
export const trashItemsBodySchema = withCloud({
  ids: z.array(z.string().min(1).max(1024)).min(1).max(MAX_FILES_PER_CALL),
});
export type TrashItemsBody = z.input<typeof trashItemsBodySchema>;
const trashFailureSchema = z.object({ id: z.string(), code: z.number().int(), msg: z.string() });
export const trashRestoreDataSchema = z.object({
  restored: z.array(fileItemSchema),
  failed: z.array(trashFailureSchema),
});
export type TrashRestoreData = z.infer<typeof trashRestoreDataSchema>;
export const trashDeleteDataSchema = z.object({ deleted: z.array(z.string()), failed: z.array(trashFailureSchema) });
export type TrashDeleteData = z.infer<typeof trashDeleteDataSchema>;
/** POST /api/cloud-manager/trash/empty: deletes everything in the trash for good (403003 without one). */
export const trashEmptyBodySchema = withCloud({});

/** Most folders one search call reads in a walk before it answers with what it found so far. */
export const SEARCH_FOLDERS_PER_CALL = 200;
/** Most folders a walk reads in all (a bounded walk: the answer says it stopped there). */
export const SEARCH_MAX_FOLDERS = 20_000;
/**
 * POST /api/cloud-manager/search: files and folders below `path` whose name holds `query` (case
 * and accents ignored). Where the service has no search of its own, it is a walk of the folders,
 * SEARCH_FOLDERS_PER_CALL a call: pass the answer's `page_token` back to go on (null: done), and
 * show `scanned` (folders read so far) as progress; stopping is not calling again. `truncated` says
 * the walk stopped at SEARCH_MAX_FOLDERS.
 */
export const searchFilesBodySchema = withCloud({
  path: cloudPathSchema.default('/'),
  query: z.string().trim().min(1).max(256),
  page_token: z.string().max(500_000).nullable().optional(),
});
export type SearchFilesBody = z.input<typeof searchFilesBodySchema>;
export const searchFilesDataSchema = z.object({
  items: z.array(fileItemSchema),
  page_token: z.string().nullable(),
  scanned: z.number().int(),
  truncated: z.boolean(),
});
export type SearchFilesData = z.infer<typeof searchFilesDataSchema>;
