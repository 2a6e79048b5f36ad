import type { ServerResponse } from 'node:http';
import { parseContentRange, randomId, sendBytes, sendEmpty, sendJson, type EmuRequest } from '../common/http.ts';
import { sha1Base64, sha1Hex } from '../common/hashes.ts';
import { boundaryOf, parseMultipart } from '../common/multipart.ts';
import { retryAfterHeader, ServiceEmulator, type AuthContext, type ServiceOptions } from '../common/service.ts';

/**
 * A Box Platform API (2.0) emulator, in memory, built from Box's published documentation:
 * - Folders: get, list items (offset and marker paging), create, update (rename/move), delete
 *   (recursive), copy: https://developer.box.com/reference/resources/folder,
 *   https://developer.box.com/reference/get-folders-id-items, post-folders, put-folders-id,
 *   delete-folders-id, post-folders-id-copy
 * - Files: get, update, delete (to the trash), copy, download (302 to a download URL, Range):
 *   https://developer.box.com/reference/resources/file, get-files-id, put-files-id,
 *   delete-files-id, post-files-id-copy, get-files-id-content
 * - Uploads: direct upload up to 50 MB (multipart `attributes` then `file`, Content-MD5 carrying
 *   a SHA-1), new versions, and chunked upload sessions for files of 20 MB and more (server-chosen
 *   part_size, parts with a `digest: sha=<base64 SHA-1>` and Content-Range, commit with the whole
 *   file's digest, 202 + Retry-After while parts are processed):
 *   https://developer.box.com/guides/uploads/, https://developer.box.com/guides/uploads/chunked/,
 *   https://developer.box.com/reference/post-files-content, post-files-id-content,
 *   post-files-upload-sessions, put-files-upload-sessions-id, post-files-upload-sessions-id-commit,
 *   delete-files-upload-sessions-id, get-files-upload-sessions-id-parts
 * - Trash: https://developer.box.com/guides/trash/ and get-folders-trash-items (offset paging,
 *   trashed_at; a trashed item's path_collection is the Trash folder, its parent where it was),
 *   post-files-id and post-folders-id (restore: to the original folder, else to `parent.id` when
 *   that folder is gone; optional `name`; 409 item_name_in_use when the name is taken there),
 *   delete-files-id-trash, delete-folders-id-trash
 * - Search: https://developer.box.com/reference/get-search (query, ancestor_folder_ids,
 *   content_types=name, type, offset paging up to 200 a page; total_count)
 * - Users (space_amount, space_used): https://developer.box.com/reference/get-users-me
 * - Errors (type "error", status, code, message, context_info; 401 with WWW-Authenticate and no
 *   body; 409 item_name_in_use with conflicts; 429 rate_limit_exceeded with Retry-After):
 *   https://developer.box.com/guides/api-calls/permissions-and-errors/common-errors/ and
 *   https://developer.box.com/guides/api-calls/permissions-and-errors/rate-limits/
 * - Names (no "/" or "\", no leading or trailing spaces, not "." or "..", 255 characters):
 *   https://developer.box.com/reference/resources/file (name field)
 *
 * Departures, on purpose: `fields` is accepted and every field returned; search matches a name
 * holding the query (case ignored) instead of Box's index of words, and sees new items at once; part_size and the
 * chunked minimum are options (Box's are 8 MiB and 20 MB) so tests can stay small.
 */

export interface BoxItem {
  id: string;
  type: 'file' | 'folder';
  name: string;
  parentId?: string;
  owner: string;
  content?: Buffer;
  created: number;
  modified: number;
  contentModified: number;
  etag: number;
  trashed: boolean;
  /** When it was trashed (ms). */
  trashedAt?: number;
}

interface Session {
  id: string;
  user: string;
  folderId?: string;
  fileId?: string;
  name: string;
  size: number;
  partSize: number;
  parts: Map<number, { part_id: string; offset: number; size: number; sha1: string; data: Buffer }>;
  expires: number;
}

export interface BoxEmulatorOptions extends ServiceOptions {
  /** Box answers 8 MiB. */
  partSize?: number;
  /** Box's chunked API takes files of 20 MB and more. */
  chunkedMinimum?: number;
  /** The direct upload limit (50 MB). */
  directUploadLimit?: number;
}

export class BoxEmulator extends ServiceEmulator {
  readonly items = new Map<string, BoxItem>();
  private readonly sessions = new Map<string, Session>();
  private readonly downloads = new Map<string, string>();
  private readonly spaceAmount = new Map<string, number>();
  partSize: number;
  chunkedMinimum: number;
  directUploadLimit: number;
  /** Commits that answer 202 (parts still processing) before succeeding. */
  commitsPending = 0;
  /** Parts received (tests assert large files used sessions). */
  partPuts = 0;
  private nextId = 1000;

