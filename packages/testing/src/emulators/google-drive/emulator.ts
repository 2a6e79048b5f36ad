import type { ServerResponse } from 'node:http';
import { randomId, sendBytes, sendEmpty, sendJson, parseContentRange, type EmuRequest } from '../common/http.ts';
import { md5Hex, sha1Hex, sha256Hex } from '../common/hashes.ts';
import { boundaryOf, parseMultipart } from '../common/multipart.ts';
import { retryAfterHeader, ServiceEmulator, type AuthContext, type ServiceOptions } from '../common/service.ts';
import { parseQuery, QueryError } from './query.ts';

/**
 * A Google Drive API v3 emulator, in memory, built from Google's published documentation:
 * - Files resource, list/get/create/update/copy/delete/export:
 *   https://developers.google.com/drive/api/reference/rest/v3/files
 * - Search query language: https://developers.google.com/drive/api/guides/search-files
 * - Upload file data (multipart and resumable uploads, 308 Resume Incomplete, Range, chunk sizes
 *   in multiples of 256 KiB): https://developers.google.com/drive/api/guides/manage-uploads
 * - Download and export (binary files with alt=media and Range; Google Workspace documents only
 *   through files.export, 10 MB export limit): https://developers.google.com/drive/api/guides/manage-downloads
 * - Export MIME types: https://developers.google.com/drive/api/guides/ref-export-formats
 * - About resource (storageQuota, exportFormats; `fields` is required):
 *   https://developers.google.com/drive/api/reference/rest/v3/about
 * - Shared drives (supportsAllDrives, includeItemsFromAllDrives, corpora=drive, driveId):
 *   https://developers.google.com/drive/api/guides/enable-shareddrives and
 *   https://developers.google.com/drive/api/reference/rest/v3/drives
 * - Resolve errors (error body shape, 401 authError, 403 userRateLimitExceeded / rateLimitExceeded,
 *   429, 403 storageQuotaExceeded, 404 notFound, fileNotDownloadable, exportSizeLimitExceeded):
 *   https://developers.google.com/drive/api/guides/handle-errors
 * - Usage limits (750 GB uploaded per user per day across My Drive and shared drives):
 *   https://developers.google.com/drive/api/guides/limits
 *   The daily cap answers 403 userRateLimitExceeded with the message "User rate limit exceeded."
 *   (the form clients observe for it in practice).
 *
 * Departures, on purpose: the `fields` selector is accepted but every field is returned; exported
 * documents are placeholder bytes (not real Office files); ids are random strings.
 */

export const FOLDER_MIME = 'application/vnd.google-apps.folder';
export const GOOGLE_DOC_MIME = 'application/vnd.google-apps.document';
export const GOOGLE_SHEET_MIME = 'application/vnd.google-apps.spreadsheet';
export const GOOGLE_SLIDES_MIME = 'application/vnd.google-apps.presentation';

export const EXPORT_FORMATS: Record<string, string[]> = {
  [GOOGLE_DOC_MIME]: [
    'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    'application/vnd.oasis.opendocument.text',
    'application/rtf',
    'application/pdf',
    'text/plain',
    'application/zip',
    'application/epub+zip',
    'text/markdown',
  ],
  [GOOGLE_SHEET_MIME]: [
    'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    'application/vnd.oasis.opendocument.spreadsheet',
    'application/pdf',
    'application/zip',
    'text/csv',
    'text/tab-separated-values',
  ],
  [GOOGLE_SLIDES_MIME]: [
    'application/vnd.openxmlformats-officedocument.presentationml.presentation',
    'application/vnd.oasis.opendocument.presentation',
    'application/pdf',
    'text/plain',
  ],
};

const EXPORT_LIMIT = 10 * 1024 * 1024;
const CHUNK_GRANULARITY = 256 * 1024;
const GB = 1024 * 1024 * 1024;

export interface DriveFile {
  id: string;
  name: string;
  mimeType: string;
  parents: string[];
  /** Set for items in a shared drive. */
  driveId?: string;
  owner: string;
  sharedWith: Set<string>;
  /** Readers only may not change shared items. */
  readOnlyFor: Set<string>;
  content?: Buffer;
  /** Text of a Google Workspace document (what an export contains). */
  docText?: string;
  /** Pretend export size (to exercise the 10 MB export limit). */
  exportSize?: number;
  createdTime: number;
  modifiedTime: number;
  trashed: boolean;
  version: number;
}

interface SharedDrive {
  id: string;
  name: string;
  members: Set<string>;
}

interface Account {
  user: string;
  rootId: string;
  permissionId: string;
  quotaLimit: number;
  uploadedToday: number;
}

interface UploadSession {
  id: string;
  user: string;
  /** Metadata given at initiation. */
  meta: Record<string, unknown>;
  /** Existing file being updated. */
  fileId?: string;
  contentType: string;
  declaredLength?: number;
  received: Buffer[];
  receivedBytes: number;
  query: URLSearchParams;
}

export interface GoogleDriveEmulatorOptions extends ServiceOptions {
  /** Bytes a user may upload per day (Drive: 750 GB). */
  dailyUploadCapBytes?: number;
}

export class GoogleDriveEmulator extends ServiceEmulator {
  readonly files = new Map<string, DriveFile>();
  /** Parent id -> child ids (kept in step with `files`, so listing a folder does not scan everything). */
  private readonly children = new Map<string, Set<string>>();
  readonly drives = new Map<string, SharedDrive>();
  private readonly accounts = new Map<string, Account>();
  private readonly sessions = new Map<string, UploadSession>();
  dailyUploadCapBytes: number;
  /** An upper bound of the bytes stored (quota checks skip the exact sum while far below the limit). */
  private bytesStored = 0;
  /** Resumable upload chunks received (tests assert large files went through sessions). */
  chunkPuts = 0;

  constructor(options: GoogleDriveEmulatorOptions) {
    super(options);
    this.dailyUploadCapBytes = options.dailyUploadCapBytes ?? 750 * GB;
    const r = (
      m: string,
      p: string,
      h: (req: EmuRequest, res: ServerResponse, a: AuthContext) => Promise<void> | void,
    ) => this.route(m, p, h);
    r('GET', '/drive/v3/about', (req, res, a) => this.about(req, res, a));
    r('GET', '/drive/v3/drives', (req, res, a) => this.listDrives(req, res, a));
    r('GET', '/drive/v3/drives/:id', (req, res, a) => this.getDrive(req, res, a));
    r('GET', '/drive/v3/files', (req, res, a) => this.list(req, res, a));
    r('POST', '/drive/v3/files', (req, res, a) => this.createMetadata(req, res, a));
    r('DELETE', '/drive/v3/files/trash', (req, res, a) => this.emptyTrash(req, res, a));
    r('GET', '/drive/v3/files/:id', (req, res, a) => this.get(req, res, a));
    r('PATCH', '/drive/v3/files/:id', (req, res, a) => this.update(req, res, a));
    r('DELETE', '/drive/v3/files/:id', (req, res, a) => this.delete(req, res, a));
    r('POST', '/drive/v3/files/:id/copy', (req, res, a) => this.copy(req, res, a));
    r('GET', '/drive/v3/files/:id/export', (req, res, a) => this.export(req, res, a));
    r('POST', '/upload/drive/v3/files', (req, res, a) => this.uploadCreate(req, res, a));
    r('PATCH', '/upload/drive/v3/files/:id', (req, res, a) => this.uploadUpdate(req, res, a));
    // The session URI carries its own authority (upload_id); clients send it as given.
    this.route('PUT', '/upload/drive/v3/files', (req, res) => this.uploadChunk(req, res), { public: true });
    this.route('PUT', '/upload/drive/v3/files/:id', (req, res) => this.uploadChunk(req, res), { public: true });
  }

  // ---------- error bodies (handle-errors guide) ----------

  private error(
    res: ServerResponse,
    code: number,
    reason: string,
    message: string,
    extra: Record<string, string> = {},
    domain = 'global',
  ): void {
    sendJson(res, code, { error: { code, message, errors: [{ domain, reason, message }] } }, extra);
  }

  private notFound(res: ServerResponse, id: string): void {
    this.error(res, 404, 'notFound', `File not found: ${id}.`, {}, 'global');
  }

  protected sendRateLimited(_req: EmuRequest, res: ServerResponse, seconds: number, variant?: string): void {
    const headers = { 'retry-after': retryAfterHeader(seconds) };
    if (variant === '429') {
      return this.error(res, 429, 'rateLimitExceeded', 'Rate limit exceeded.', headers, 'usageLimits');
    }
    this.error(
      res,
      403,
      variant === 'rateLimitExceeded' ? 'rateLimitExceeded' : 'userRateLimitExceeded',
      'User Rate Limit Exceeded. Rate of requests for user exceed configured project quota.',
      headers,
      'usageLimits',
    );
  }

  protected sendUnauthorized(_req: EmuRequest, res: ServerResponse): void {
    sendJson(
      res,
      401,
      {
        error: {
          code: 401,
          message: 'Request had invalid authentication credentials. Expected OAuth 2 access token.',
          errors: [
            {
              domain: 'global',
              reason: 'authError',
              message: 'Invalid Credentials',
              locationType: 'header',
              location: 'Authorization',
            },
          ],
          status: 'UNAUTHENTICATED',
        },
      },
      { 'www-authenticate': 'Bearer realm="https://accounts.google.com/", error="invalid_token"' },
    );
  }

  protected sendServerError(_req: EmuRequest, res: ServerResponse, status: number): void {
    this.error(res, status, 'backendError', 'Backend Error');
  }

  protected sendNoRoute(_req: EmuRequest, res: ServerResponse): void {
    this.error(res, 404, 'notFound', 'Not Found');
  }

  private addFile(f: DriveFile): void {
    this.files.set(f.id, f);
    for (const p of f.parents) {
      let set = this.children.get(p);
      if (!set) this.children.set(p, (set = new Set()));
      set.add(f.id);
    }
  }

  private setParents(f: DriveFile, parents: string[]): void {
    for (const p of f.parents) this.children.get(p)?.delete(f.id);
    f.parents = parents;
    for (const p of parents) {
      let set = this.children.get(p);
      if (!set) this.children.set(p, (set = new Set()));
      set.add(f.id);
    }
  }