  constructor(options: BoxEmulatorOptions) {
    super(options);
    this.partSize = options.partSize ?? 8 * 1024 * 1024;
    this.chunkedMinimum = options.chunkedMinimum ?? 20_000_000;
    this.directUploadLimit = options.directUploadLimit ?? 50 * 1024 * 1024;
    const r = (
      m: string,
      p: string,
      h: (req: EmuRequest, res: ServerResponse, a: AuthContext) => Promise<void> | void,
    ) => this.route(m, p, h);
    r('GET', '/2.0/users/me', (_q, res, a) => this.me(res, a));
    r('GET', '/2.0/folders/trash/items', (req, res, a) => this.trashItems(req, res, a));
    r('GET', '/2.0/search', (req, res, a) => this.search(req, res, a));
    r('POST', '/2.0/folders/:id', (req, res, a) => this.restore(req, res, a, 'folder'));
    r('POST', '/2.0/files/:id', (req, res, a) => this.restore(req, res, a, 'file'));
    r('GET', '/2.0/folders/:id', (req, res, a) => this.getItem(req, res, a, 'folder'));
    r('GET', '/2.0/folders/:id/items', (req, res, a) => this.listItems(req, res, a));
    r('POST', '/2.0/folders', (req, res, a) => this.createFolder(req, res, a));
    r('PUT', '/2.0/folders/:id', (req, res, a) => this.update(req, res, a, 'folder'));
    r('DELETE', '/2.0/folders/:id', (req, res, a) => this.delete(req, res, a, 'folder'));
    r('DELETE', '/2.0/folders/:id/trash', (req, res, a) => this.purge(req, res, a, 'folder'));
    r('GET', '/2.0/folders/:id/trash', (req, res, a) => this.getTrashed(req, res, a, 'folder'));
    r('GET', '/2.0/files/:id/trash', (req, res, a) => this.getTrashed(req, res, a, 'file'));
    r('POST', '/2.0/folders/:id/copy', (req, res, a) => this.copy(req, res, a, 'folder'));
    r('GET', '/2.0/files/:id', (req, res, a) => this.getItem(req, res, a, 'file'));
    r('PUT', '/2.0/files/:id', (req, res, a) => this.update(req, res, a, 'file'));
    r('DELETE', '/2.0/files/:id', (req, res, a) => this.delete(req, res, a, 'file'));
    r('DELETE', '/2.0/files/:id/trash', (req, res, a) => this.purge(req, res, a, 'file'));
    r('POST', '/2.0/files/:id/copy', (req, res, a) => this.copy(req, res, a, 'file'));
    r('GET', '/2.0/files/:id/content', (req, res, a) => this.contentRedirect(req, res, a));
    r('POST', '/api/2.0/files/content', (req, res, a) => this.directUpload(req, res, a, undefined));
    r('POST', '/api/2.0/files/:id/content', (req, res, a) => this.directUpload(req, res, a, req.params.id));
    r('POST', '/api/2.0/files/upload_sessions', (req, res, a) => this.createSession(req, res, a, undefined));
    r('POST', '/api/2.0/files/:id/upload_sessions', (req, res, a) => this.createSession(req, res, a, req.params.id));
    r('PUT', '/api/2.0/files/upload_sessions/:sid', (req, res, a) => this.uploadPart(req, res, a));
    r('GET', '/api/2.0/files/upload_sessions/:sid/parts', (req, res, a) => this.listParts(req, res, a));
    r('POST', '/api/2.0/files/upload_sessions/:sid/commit', (req, res, a) => this.commit(req, res, a));
    r('DELETE', '/api/2.0/files/upload_sessions/:sid', (req, res, a) => this.abortSession(req, res, a));
    this.route('GET', '/dl/:token', (req, res) => this.download(req, res), { public: true });
  }

  // ---------- errors ----------

  private err(
    res: ServerResponse,
    status: number,
    code: string,
    message: string,
    extra: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ): void {
    sendJson(
      res,
      status,
      {
        type: 'error',
        status,
        code,
        help_url: 'https://developer.box.com/guides/api-calls/permissions-and-errors/common-errors/',
        message,
        request_id: randomId(12),
        ...extra,
      },
      headers,
    );
  }

  protected sendRateLimited(_req: EmuRequest, res: ServerResponse, seconds: number): void {
    this.err(
      res,
      429,
      'rate_limit_exceeded',
      'Request rate limit exceeded, please try again later',
      {},
      { 'retry-after': retryAfterHeader(seconds) },
    );
  }

  protected sendUnauthorized(_req: EmuRequest, res: ServerResponse): void {
    sendEmpty(res, 401, {
      'www-authenticate':
        'Bearer realm="Service", error="invalid_token", error_description="The access token provided is invalid."',
    });
  }

  protected sendServerError(_req: EmuRequest, res: ServerResponse, status: number): void {
    this.err(res, status, 'unavailable', 'Unavailable');
  }