  private dropFile(id: string): void {
    const f = this.files.get(id);
    if (!f) return;
    for (const p of f.parents) this.children.get(p)?.delete(id);
    this.children.delete(id);
    this.files.delete(id);
  }

  // ---------- accounts and seeding helpers (for tests) ----------

  account(user: string): Account {
    let acc = this.accounts.get(user);
    if (!acc) {
      const rootId = `0A${randomId(17)}`;
      acc = { user, rootId, permissionId: randomId(20, '0123456789'), quotaLimit: 15 * GB, uploadedToday: 0 };
      this.accounts.set(user, acc);
      const now = Date.now();
      this.addFile({
        id: rootId,
        name: 'My Drive',
        mimeType: FOLDER_MIME,
        parents: [],
        owner: user,
        sharedWith: new Set(),
        readOnlyFor: new Set(),
        createdTime: now,
        modifiedTime: now,
        trashed: false,
        version: 1,
      });
    }
    return acc;
  }

  rootId(user: string): string {
    return this.account(user).rootId;
  }

  setQuota(user: string, limitBytes: number): void {
    this.account(user).quotaLimit = limitBytes;
  }

  /** Resets the daily upload counters (a new day). */
  newDay(): void {
    for (const acc of this.accounts.values()) acc.uploadedToday = 0;
  }

  createSharedDrive(name: string, members: string[]): string {
    const id = `0A${randomId(17)}PVA`;
    this.drives.set(id, { id, name, members: new Set(members) });
    const now = Date.now();
    this.addFile({
      id,
      name,
      mimeType: FOLDER_MIME,
      parents: [],
      driveId: id,
      owner: members[0] ?? '',
      sharedWith: new Set(),
      readOnlyFor: new Set(),
      createdTime: now,
      modifiedTime: now,
      trashed: false,
      version: 1,
    });
    return id;
  }

  /** Adds a file or folder directly (test setup). */
  seed(
    owner: string,
    parentId: string,
    name: string,
    init: { content?: Buffer; mimeType?: string; docText?: string; exportSize?: number; modifiedTime?: number } = {},
  ): DriveFile {
    this.account(owner);
    const parent = this.files.get(parentId);
    const now = Date.now();
    const file: DriveFile = {
      id: randomId(33),
      name,
      mimeType: init.mimeType ?? (init.content ? 'application/octet-stream' : FOLDER_MIME),
      parents: [parentId],
      ...(parent?.driveId ? { driveId: parent.driveId } : {}),
      owner,
      sharedWith: new Set(),
      readOnlyFor: new Set(),
      ...(init.content ? { content: init.content } : {}),
      ...(init.docText !== undefined ? { docText: init.docText } : {}),
      ...(init.exportSize !== undefined ? { exportSize: init.exportSize } : {}),
      createdTime: now,
      modifiedTime: init.modifiedTime ?? now,
      trashed: false,
      version: 1,
    };
    this.addFile(file);
    this.bytesStored += init.content?.length ?? 0;
    return file;
  }

  /** Every binary file under a folder path of a user's My Drive ("/a/b"), by relative path (tests verify with it). */
  filesUnder(user: string, path: string): Map<string, Buffer> {
    let id = this.rootId(user);
    for (const seg of path.split('/').filter(Boolean)) {
      const next = [...(this.children.get(id) ?? [])]
        .map((c) => this.files.get(c)!)
        .find((f) => f.name === seg && !f.trashed);
      if (!next) return new Map();
      id = next.id;
    }
    const out = new Map<string, Buffer>();
    const walk = (folder: string, rel: string) => {
      for (const cid of this.children.get(folder) ?? []) {
        const f = this.files.get(cid)!;
        if (f.trashed) continue;
        if (f.mimeType === FOLDER_MIME) walk(f.id, `${rel}/${f.name}`);
        else if (f.content) out.set(`${rel}/${f.name}`, f.content);
      }
    };
    walk(id, '');
    return out;
  }

  /** Shares an item with another user, read-only unless `writer`. */
  share(fileId: string, user: string, writer = false): void {
    const f = this.files.get(fileId);
    if (!f) throw new Error(`no file ${fileId}`);
    f.sharedWith.add(user);
    if (!writer) f.readOnlyFor.add(user);
  }

  // ---------- visibility ----------

  private isTrashed(f: DriveFile): boolean {
    let cur: DriveFile | undefined = f;
    for (let depth = 0; cur && depth < 100; depth++) {
      if (cur.trashed) return true;
      cur = cur.parents[0] ? this.files.get(cur.parents[0]) : undefined;
    }
    return false;
  }

  /** Shared directly with the user, or inside a folder shared with them. */
  private sharedAccess(f: DriveFile, user: string): 'none' | 'reader' | 'writer' {
    let cur: DriveFile | undefined = f;
    for (let depth = 0; cur && depth < 100; depth++) {
      if (cur.sharedWith.has(user)) return cur.readOnlyFor.has(user) ? 'reader' : 'writer';
      cur = cur.parents[0] ? this.files.get(cur.parents[0]) : undefined;
    }
    return 'none';
  }