  protected sendNoRoute(_req: EmuRequest, res: ServerResponse): void {
    this.err(res, 404, 'not_found', 'Not Found');
  }

  // ---------- model ----------

  private rootId(user: string): string {
    const id = `0:${user}`;
    if (!this.items.has(id)) {
      const now = Date.now();
      this.items.set(id, {
        id,
        type: 'folder',
        name: 'All Files',
        owner: user,
        created: now,
        modified: now,
        contentModified: now,
        etag: 0,
        trashed: false,
      });
      this.spaceAmount.set(user, 10 * 1024 ** 3);
    }
    return id;
  }

  /** Box addresses every user's root as folder "0". */
  private resolveId(user: string, id: string): string {
    return id === '0' ? this.rootId(user) : id;
  }

  private publicId(item: BoxItem): string {
    return item.id.startsWith('0:') ? '0' : item.id;
  }

  setSpace(user: string, bytes: number): void {
    this.rootId(user);
    this.spaceAmount.set(user, bytes);
  }

  private isTrashed(item: BoxItem): boolean {
    let cur: BoxItem | undefined = item;
    for (let n = 0; cur && n < 100; n++) {
      if (cur.trashed) return true;
      cur = cur.parentId ? this.items.get(cur.parentId) : undefined;
    }
    return false;
  }

  private find(user: string, id: string, type?: 'file' | 'folder'): BoxItem | 'trashed' | undefined {
    const item = this.items.get(this.resolveId(user, id));
    if (!item || item.owner !== user || (type && item.type !== type)) return undefined;
    if (this.isTrashed(item)) return 'trashed';
    return item;
  }

  private notFound(res: ServerResponse, found: 'trashed' | undefined): void {
    if (found === 'trashed') return this.err(res, 404, 'trashed', 'Item is trashed');
    this.err(res, 404, 'not_found', 'Not Found');
  }

  private children(parentId: string, includeTrashed = false): BoxItem[] {
    const out: BoxItem[] = [];
    for (const i of this.items.values()) if (i.parentId === parentId && (includeTrashed || !i.trashed)) out.push(i);
    return out;
  }

  private childNamed(parentId: string, name: string): BoxItem | undefined {
    const lower = name.toLowerCase();
    return this.children(parentId).find((c) => c.name.toLowerCase() === lower);
  }

  private static invalidName(name: string): boolean {
    return (
      !name ||
      name.length > 255 ||
      name === '.' ||
      name === '..' ||
      /[/\\]/.test(name) ||
      // eslint-disable-next-line no-control-regex
      /[\x00-\x1f]/.test(name) ||
      /^\s|\s$/.test(name)
    );
  }

  private conflict(res: ServerResponse, existing: BoxItem): void {
    this.err(res, 409, 'item_name_in_use', 'Item with the same name already exists', {
      context_info: { conflicts: [this.mini(existing)] },
    });
  }

  private mini(i: BoxItem): Record<string, unknown> {
    return {
      type: i.type,
      id: this.publicId(i),
      etag: String(i.etag),
      sequence_id: String(i.etag),
      name: i.name,
      ...(i.type === 'file' ? { sha1: sha1Hex(i.content ?? Buffer.alloc(0)) } : {}),
    };
  }

  private pathCollection(i: BoxItem): Record<string, unknown> {
    const entries: Record<string, unknown>[] = [];
    let cur = i.parentId ? this.items.get(i.parentId) : undefined;
    while (cur) {
      entries.unshift({ type: 'folder', id: this.publicId(cur), name: cur.name });
      cur = cur.parentId ? this.items.get(cur.parentId) : undefined;
    }
    return { total_count: entries.length, entries };
  }

  private treeSize(i: BoxItem): number {
    if (i.type === 'file') return i.content?.length ?? 0;
    return this.children(i.id).reduce((n, c) => n + this.treeSize(c), 0);
  }

  resource(i: BoxItem): Record<string, unknown> {
    const parent = i.parentId ? this.items.get(i.parentId) : undefined;
    return {
      ...this.mini(i),
      size: this.treeSize(i),
      created_at: boxTime(i.created),
      modified_at: boxTime(i.modified),
      content_created_at: boxTime(i.created),
      content_modified_at: boxTime(i.contentModified),
      parent: parent ? { type: 'folder', id: this.publicId(parent), name: parent.name } : null,
      path_collection: this.pathCollection(i),
      item_status: this.isTrashed(i) ? 'trashed' : 'active',
      owned_by: { type: 'user', id: '1', login: i.owner },
    };
  }

  private newItem(
    user: string,
    type: 'file' | 'folder',
    parentId: string,
    name: string,
    content?: Buffer,
    contentModified?: number,
  ): BoxItem {
    const now = Date.now();
    const item: BoxItem = {
      id: String(this.nextId++ * 7919),
      type,
      name,
      parentId,
      owner: user,
      ...(content ? { content } : {}),
      created: now,
      modified: now,
      contentModified: contentModified ?? now,
      etag: 0,
      trashed: false,
    };
    this.items.set(item.id, item);
    return item;
  }