  private canSee(f: DriveFile, user: string, allDrives: boolean): boolean {
    if (f.driveId) return allDrives && (this.drives.get(f.driveId)?.members.has(user) ?? false);
    return f.owner === user || this.sharedAccess(f, user) !== 'none';
  }

  private canEdit(f: DriveFile, user: string): boolean {
    if (f.driveId) return this.drives.get(f.driveId)?.members.has(user) ?? false;
    return f.owner === user || this.sharedAccess(f, user) === 'writer';
  }

  private lookup(req: EmuRequest, user: string, id: string): DriveFile | undefined {
    const realId = id === 'root' ? this.rootId(user) : id;
    const f = this.files.get(realId);
    if (!f || !this.canSee(f, user, req.query('supportsAllDrives') === 'true')) return undefined;
    return f;
  }

  // ---------- representation ----------

  resource(f: DriveFile, user: string): Record<string, unknown> {
    const isFolder = f.mimeType === FOLDER_MIME;
    const isGoogle = f.mimeType.startsWith('application/vnd.google-apps.');
    const editable = this.canEdit(f, user);
    const out: Record<string, unknown> = {
      kind: 'drive#file',
      id: f.id,
      name: f.name,
      mimeType: f.mimeType,
      parents: f.parents,
      createdTime: new Date(f.createdTime).toISOString(),
      modifiedTime: new Date(f.modifiedTime).toISOString(),
      trashed: this.isTrashed(f),
      explicitlyTrashed: f.trashed,
      version: String(f.version),
      ownedByMe: !f.driveId && f.owner === user,
      shared: f.sharedWith.size > 0,
      capabilities: {
        canEdit: editable,
        canTrash: editable,
        canDelete: editable,
        canCopy: !isFolder,
        canDownload: true,
      },
    };
    if (f.driveId) out.driveId = f.driveId;
    if (!f.driveId && f.owner !== user && this.sharedAccess(f, user) !== 'none' && f.sharedWith.has(user)) {
      out.sharedWithMeTime = new Date(f.createdTime).toISOString();
    }
    if (!isFolder && !isGoogle && f.content) {
      out.size = String(f.content.length);
      out.md5Checksum = md5Hex(f.content);
      out.sha1Checksum = sha1Hex(f.content);
      out.sha256Checksum = sha256Hex(f.content);
      out.headRevisionId = `rev${f.version}`;
    }
    if (isGoogle && !isFolder) {
      const links: Record<string, string> = {};
      for (const mt of EXPORT_FORMATS[f.mimeType] ?? []) {
        links[mt] = `${this.url}/drive/v3/files/${f.id}/export?mimeType=${encodeURIComponent(mt)}`;
      }
      out.exportLinks = links;
    }
    return out;
  }

  private queryFile(
    f: DriveFile,
    user: string,
  ): { name: string; mimeType: string; parents: string[]; trashed: boolean; sharedWithMe: boolean } {
    return {
      name: f.name,
      mimeType: f.mimeType,
      parents: f.parents,
      trashed: this.isTrashed(f),
      sharedWithMe: !f.driveId && f.owner !== user && f.sharedWith.has(user),
    };
  }

  private usage(user: string): { usage: number; trash: number } {
    let usage = 0;
    let trash = 0;
    for (const f of this.files.values()) {
      if (f.owner !== user || f.driveId || !f.content) continue;
      usage += f.content.length;
      if (this.isTrashed(f)) trash += f.content.length;
    }
    return { usage, trash };
  }

  // ---------- handlers ----------

  private about(req: EmuRequest, res: ServerResponse, a: AuthContext): void {
    if (!req.query('fields')) {
      return this.error(res, 400, 'required', "The 'fields' parameter is required for this method.");
    }
    const acc = this.account(a.user);
    const { usage, trash } = this.usage(a.user);
    sendJson(res, 200, {
      kind: 'drive#about',
      user: {
        kind: 'drive#user',
        displayName: a.user.split('@')[0],
        emailAddress: a.user,
        permissionId: acc.permissionId,
        me: true,
      },
      storageQuota: {
        limit: String(acc.quotaLimit),
        usage: String(usage),
        usageInDrive: String(usage),
        usageInDriveTrash: String(trash),
      },
      maxUploadSize: String(5 * 1024 * GB),
      exportFormats: EXPORT_FORMATS,
    });
  }

  private listDrives(_req: EmuRequest, res: ServerResponse, a: AuthContext): void {
    const drives = [...this.drives.values()].filter((d) => d.members.has(a.user));
    sendJson(res, 200, {
      kind: 'drive#driveList',
      drives: drives.map((d) => ({ kind: 'drive#drive', id: d.id, name: d.name })),
    });
  }

  private getDrive(req: EmuRequest, res: ServerResponse, a: AuthContext): void {
    const d = this.drives.get(req.params.id ?? '');
    if (!d || !d.members.has(a.user))
      return this.error(res, 404, 'notFound', `Shared drive not found: ${req.params.id}`);
    sendJson(res, 200, { kind: 'drive#drive', id: d.id, name: d.name });
  }

  private list(req: EmuRequest, res: ServerResponse, a: AuthContext): void {
    const allDrives = req.query('includeItemsFromAllDrives') === 'true' && req.query('supportsAllDrives') === 'true';
    const corpora = req.query('corpora') ?? 'user';
    const driveId = req.query('driveId');
    if (corpora === 'drive' && !driveId)
      return this.error(
        res,
        400,
        'invalid',
        'The driveId parameter must be specified if and only if corpora is set to drive.',
      );
    if (driveId && !allDrives) {
      return this.error(
        res,
        403,
        'teamDrivesParameterNotSupported',
        'includeItemsFromAllDrives and supportsAllDrives must be true when driveId is set.',
      );
    }
    let predicate: (f: ReturnType<GoogleDriveEmulator['queryFile']>) => boolean = () => true;
    const q = req.query('q');
    if (q) {
      try {
        predicate = parseQuery(q);
      } catch (err) {
        if (err instanceof QueryError) {
          return sendJson(res, 400, {
            error: {
              code: 400,
              message: 'Invalid Value',
              errors: [
                {
                  domain: 'global',
                  reason: 'invalid',
                  message: 'Invalid Value',
                  locationType: 'parameter',
                  location: 'q',
                },
              ],
            },
          });
        }
        throw err;
      }
    }
    const pageSize = Math.min(Math.max(Number(req.query('pageSize') ?? 100) || 100, 1), 1000);
    const matches: DriveFile[] = [];
    // A query that starts with "'<id>' in parents and ..." only needs that folder's children.
    const topLevel = (q ?? '').replace(/'(?:[^'\\]|\\.)*'/g, "''").replace(/\([^()]*\)/g, '()');
    const parentMatch =
      q && !/\bor\b/i.test(topLevel) ? /^\s*'((?:[^'\\]|\\.)*)' in parents(\s+and\s|\s*$)/.exec(q) : null;
    const candidates = parentMatch
      ? [...(this.children.get(parentMatch[1]!.replace(/\\(.)/g, '$1')) ?? [])]
          .map((id) => this.files.get(id)!)
          .filter(Boolean)
      : this.files.values();
    for (const f of candidates) {
      if (f.parents.length === 0) continue; // roots are not listed
      if (driveId && f.driveId !== driveId) continue;
      if (!driveId && corpora === 'user' && f.driveId && !allDrives) continue;
      if (!this.canSee(f, a.user, allDrives)) continue;
      if (!predicate(this.queryFile(f, a.user))) continue;
      matches.push(f);
    }
    if ((req.query('orderBy') ?? '').includes('name')) {
      matches.sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
    }
    const token = req.query('pageToken');
    const offset = token ? Number(Buffer.from(token, 'base64url').toString('utf8').split(':')[1]) : 0;
    if (token && !Number.isFinite(offset)) return this.error(res, 400, 'invalid', 'Invalid Value');
    const page = matches.slice(offset, offset + pageSize);
    const body: Record<string, unknown> = {
      kind: 'drive#fileList',
      incompleteSearch: false,
      files: page.map((f) => this.resource(f, a.user)),
    };
    if (offset + pageSize < matches.length)
      body.nextPageToken = Buffer.from(`page:${offset + pageSize}:${randomId(6)}`).toString('base64url');
    sendJson(res, 200, body);
  }

  private get(req: EmuRequest, res: ServerResponse, a: AuthContext): void {
    const f = this.lookup(req, a.user, req.params.id ?? '');
    if (!f) return this.notFound(res, req.params.id ?? '');
    if (req.query('alt') !== 'media') return sendJson(res, 200, this.resource(f, a.user));
    if (f.mimeType === FOLDER_MIME || f.mimeType.startsWith('application/vnd.google-apps.')) {
      return this.error(
        res,
        403,
        'fileNotDownloadable',
        'Only files with binary content can be downloaded. Use Export with Docs Editors files.',
      );
    }
    sendBytes(req, res, f.content ?? Buffer.alloc(0), {}, f.mimeType);
  }

  private export(req: EmuRequest, res: ServerResponse, a: AuthContext): void {
    const f = this.lookup(req, a.user, req.params.id ?? '');
    if (!f) return this.notFound(res, req.params.id ?? '');
    const mimeType = req.query('mimeType') ?? '';
    const formats = EXPORT_FORMATS[f.mimeType];
    if (!formats) return this.error(res, 403, 'fileNotExportable', 'Export only supports Docs Editors files.');
    if (!formats.includes(mimeType))
      return this.error(res, 400, 'badRequest', 'The requested conversion is not supported.');
    const body = exportBytes(f, mimeType);
    if ((f.exportSize ?? body.length) > EXPORT_LIMIT) {
      return this.error(res, 403, 'exportSizeLimitExceeded', 'This file is too large to be exported.');
    }
    sendBytes(req, res, body, {}, mimeType);
  }

  private checkParentWritable(
    res: ServerResponse,
    user: string,
    parentIds: string[],
    allDrives: boolean,
  ): DriveFile | undefined {
    const parentId = parentIds[0] ?? this.rootId(user);
    const parent = this.files.get(parentId === 'root' ? this.rootId(user) : parentId);
    if (!parent || !this.canSee(parent, user, allDrives) || parent.mimeType !== FOLDER_MIME) {
      this.notFound(res, parentId);
      return undefined;
    }
    if (!this.canEdit(parent, user)) {
      this.error(
        res,
        403,
        'insufficientFilePermissions',
        'The user does not have sufficient permissions for this file.',
      );
      return undefined;
    }
    return parent;
  }

  private newFile(
    user: string,
    parent: DriveFile,
    meta: Record<string, unknown>,
    content: Buffer | undefined,
    fallbackType: string,
  ): DriveFile {
    const now = Date.now();
    const modified = typeof meta.modifiedTime === 'string' ? Date.parse(meta.modifiedTime) : now;
    const f: DriveFile = {
      id: randomId(33),
      name: typeof meta.name === 'string' ? meta.name : 'Untitled',
      mimeType: typeof meta.mimeType === 'string' ? meta.mimeType : fallbackType,
      parents: [parent.id],
      ...(parent.driveId ? { driveId: parent.driveId } : {}),
      owner: parent.driveId ? user : parent.owner === user ? user : parent.owner,
      sharedWith: new Set(),
      readOnlyFor: new Set(),
      ...(content ? { content } : {}),
      createdTime: now,
      modifiedTime: Number.isFinite(modified) ? modified : now,
      trashed: false,
      version: 1,
    };
    if (f.mimeType === FOLDER_MIME) delete f.content;
    else if (!f.mimeType.startsWith('application/vnd.google-apps.')) f.content ??= Buffer.alloc(0);
    this.addFile(f);
    return f;
  }

  private async createMetadata(req: EmuRequest, res: ServerResponse, a: AuthContext): Promise<void> {
    const meta = await req.json<Record<string, unknown>>();
    const allDrives = req.query('supportsAllDrives') === 'true';
    const parent = this.checkParentWritable(res, a.user, (meta.parents as string[] | undefined) ?? [], allDrives);
    if (!parent) return;
    const f = this.newFile(a.user, parent, meta, undefined, 'application/octet-stream');
    sendJson(res, 200, this.resource(f, a.user));
  }

  /** Quota and the daily upload cap, checked before accepting bytes. */
  private admit(res: ServerResponse, user: string, bytes: number, driveId: string | undefined): boolean {
    const acc = this.account(user);
    if (acc.uploadedToday + bytes > this.dailyUploadCapBytes) {
      this.error(res, 403, 'userRateLimitExceeded', 'User rate limit exceeded.', {}, 'usageLimits');
      return false;
    }
    this.bytesStored += bytes;
    if (!driveId && this.bytesStored > acc.quotaLimit && this.usage(user).usage + bytes > acc.quotaLimit) {
      this.error(
        res,
        403,
        'storageQuotaExceeded',
        "The user's Drive storage quota has been exceeded.",
        {},
        'usageLimits',
      );
      return false;
    }
    return true;
  }

  private async uploadCreate(req: EmuRequest, res: ServerResponse, a: AuthContext): Promise<void> {
    const type = req.query('uploadType');
    const allDrives = req.query('supportsAllDrives') === 'true';
    if (type === 'multipart' || type === 'media') {
      const { meta, content, contentType } = await this.readSimpleUpload(req, type);
      const parent = this.checkParentWritable(res, a.user, (meta.parents as string[] | undefined) ?? [], allDrives);
      if (!parent) return;
      if (!this.admit(res, a.user, content.length, parent.driveId)) return;
      this.account(a.user).uploadedToday += content.length;
      const f = this.newFile(a.user, parent, meta, content, contentType);
      return sendJson(res, 200, this.resource(f, a.user));
    }
    if (type === 'resumable') {
      const meta = await req.json<Record<string, unknown>>();
      const parent = this.checkParentWritable(res, a.user, (meta.parents as string[] | undefined) ?? [], allDrives);
      if (!parent) return;
      return this.startSession(req, res, a, meta, undefined, parent.driveId);
    }
    this.error(res, 400, 'badRequest', 'Invalid uploadType');
  }

  private async uploadUpdate(req: EmuRequest, res: ServerResponse, a: AuthContext): Promise<void> {
    const f = this.lookup(req, a.user, req.params.id ?? '');
    if (!f) return this.notFound(res, req.params.id ?? '');
    if (!this.canEdit(f, a.user))
      return this.error(
        res,
        403,
        'insufficientFilePermissions',
        'The user does not have sufficient permissions for this file.',
      );
    const type = req.query('uploadType');
    if (type === 'multipart' || type === 'media') {
      const { meta, content } = await this.readSimpleUpload(req, type);
      if (!this.admit(res, a.user, content.length, f.driveId)) return;
      this.account(a.user).uploadedToday += content.length;
      this.applyMeta(f, meta);
      f.content = content;
      f.version++;
      if (typeof meta.modifiedTime !== 'string') f.modifiedTime = Date.now();
      return sendJson(res, 200, this.resource(f, a.user));
    }
    if (type === 'resumable') {
      const meta = await req.json<Record<string, unknown>>();
      return this.startSession(req, res, a, meta, f.id, f.driveId);
    }
    this.error(res, 400, 'badRequest', 'Invalid uploadType');
  }

  private async readSimpleUpload(
    req: EmuRequest,
    type: string,
  ): Promise<{ meta: Record<string, unknown>; content: Buffer; contentType: string }> {
    const body = await req.body();
    if (type === 'media')
      return { meta: {}, content: body, contentType: req.header('content-type') ?? 'application/octet-stream' };
    const boundary = boundaryOf(req.header('content-type'));
    const parts = boundary ? parseMultipart(body, boundary) : [];
    const meta = parts[0] ? (JSON.parse(parts[0].body.toString('utf8') || '{}') as Record<string, unknown>) : {};
    return {
      meta,
      content: parts[1]?.body ?? Buffer.alloc(0),
      contentType: parts[1]?.headers['content-type'] ?? 'application/octet-stream',
    };
  }

  private startSession(
    req: EmuRequest,
    res: ServerResponse,
    a: AuthContext,
    meta: Record<string, unknown>,
    fileId: string | undefined,
    driveId: string | undefined,
  ): void {
    const declared = req.header('x-upload-content-length');
    const declaredLength = declared !== undefined ? Number(declared) : undefined;
    if (declaredLength !== undefined && !this.admit(res, a.user, declaredLength, driveId)) return;
    const id = randomId(40);
    const query = new URLSearchParams(req.url.searchParams);
    this.sessions.set(id, {
      id,
      user: a.user,
      meta,
      ...(fileId ? { fileId } : {}),
      contentType:
        req.header('x-upload-content-type') ??
        (typeof meta.mimeType === 'string' ? meta.mimeType : 'application/octet-stream'),
      ...(declaredLength !== undefined ? { declaredLength } : {}),
      received: [],
      receivedBytes: 0,
      query,
    });
    const location = new URL(`${this.url}/upload/drive/v3/files${fileId ? `/${fileId}` : ''}`);
    location.searchParams.set('uploadType', 'resumable');
    location.searchParams.set('upload_id', id);
    if (query.get('supportsAllDrives')) location.searchParams.set('supportsAllDrives', query.get('supportsAllDrives')!);
    sendEmpty(res, 200, { location: location.toString() });
  }

  private async uploadChunk(req: EmuRequest, res: ServerResponse): Promise<void> {
    const session = this.sessions.get(req.query('upload_id') ?? '');
    const body = await req.body();
    if (!session) return this.error(res, 404, 'notFound', 'Upload session not found or expired.');
    const range = parseContentRange(req.header('content-range'));
    const rangeHeader = (): Record<string, string> =>
      session.receivedBytes > 0 ? { range: `bytes=0-${session.receivedBytes - 1}` } : {};
    if (!range && body.length > 0) return this.error(res, 400, 'badContent', 'Content-Range header is required.');
    // Status query: "bytes */total" (or "bytes */*") with an empty body.
    if (!range || range.start === undefined) {
      if (range?.total !== undefined && range.total === session.receivedBytes)
        return this.finish(res, session, range.total);
      return sendEmpty(res, 308, rangeHeader());
    }
    if (range.end - range.start + 1 !== body.length)
      return this.error(res, 400, 'badContent', 'Content-Range does not match the body length.');
    if (range.start !== session.receivedBytes) return sendEmpty(res, 308, rangeHeader());
    const isLast = range.total !== undefined && range.end + 1 === range.total;
    if (!isLast && body.length % CHUNK_GRANULARITY !== 0) {
      return this.error(res, 400, 'badContent', 'Chunk size must be a multiple of 256 KiB except for the final chunk.');
    }
    if (session.declaredLength !== undefined && range.end + 1 > session.declaredLength) {
      return this.error(res, 400, 'badContent', 'Upload exceeds the declared length.');
    }
    this.chunkPuts++;
    session.received.push(body);
    session.receivedBytes += body.length;
    if (isLast) return this.finish(res, session, range.total!);
    sendEmpty(res, 308, rangeHeader());
  }

  private finish(res: ServerResponse, session: UploadSession, total: number): void {
    const content = Buffer.concat(session.received, total);
    const user = session.user;
    let driveId: string | undefined;
    if (session.fileId) driveId = this.files.get(session.fileId)?.driveId;
    else {
      const parentId = ((session.meta.parents as string[] | undefined) ?? [])[0] ?? this.rootId(user);
      driveId = this.files.get(parentId === 'root' ? this.rootId(user) : parentId)?.driveId;
    }
    if (session.declaredLength === undefined && !this.admit(res, user, total, driveId)) {
      this.sessions.delete(session.id);
      return;
    }
    this.sessions.delete(session.id);
    this.account(user).uploadedToday += total;
    let f: DriveFile | undefined;
    if (session.fileId) {
      f = this.files.get(session.fileId);
      if (!f) return this.notFound(res, session.fileId);
      this.applyMeta(f, session.meta);
      f.content = content;
      f.version++;
      if (typeof session.meta.modifiedTime !== 'string') f.modifiedTime = Date.now();
    } else {
      const parentId = ((session.meta.parents as string[] | undefined) ?? [])[0] ?? this.rootId(user);
      const parent = this.files.get(parentId === 'root' ? this.rootId(user) : parentId);
      if (!parent) return this.notFound(res, parentId);
      f = this.newFile(user, parent, session.meta, content, session.contentType);
    }
    sendJson(res, 200, this.resource(f, user));
  }

  private applyMeta(f: DriveFile, meta: Record<string, unknown>): void {
    if (typeof meta.name === 'string') f.name = meta.name;
    if (typeof meta.mimeType === 'string' && f.mimeType !== FOLDER_MIME) f.mimeType = meta.mimeType;
    if (typeof meta.modifiedTime === 'string') {
      const t = Date.parse(meta.modifiedTime);
      if (Number.isFinite(t)) f.modifiedTime = t;
    }
    if (typeof meta.trashed === 'boolean') f.trashed = meta.trashed;
  }

  private isAncestor(ancestorId: string, f: DriveFile): boolean {
    let cur: DriveFile | undefined = f;
    for (let depth = 0; cur && depth < 100; depth++) {
      if (cur.id === ancestorId) return true;
      cur = cur.parents[0] ? this.files.get(cur.parents[0]) : undefined;
    }
    return false;
  }

  private async update(req: EmuRequest, res: ServerResponse, a: AuthContext): Promise<void> {
    const f = this.lookup(req, a.user, req.params.id ?? '');
    if (!f) return this.notFound(res, req.params.id ?? '');
    if (!this.canEdit(f, a.user))
      return this.error(
        res,
        403,
        'insufficientFilePermissions',
        'The user does not have sufficient permissions for this file.',
      );
    const meta = await req.json<Record<string, unknown>>();
    const add = (req.query('addParents') ?? '').split(',').filter(Boolean);
    const remove = (req.query('removeParents') ?? '').split(',').filter(Boolean);
    for (const pid of add) {
      const p = this.files.get(pid);
      if (!p || p.mimeType !== FOLDER_MIME || !this.canSee(p, a.user, req.query('supportsAllDrives') === 'true'))
        return this.notFound(res, pid);
      if (this.isAncestor(f.id, p))
        return this.error(res, 400, 'badRequest', 'The parent would create a cycle in the directory graph.');
    }
    this.applyMeta(f, meta);
    if (add.length || remove.length) {
      this.setParents(f, [
        ...f.parents.filter((p) => !remove.includes(p)),
        ...add.filter((p) => !f.parents.includes(p)),
      ]);
      const driveId = this.files.get(f.parents[0] ?? '')?.driveId;
      if (driveId) f.driveId = driveId;
      else delete f.driveId;
    }
    f.version++;
    sendJson(res, 200, this.resource(f, a.user));
  }

  private deleteTree(id: string): void {
    for (const child of [...(this.children.get(id) ?? [])]) this.deleteTree(child);
    this.dropFile(id);
  }

  private delete(req: EmuRequest, res: ServerResponse, a: AuthContext): void {
    const f = this.lookup(req, a.user, req.params.id ?? '');
    if (!f) return this.notFound(res, req.params.id ?? '');
    if (f.parents.length === 0) return this.error(res, 403, 'cannotDeleteRoot', 'The root folder cannot be deleted.');
    if (!this.canEdit(f, a.user))
      return this.error(
        res,
        403,
        'insufficientFilePermissions',
        'The user does not have sufficient permissions for this file.',
      );
    this.deleteTree(f.id);
    sendEmpty(res, 204);
  }

  private emptyTrash(_req: EmuRequest, res: ServerResponse, a: AuthContext): void {
    for (const f of [...this.files.values()]) {
      if (f.owner === a.user && !f.driveId && f.trashed && this.files.has(f.id)) this.deleteTree(f.id);
    }
    sendEmpty(res, 204);
  }

  private async copy(req: EmuRequest, res: ServerResponse, a: AuthContext): Promise<void> {
    const f = this.lookup(req, a.user, req.params.id ?? '');
    if (!f) return this.notFound(res, req.params.id ?? '');
    if (f.mimeType === FOLDER_MIME)
      return this.error(res, 403, 'cannotCopyFile', 'This file cannot be copied by the user.');
    const meta = await req.json<Record<string, unknown>>();
    const parentIds = (meta.parents as string[] | undefined) ?? f.parents;
    const parent = this.checkParentWritable(res, a.user, parentIds, req.query('supportsAllDrives') === 'true');
    if (!parent) return;
    const size = f.content?.length ?? 0;
    if (!this.admit(res, a.user, size, parent.driveId)) return;
    this.account(a.user).uploadedToday += size; // the 750 GB cap includes copies
    const copy = this.newFile(
      a.user,
      parent,
      {
        name: meta.name ?? f.name,
        mimeType: f.mimeType,
        ...(meta.modifiedTime ? { modifiedTime: meta.modifiedTime } : {}),
      },
      f.content ? Buffer.from(f.content) : undefined,
      f.mimeType,
    );
    if (f.docText !== undefined) copy.docText = f.docText;
    if (typeof meta.modifiedTime !== 'string') copy.modifiedTime = f.modifiedTime;
    sendJson(res, 200, this.resource(copy, a.user));
  }
}

/** Placeholder bytes for an exported Google document (the emulator does not render Office files). */
export function exportBytes(f: { name: string; mimeType: string; docText?: string }, exportMime: string): Buffer {
  return Buffer.from(`Exported ${f.mimeType} "${f.name}" as ${exportMime}\n${f.docText ?? ''}`, 'utf8');
}