  private used(user: string): number {
    let n = 0;
    for (const i of this.items.values()) if (i.owner === user && i.type === 'file') n += i.content?.length ?? 0;
    return n;
  }

  private room(res: ServerResponse, user: string, bytes: number): boolean {
    this.rootId(user);
    if (this.used(user) + bytes > (this.spaceAmount.get(user) ?? Infinity)) {
      this.err(res, 403, 'storage_limit_exceeded', 'Account storage limit reached');
      return false;
    }
    return true;
  }

  // ---------- handlers ----------

  private me(res: ServerResponse, a: AuthContext): void {
    this.rootId(a.user);
    sendJson(res, 200, {
      type: 'user',
      id: String(Math.abs(hashCode(a.user))),
      name: a.user.split('@')[0],
      login: a.user,
      space_amount: this.spaceAmount.get(a.user),
      space_used: this.used(a.user),
      max_upload_size: 5 * 1024 ** 3,
      status: 'active',
    });
  }

  private getItem(req: EmuRequest, res: ServerResponse, a: AuthContext, type: 'file' | 'folder'): void {
    const item = this.find(a.user, req.params.id ?? '', type);
    if (!item || item === 'trashed') return this.notFound(res, item);
    sendJson(res, 200, this.resource(item));
  }

  private listItems(req: EmuRequest, res: ServerResponse, a: AuthContext): void {
    const folder = this.find(a.user, req.params.id ?? '', 'folder');
    if (!folder || folder === 'trashed') return this.notFound(res, folder);
    const limit = Math.min(Math.max(Number(req.query('limit') ?? 100) || 100, 1), 1000);
    const all = this.children(folder.id).sort((x, y) =>
      x.type !== y.type ? (x.type === 'folder' ? -1 : 1) : x.name.localeCompare(y.name),
    );
    if (req.query('usemarker') === 'true') {
      const marker = req.query('marker');
      const start = marker ? Number(Buffer.from(marker, 'base64url').toString()) : 0;
      const page = all.slice(start, start + limit);
      const body: Record<string, unknown> = { entries: page.map((i) => this.resource(i)), limit };
      if (start + limit < all.length) body.next_marker = Buffer.from(String(start + limit)).toString('base64url');
      return sendJson(res, 200, body);
    }
    const offset = Number(req.query('offset') ?? 0) || 0;
    sendJson(res, 200, {
      total_count: all.length,
      entries: all.slice(offset, offset + limit).map((i) => this.resource(i)),
      offset,
      limit,
      order: [
        { by: 'type', direction: 'ASC' },
        { by: 'name', direction: 'ASC' },
      ],
    });
  }

  /** A trashed item as Box shows it: in the Trash folder, its parent the folder it was in. */
  private trashedResource(i: BoxItem): Record<string, unknown> {
    return {
      ...this.resource(i),
      item_status: 'trashed',
      trashed_at: boxTime(i.trashedAt ?? i.modified),
      path_collection: { total_count: 1, entries: [{ type: 'folder', id: '1', name: 'Trash' }] },
    };
  }

  private trashItems(req: EmuRequest, res: ServerResponse, a: AuthContext): void {
    const entries = [...this.items.values()]
      .filter((i) => i.owner === a.user && i.trashed)
      .map((i) => this.trashedResource(i));
    const limit = Math.min(Number(req.query('limit') ?? 100) || 100, 1000);
    const offset = Number(req.query('offset') ?? 0) || 0;
    sendJson(res, 200, { total_count: entries.length, entries: entries.slice(offset, offset + limit), offset, limit });
  }

  private search(req: EmuRequest, res: ServerResponse, a: AuthContext): void {
    const query = (req.query('query') ?? '').toLowerCase();
    if (!query) return this.err(res, 400, 'bad_request', 'query is required');
    const limit = Number(req.query('limit') ?? 30) || 30;
    if (limit > 200) return this.err(res, 400, 'bad_request', 'limit must be at most 200');
    const offset = Number(req.query('offset') ?? 0) || 0;
    const type = req.query('type');
    const ancestors = (req.query('ancestor_folder_ids') ?? '')
      .split(',')
      .filter(Boolean)
      .map((id) => this.resolveId(a.user, id));
    const below = (i: BoxItem) => {
      if (ancestors.length === 0) return true;
      for (let cur = i.parentId ? this.items.get(i.parentId) : undefined; cur;) {
        if (ancestors.includes(cur.id)) return true;
        cur = cur.parentId ? this.items.get(cur.parentId) : undefined;
      }
      return false;
    };
    const hits = [...this.items.values()].filter(
      (i) =>
        i.owner === a.user &&
        !i.id.startsWith('0:') &&
        !this.isTrashed(i) &&
        (!type || i.type === type) &&
        i.name.toLowerCase().includes(query) &&
        below(i),
    );
    sendJson(res, 200, {
      type: 'search_results_items',
      total_count: hits.length,
      limit,
      offset,
      entries: hits.slice(offset, offset + limit).map((i) => this.resource(i)),
    });
  }

  private async restore(req: EmuRequest, res: ServerResponse, a: AuthContext, type: 'file' | 'folder'): Promise<void> {
    const item = this.items.get(req.params.id ?? '');
    if (!item || item.owner !== a.user || item.type !== type) return this.err(res, 404, 'not_found', 'Not Found');
    if (!item.trashed) return this.err(res, 404, 'not_trashed', 'Item is not in the trash');
    const body = await req.json<{ name?: string; parent?: { id?: string } }>();
    const name = body.name ?? item.name;
    if (BoxEmulator.invalidName(name)) return this.err(res, 400, 'item_name_invalid', 'Item name invalid');
    let parent = item.parentId ? this.items.get(item.parentId) : undefined;
    if (!parent || this.isTrashed(parent)) {
      // The parent given is used only when the original folder is gone.
      const other = body.parent?.id ? this.find(a.user, body.parent.id, 'folder') : undefined;
      if (!other || other === 'trashed')
        return this.err(res, 403, 'access_denied_insufficient_permissions', 'The original folder is gone');
      parent = other;
    }
    const clash = this.childNamed(parent.id, name);
    if (clash) return this.conflict(res, clash);
    item.trashed = false;
    delete item.trashedAt;
    item.name = name;
    item.parentId = parent.id;
    item.etag++;
    sendJson(res, 201, this.resource(item));
  }

  private async createFolder(req: EmuRequest, res: ServerResponse, a: AuthContext): Promise<void> {
    const body = await req.json<{ name?: string; parent?: { id?: string } }>();
    const name = body.name ?? '';
    if (BoxEmulator.invalidName(name)) return this.err(res, 400, 'item_name_invalid', 'Item name invalid');
    const parent = this.find(a.user, body.parent?.id ?? '', 'folder');
    if (!parent || parent === 'trashed') return this.notFound(res, parent);
    const existing = this.childNamed(parent.id, name);
    if (existing) return this.conflict(res, existing);
    const folder = this.newItem(a.user, 'folder', parent.id, name);
    sendJson(res, 201, this.resource(folder));
  }

  private async update(req: EmuRequest, res: ServerResponse, a: AuthContext, type: 'file' | 'folder'): Promise<void> {
    const item = this.find(a.user, req.params.id ?? '', type);
    if (!item || item === 'trashed') return this.notFound(res, item);
    if (item.id.startsWith('0:'))
      return this.err(res, 403, 'access_denied_insufficient_permissions', 'Access denied - insufficient permission');
    const body = await req.json<{ name?: string; parent?: { id?: string } }>();
    const name = body.name ?? item.name;
    if (BoxEmulator.invalidName(name)) return this.err(res, 400, 'item_name_invalid', 'Item name invalid');
    let parentId = item.parentId!;
    if (body.parent?.id !== undefined) {
      const p = this.find(a.user, body.parent.id, 'folder');
      if (!p || p === 'trashed') return this.notFound(res, p);
      for (let cur: BoxItem | undefined = p; cur; cur = cur.parentId ? this.items.get(cur.parentId) : undefined) {
        if (cur.id === item.id) return this.err(res, 400, 'bad_request', 'Cannot move a folder into itself');
      }
      parentId = p.id;
    }
    const clash = this.childNamed(parentId, name);
    if (clash && clash.id !== item.id) return this.conflict(res, clash);
    item.name = name;
    item.parentId = parentId;
    item.etag++;
    item.modified = Date.now();
    sendJson(res, 200, this.resource(item));
  }

  private delete(req: EmuRequest, res: ServerResponse, a: AuthContext, type: 'file' | 'folder'): void {
    const item = this.find(a.user, req.params.id ?? '', type);
    if (!item || item === 'trashed') return this.notFound(res, item);
    if (item.id.startsWith('0:'))
      return this.err(res, 403, 'access_denied_insufficient_permissions', 'Access denied - insufficient permission');
    if (type === 'folder' && req.query('recursive') !== 'true' && this.children(item.id).length > 0) {
      return this.err(res, 400, 'folder_not_empty', 'Cannot delete - folder not empty');
    }
    item.trashed = true;
    item.trashedAt = Date.now();
    item.etag++;
    sendEmpty(res, 204);
  }

  private getTrashed(req: EmuRequest, res: ServerResponse, a: AuthContext, type: 'file' | 'folder'): void {
    const item = this.items.get(req.params.id ?? '');
    if (!item || item.owner !== a.user || item.type !== type || !item.trashed)
      return this.err(res, 404, 'not_trashed', 'Item is not in the trash');
    sendJson(res, 200, this.trashedResource(item));
  }

  private purgeTree(id: string): void {
    for (const c of this.children(id, true)) this.purgeTree(c.id);
    this.items.delete(id);
  }

  private purge(req: EmuRequest, res: ServerResponse, a: AuthContext, type: 'file' | 'folder'): void {
    const item = this.items.get(req.params.id ?? '');
    if (!item || item.owner !== a.user || item.type !== type || !item.trashed)
      return this.err(res, 404, 'not_trashed', 'Item is not in the trash');
    this.purgeTree(item.id);
    sendEmpty(res, 204);
  }

  private copyTree(src: BoxItem, parentId: string, name: string): BoxItem {
    const copy = this.newItem(
      src.owner,
      src.type,
      parentId,
      name,
      src.content ? Buffer.from(src.content) : undefined,
      src.contentModified,
    );
    if (src.type === 'folder') for (const c of this.children(src.id)) this.copyTree(c, copy.id, c.name);
    return copy;
  }

  private async copy(req: EmuRequest, res: ServerResponse, a: AuthContext, type: 'file' | 'folder'): Promise<void> {
    const item = this.find(a.user, req.params.id ?? '', type);
    if (!item || item === 'trashed') return this.notFound(res, item);
    const body = await req.json<{ name?: string; parent?: { id?: string } }>();
    const parent = this.find(a.user, body.parent?.id ?? '', 'folder');
    if (!parent || parent === 'trashed') return this.notFound(res, parent);
    const name = body.name ?? item.name;
    if (BoxEmulator.invalidName(name)) return this.err(res, 400, 'item_name_invalid', 'Item name invalid');
    const clash = this.childNamed(parent.id, name);
    if (clash) return this.conflict(res, clash);
    if (!this.room(res, a.user, this.treeSize(item))) return;
    sendJson(res, 201, this.resource(this.copyTree(item, parent.id, name)));
  }

  private contentRedirect(req: EmuRequest, res: ServerResponse, a: AuthContext): void {
    const item = this.find(a.user, req.params.id ?? '', 'file');
    if (!item || item === 'trashed') return this.notFound(res, item);
    const token = randomId(24);
    this.downloads.set(token, item.id);
    res.writeHead(302, { location: `${this.url}/dl/${token}`, 'content-length': '0' });
    res.end();
  }

  private download(req: EmuRequest, res: ServerResponse): void {
    const id = this.downloads.get(req.params.token ?? '');
    const item = id ? this.items.get(id) : undefined;
    if (!item || this.isTrashed(item)) return this.err(res, 404, 'not_found', 'Not Found');
    sendBytes(req, res, item.content ?? Buffer.alloc(0));
  }

  private async directUpload(
    req: EmuRequest,
    res: ServerResponse,
    a: AuthContext,
    fileId: string | undefined,
  ): Promise<void> {
    const boundary = boundaryOf(req.header('content-type'));
    const body = await req.body();
    if (!boundary) return this.err(res, 400, 'bad_request', 'Expected multipart/form-data');
    if (body.length > this.directUploadLimit + 64 * 1024)
      return this.err(res, 413, 'request_entity_too_large', 'Use chunked upload sessions for files over 50 MB');
    const parts = parseMultipart(body, boundary);
    const attrPart = parts.find((p) => p.name === 'attributes');
    const filePart = parts.find((p) => p.name === 'file');
    if (!attrPart || !filePart) return this.err(res, 400, 'bad_request', 'attributes and file parts are required');
    const attrs = JSON.parse(attrPart.body.toString('utf8')) as {
      name?: string;
      parent?: { id?: string };
      content_modified_at?: string;
    };
    const content = filePart.body;
    const md5 = req.header('content-md5');
    if (md5 && md5.toLowerCase() !== sha1Hex(content))
      return this.err(res, 412, 'sha1_mismatch', 'The SHA-1 of the content does not match Content-MD5');
    const cm = attrs.content_modified_at ? Date.parse(attrs.content_modified_at) : undefined;
    if (fileId) {
      const file = this.find(a.user, fileId, 'file');
      if (!file || file === 'trashed') return this.notFound(res, file);
      if (!this.room(res, a.user, content.length - (file.content?.length ?? 0))) return;
      if (attrs.name && attrs.name !== file.name) {
        const clash = this.childNamed(file.parentId!, attrs.name);
        if (clash && clash.id !== file.id) return this.conflict(res, clash);
        file.name = attrs.name;
      }
      file.content = content;
      file.etag++;
      file.modified = Date.now();
      file.contentModified = cm !== undefined && Number.isFinite(cm) ? cm : file.modified;
      return sendJson(res, 201, { total_count: 1, entries: [this.resource(file)] });
    }
    const name = attrs.name ?? filePart.filename ?? '';
    if (BoxEmulator.invalidName(name)) return this.err(res, 400, 'item_name_invalid', 'Item name invalid');
    const parent = this.find(a.user, attrs.parent?.id ?? '', 'folder');
    if (!parent || parent === 'trashed') return this.notFound(res, parent);
    const clash = this.childNamed(parent.id, name);
    if (clash) return this.conflict(res, clash);
    if (!this.room(res, a.user, content.length)) return;
    const file = this.newItem(
      a.user,
      'file',
      parent.id,
      name,
      content,
      cm !== undefined && Number.isFinite(cm) ? cm : undefined,
    );
    sendJson(res, 201, { total_count: 1, entries: [this.resource(file)] });
  }

  private sessionResource(s: Session): Record<string, unknown> {
    const base = `${this.url}/api/2.0/files/upload_sessions/${s.id}`;
    return {
      id: s.id,
      type: 'upload_session',
      session_expires_at: boxTime(s.expires),
      part_size: s.partSize,
      total_parts: Math.ceil(s.size / s.partSize),
      num_parts_processed: s.parts.size,
      session_endpoints: {
        upload_part: base,
        commit: `${base}/commit`,
        abort: base,
        list_parts: `${base}/parts`,
        status: base,
        log_event: `${base}/log`,
      },
    };
  }

  private async createSession(
    req: EmuRequest,
    res: ServerResponse,
    a: AuthContext,
    fileId: string | undefined,
  ): Promise<void> {
    const body = await req.json<{ folder_id?: string; file_size?: number; file_name?: string }>();
    if (typeof body.file_size !== 'number')
      return this.err(res, 400, 'missing_file_size', 'file_size was not provided');
    if (body.file_size < this.chunkedMinimum)
      return this.err(res, 400, 'file_size_too_small', 'file_size is below minimum file size for uploads via this API');
    let name = body.file_name ?? '';
    let folderId: string | undefined;
    if (fileId) {
      const file = this.find(a.user, fileId, 'file');
      if (!file || file === 'trashed') return this.notFound(res, file);
      name ||= file.name;
      if (!this.room(res, a.user, body.file_size - (file.content?.length ?? 0))) return;
    } else {
      if (!body.file_name) return this.err(res, 400, 'missing_file_name', 'file_name was not provided');
      if (BoxEmulator.invalidName(name)) return this.err(res, 400, 'item_name_invalid', 'file_name is not valid');
      const parent = this.find(a.user, body.folder_id ?? '', 'folder');
      if (!parent || parent === 'trashed')
        return this.err(res, 404, 'invalid_parameter', 'The folder_id value represents a folder that does not exist.');
      const clash = this.childNamed(parent.id, name);
      if (clash) return this.conflict(res, clash);
      if (!this.room(res, a.user, body.file_size)) return;
      folderId = parent.id;
    }
    const s: Session = {
      id: randomId(32, '0123456789ABCDEF'),
      user: a.user,
      ...(folderId ? { folderId } : {}),
      ...(fileId ? { fileId } : {}),
      name,
      size: body.file_size,
      partSize: this.partSize,
      parts: new Map(),
      expires: Date.now() + 7 * 86_400_000,
    };
    this.sessions.set(s.id, s);
    sendJson(res, 201, this.sessionResource(s));
  }

  private async uploadPart(req: EmuRequest, res: ServerResponse, a: AuthContext): Promise<void> {
    const data = await req.body();
    const s = this.sessions.get(req.params.sid ?? '');
    if (!s || s.user !== a.user) return this.err(res, 404, 'not_found', 'Upload session not found');
    const range = parseContentRange(req.header('content-range'));
    if (!range || range.start === undefined || range.total !== s.size)
      return this.err(res, 400, 'bad_request', 'Invalid Content-Range');
    if (range.end - range.start + 1 !== data.length)
      return this.err(res, 400, 'bad_request', 'Content-Range does not match the body');
    const isLast = range.end + 1 === s.size;
    if (
      range.start % s.partSize !== 0 ||
      (!isLast && data.length !== s.partSize) ||
      (isLast && data.length > s.partSize)
    ) {
      return this.err(
        res,
        416,
        'range_not_satisfiable',
        'Each part must be exactly part_size bytes (the last may be smaller) at a multiple of part_size',
      );
    }
    const digest = /^sha=(.+)$/i.exec(req.header('digest') ?? '');
    if (!digest || digest[1] !== sha1Base64(data))
      return this.err(res, 412, 'sha1_mismatch', 'The digest of the part does not match');
    if (s.parts.has(range.start)) return this.err(res, 416, 'range_overlaps_existing_part', 'Part already uploaded');
    this.partPuts++;
    const part = {
      part_id: randomId(8, '0123456789ABCDEF'),
      offset: range.start,
      size: data.length,
      sha1: sha1Hex(data),
      data,
    };
    s.parts.set(range.start, part);
    sendJson(res, 200, { part: { part_id: part.part_id, offset: part.offset, size: part.size, sha1: part.sha1 } });
  }

  private listParts(req: EmuRequest, res: ServerResponse, a: AuthContext): void {
    const s = this.sessions.get(req.params.sid ?? '');
    if (!s || s.user !== a.user) return this.err(res, 404, 'not_found', 'Upload session not found');
    const entries = [...s.parts.values()].sort((x, y) => x.offset - y.offset).map(({ data: _d, ...p }) => p);
    sendJson(res, 200, { entries, limit: 1000, offset: 0, total_count: entries.length });
  }

  private async commit(req: EmuRequest, res: ServerResponse, a: AuthContext): Promise<void> {
    const body = await req.json<{
      parts?: Array<{ part_id: string; offset: number; size: number; sha1?: string }>;
      attributes?: { content_modified_at?: string };
    }>();
    const s = this.sessions.get(req.params.sid ?? '');
    if (!s || s.user !== a.user) return this.err(res, 404, 'not_found', 'Upload session not found');
    if (this.commitsPending > 0) {
      this.commitsPending--;
      return sendEmpty(res, 202, { 'retry-after': '1' });
    }
    const listed = (body.parts ?? []).slice().sort((x, y) => x.offset - y.offset);
    let pos = 0;
    const chunks: Buffer[] = [];
    for (const p of listed) {
      const stored = s.parts.get(p.offset);
      if (!stored || stored.part_id !== p.part_id || stored.size !== p.size || p.offset !== pos) {
        return this.err(res, 400, 'bad_request', 'The parts list does not match the uploaded parts');
      }
      chunks.push(stored.data);
      pos += stored.size;
    }
    if (pos !== s.size)
      return this.err(res, 400, 'bad_request', 'Missing parts: the committed parts do not cover the file');
    const content = Buffer.concat(chunks, pos);
    const digest = /^sha=(.+)$/i.exec(req.header('digest') ?? '');
    if (!digest || digest[1] !== sha1Base64(content))
      return this.err(res, 422, 'upload_session_digest_mismatch', 'The digest of the file does not match');
    this.sessions.delete(s.id);
    const cmRaw = body.attributes?.content_modified_at;
    const cm = cmRaw ? Date.parse(cmRaw) : undefined;
    if (s.fileId) {
      const file = this.items.get(s.fileId);
      if (!file || this.isTrashed(file)) return this.err(res, 404, 'not_found', 'Not Found');
      file.content = content;
      file.etag++;
      file.modified = Date.now();
      file.contentModified = cm !== undefined && Number.isFinite(cm) ? cm : file.modified;
      return sendJson(res, 201, { total_count: 1, entries: [this.resource(file)] });
    }
    const clash = this.childNamed(s.folderId!, s.name);
    if (clash) return this.conflict(res, clash);
    const file = this.newItem(
      a.user,
      'file',
      s.folderId!,
      s.name,
      content,
      cm !== undefined && Number.isFinite(cm) ? cm : undefined,
    );
    sendJson(res, 201, { total_count: 1, entries: [this.resource(file)] });
  }

  private abortSession(req: EmuRequest, res: ServerResponse, a: AuthContext): void {
    const s = this.sessions.get(req.params.sid ?? '');
    if (!s || s.user !== a.user) return this.err(res, 404, 'not_found', 'Upload session not found');
    this.sessions.delete(s.id);
    sendEmpty(res, 204);
  }

  openSessions(): number {
    return this.sessions.size;
  }

  /** Items in a user's trash. */
  trashOf(user: string): BoxItem[] {
    return [...this.items.values()].filter((i) => i.owner === user && i.trashed);
  }

  /** Every file under a folder path of a user's account, by relative path (tests verify with it). */
  filesUnder(user: string, path: string): Map<string, Buffer> {
    let folder = this.items.get(this.rootId(user));
    for (const seg of path.split('/').filter(Boolean)) folder = folder ? this.childNamed(folder.id, seg) : undefined;
    const out = new Map<string, Buffer>();
    const walk = (f: BoxItem, rel: string) => {
      for (const c of this.children(f.id)) {
        if (c.type === 'folder') walk(c, `${rel}/${c.name}`);
        else out.set(`${rel}/${c.name}`, c.content ?? Buffer.alloc(0));
      }
    };
    if (folder?.type === 'folder') walk(folder, '');
    return out;
  }

  /** Adds a file or folder by path (test setup). */
  seed(user: string, path: string, content?: Buffer): BoxItem {
    let parent = this.items.get(this.rootId(user))!;
    const segs = path.split('/').filter(Boolean);
    segs.forEach((seg, i) => {
      const last = i === segs.length - 1;
      const found = this.childNamed(parent.id, seg);
      parent =
        found && !(last && content)
          ? found
          : this.newItem(user, last && content ? 'file' : 'folder', parent.id, seg, last ? content : undefined);
    });
    return parent;
  }
}

/** Box timestamps: ISO 8601 with seconds and an offset. */
function boxTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, '+00:00');
}

function hashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}
