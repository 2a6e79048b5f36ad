import type { ServerResponse } from 'node:http';
import { parseContentRange, randomId, sendBytes, sendEmpty, sendJson, type EmuRequest } from '../common/http.ts';
import { quickXorHash } from '../common/hashes.ts';
import { retryAfterHeader, ServiceEmulator, type AuthContext, type ServiceOptions } from '../common/service.ts';

/**
 * A Microsoft Graph (OneDrive personal, OneDrive for Business / SharePoint) emulator, in memory,
 * built from Microsoft's published documentation:
 * - driveItem resource and its facets (file.hashes, folder.childCount, fileSystemInfo,
 *   parentReference, @microsoft.graph.downloadUrl): https://learn.microsoft.com/graph/api/resources/driveitem
 * - Addressing items by id and by path (`/items/{id}:/{path}:`): https://learn.microsoft.com/graph/onedrive-addressing-driveitems
 * - List children, paging with @odata.nextLink: https://learn.microsoft.com/graph/api/driveitem-list-children
 *   and https://learn.microsoft.com/graph/paging
 * - Create folder with @microsoft.graph.conflictBehavior: https://learn.microsoft.com/graph/api/driveitem-post-children
 * - Simple upload (PUT content): https://learn.microsoft.com/graph/api/driveitem-put-content
 * - Upload sessions (createUploadSession; fragments in order, each a multiple of 320 KiB except the
 *   last, under 60 MiB; 202 with nextExpectedRanges; 201/200 with the item on the last fragment;
 *   no Authorization header on the upload URL; DELETE cancels):
 *   https://learn.microsoft.com/graph/api/driveitem-createuploadsession and
 *   https://learn.microsoft.com/graph/api/resources/uploadsession
 * - Download (302 to a pre-authenticated URL, Range): https://learn.microsoft.com/graph/api/driveitem-get-content
 * - Update / move / rename: https://learn.microsoft.com/graph/api/driveitem-update and driveitem-move
 * - Delete (to the recycle bin) and permanentDelete (business only):
 *   https://learn.microsoft.com/graph/api/driveitem-delete and driveitem-permanentdelete
 * - Copy (202 Accepted + Location monitor URL, asyncJobStatus): https://learn.microsoft.com/graph/api/driveitem-copy,
 *   https://learn.microsoft.com/graph/long-running-actions-overview and
 *   https://learn.microsoft.com/graph/api/resources/asyncjobstatus
 * - Search below a folder (`/items/{id}/search(q='...')`, `/root/search(q=...)`, quotes doubled,
 *   paging with @odata.nextLink; items carry parentReference.path):
 *   https://learn.microsoft.com/graph/api/driveitem-search
 * - The recycle bin is not listed: Graph has no call that lists a drive's deleted items (restore
 *   takes an item id known beforehand, personal drives only: driveitem-restore).
 * - Drive resource and quota: https://learn.microsoft.com/graph/api/resources/drive and resources/quota
 * - hashes resource (quickXorHash is the hash guaranteed on both personal and business):
 *   https://learn.microsoft.com/graph/api/resources/hashes and the QuickXorHash snippet
 *   https://learn.microsoft.com/onedrive/developer/code-snippets/quickxorhash
 * - Errors (error.code, innerError): https://learn.microsoft.com/graph/errors and
 *   https://learn.microsoft.com/onedrive/developer/rest-api/concepts/errors (activityLimitReached,
 *   itemNotFound, nameAlreadyExists, quotaLimitReached, invalidRange)
 * - Throttling (429 or 503 with Retry-After): https://learn.microsoft.com/graph/throttling
 * - Restrictions on names (" * : < > ? / \ |, leading or trailing spaces, trailing period,
 *   reserved names): https://support.microsoft.com/office/restrictions-and-limitations-in-onedrive-and-sharepoint-64883a5d-228e-48f5-b3d2-eb39e07630fa
 *
 * Departures, on purpose: `$select` and `$expand` are accepted and ignored; search matches a name
 * holding the query (case ignored), not file content, and sees new items at once; a completed copy
 * monitor answers 200 with resourceId (clients also handle a 303 to the item).
 */

const FRAGMENT = 320 * 1024;

const MAX_FRAGMENT = 60 * 1024 * 1024;
const SIMPLE_UPLOAD_LIMIT = 250 * 1024 * 1024;
const INVALID_NAME = /["*:<>?/\\|]/;
const RESERVED = /^(\.lock|CON|PRN|AUX|NUL|COM\d|LPT\d|desktop\.ini|_vti_)$/i;

export interface OdItem {
  id: string;
  name: string;
  parentId?: string;
  folder: boolean;
  content?: Buffer;
  mimeType?: string;
  created: number;
  modified: number;
  fsModified: number;
  version: number;
  deleted: boolean;
}

export interface OdDrive {
  id: string;
  owner: string;
  driveType: 'personal' | 'business';
  quotaTotal: number;
  rootId: string;
  items: Map<string, OdItem>;
  nextId: number;
}

interface Session {
  id: string;
  drive: OdDrive;
  parentId: string;
  name: string;
  conflict: string;
  fsModified?: number;
  total?: number;
  received: Buffer[];
  next: number;
  expires: number;
  existingId?: string;
}

interface CopyJob {
  id: string;
  polls: number;
  result: { status: 'completed'; resourceId: string } | { status: 'failed'; code: string; message: string };
}

export interface OneDriveEmulatorOptions extends ServiceOptions {
  /** How many monitor polls answer inProgress before a copy completes. */
  copyPolls?: number;
}

export class OneDriveEmulator extends ServiceEmulator {
  readonly drives = new Map<string, OdDrive>();
  private readonly userDrive = new Map<string, string>();
  private readonly sessions = new Map<string, Session>();
  private readonly jobs = new Map<string, CopyJob>();
  private readonly downloads = new Map<string, { drive: OdDrive; itemId: string }>();
  copyPolls: number;
  /** Fragments received on upload URLs (tests assert large files used sessions). */
  fragmentPuts = 0;
  /** Monitor polls served. */
  monitorPolls = 0;
  /** Search results without parentReference.path (clients must then find the folder by its id). */
  searchOmitsPaths = false;

  constructor(options: OneDriveEmulatorOptions) {
    super(options);
    this.copyPolls = options.copyPolls ?? 2;
    this.route('GET', '/v1.0/me/drive', (req, res, a) => this.getDriveRes(res, this.driveFor(a.user)));
    this.route('GET', '/v1.0/drives/:driveId', (req, res, a) => {
      const d = this.drive(req.params.driveId ?? '', a.user);
      if (!d) return this.err(res, 404, 'itemNotFound', 'The drive could not be found.');
      this.getDriveRes(res, d);
    });
    for (const m of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
      this.route(m, '/v1.0/me/drive/*rest', (req, res, a) => this.itemRoute(req, res, a, this.driveFor(a.user)));
      this.route(m, '/v1.0/drives/:driveId/*rest', (req, res, a) => {
        const d = this.drive(req.params.driveId ?? '', a.user);
        if (!d) return this.err(res, 404, 'itemNotFound', 'The drive could not be found.');
        return this.itemRoute(req, res, a, d);
      });
    }
    this.route('PUT', '/up/:session', (req, res) => this.uploadFragment(req, res), { public: true });
    this.route('GET', '/up/:session', (req, res) => this.sessionStatus(req, res), { public: true });
    this.route('DELETE', '/up/:session', (req, res) => this.cancelSession(req, res), { public: true });
    this.route('GET', '/monitor/:job', (req, res) => this.monitor(req, res), { public: true });
    this.route('GET', '/dl/:token', (req, res) => this.download(req, res), { public: true });
  }

  // ---------- errors ----------

  private err(
    res: ServerResponse,
    status: number,
    code: string,
    message: string,
    headers: Record<string, string> = {},
  ): void {
    sendJson(
      res,
      status,
      {
        error: {
          code,
          message,
          innerError: { date: new Date().toISOString(), 'request-id': randomId(8), 'client-request-id': randomId(8) },
        },
      },
      headers,
    );
  }

  protected sendRateLimited(_req: EmuRequest, res: ServerResponse, seconds: number, variant?: string): void {
    if (variant === '503') {
      return this.err(res, 503, 'serviceNotAvailable', 'Service unavailable', {
        'retry-after': retryAfterHeader(seconds),
      });
    }
    this.err(res, 429, 'activityLimitReached', 'The request has been throttled', {
      'retry-after': retryAfterHeader(seconds),
    });
  }

  protected sendUnauthorized(_req: EmuRequest, res: ServerResponse, reason: string): void {
    this.err(
      res,
      401,
      'InvalidAuthenticationToken',
      reason === 'expired' ? 'Lifetime validation failed, the token is expired.' : 'Access token is empty or invalid.',
      {
        'www-authenticate':
          'Bearer realm="", authorization_uri="https://login.microsoftonline.com/common/oauth2/authorize"',
      },
    );
  }

  protected sendServerError(_req: EmuRequest, res: ServerResponse, status: number): void {
    this.err(res, status, 'generalException', 'An unspecified error has occurred.');
  }

  protected sendNoRoute(_req: EmuRequest, res: ServerResponse): void {
    this.err(res, 400, 'BadRequest', 'Resource not found for the segment.');
  }

  // ---------- drives ----------

  /** Creates (or returns) a user's drive; business drives model OneDrive for Business / SharePoint. */
  createDrive(owner: string, driveType: 'personal' | 'business' = 'personal', quotaTotal = 5 * 1024 ** 4): OdDrive {
    const id = driveType === 'personal' ? randomId(16, '0123456789abcdef') : `b!${randomId(40)}`;
    const rootId =
      driveType === 'personal' ? `${id.toUpperCase()}!101` : `01${randomId(32, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}`;
    const now = Date.now();
    const drive: OdDrive = { id, owner, driveType, quotaTotal, rootId, items: new Map(), nextId: 102 };
    drive.items.set(rootId, {
      id: rootId,
      name: 'root',
      folder: true,
      created: now,
      modified: now,
      fsModified: now,
      version: 1,
      deleted: false,
    });
    this.drives.set(id, drive);
    if (!this.userDrive.has(owner)) this.userDrive.set(owner, id);
    return drive;
  }

  driveFor(user: string): OdDrive {
    const id = this.userDrive.get(user);
    return id ? this.drives.get(id)! : this.createDrive(user);
  }

  private drive(id: string, user: string): OdDrive | undefined {
    const d = this.drives.get(id);
    return d && d.owner === user ? d : undefined;
  }

  private usage(d: OdDrive): { used: number; deleted: number } {
    let used = 0;
    let deleted = 0;
    for (const i of d.items.values()) {
      if (!i.content) continue;
      used += i.content.length;
      if (this.isDeleted(d, i)) deleted += i.content.length;
    }
    return { used, deleted };
  }

  private getDriveRes(res: ServerResponse, d: OdDrive): void {
    const { used, deleted } = this.usage(d);
    sendJson(res, 200, {
      id: d.id,
      driveType: d.driveType,
      owner: { user: { displayName: d.owner.split('@')[0], email: d.owner, id: randomId(8) } },
      quota: { total: d.quotaTotal, used, remaining: Math.max(0, d.quotaTotal - used), deleted, state: 'normal' },
    });
  }

  // ---------- items ----------

  private isDeleted(d: OdDrive, i: OdItem): boolean {
    let cur: OdItem | undefined = i;
    for (let n = 0; cur && n < 100; n++) {
      if (cur.deleted) return true;
      cur = cur.parentId ? d.items.get(cur.parentId) : undefined;
    }
    return false;
  }

  private live(d: OdDrive, id: string): OdItem | undefined {
    const i = d.items.get(id === 'root' ? d.rootId : id);
    return i && !this.isDeleted(d, i) ? i : undefined;
  }

  private children(d: OdDrive, parentId: string): OdItem[] {
    const out: OdItem[] = [];
    for (const i of d.items.values()) if (i.parentId === parentId && !i.deleted) out.push(i);
    return out;
  }

  private childNamed(d: OdDrive, parentId: string, name: string): OdItem | undefined {
    const lower = name.toLowerCase();
    return this.children(d, parentId).find((c) => c.name.toLowerCase() === lower);
  }

  private resolvePath(d: OdDrive, baseId: string, rel: string): OdItem | undefined {
    let cur = this.live(d, baseId);
    for (const seg of rel.split('/').filter(Boolean)) {
      if (!cur || !cur.folder) return undefined;
      cur = this.childNamed(d, cur.id, seg);
    }
    return cur;
  }

  private pathOf(d: OdDrive, i: OdItem): string {
    const segs: string[] = [];
    let cur: OdItem | undefined = i.parentId ? d.items.get(i.parentId) : undefined;
    while (cur && cur.id !== d.rootId) {
      segs.unshift(cur.name);
      cur = cur.parentId ? d.items.get(cur.parentId) : undefined;
    }
    return `/drive/root:${segs.length ? '/' + segs.map(encodeURIComponent).join('/') : ''}`;
  }

  resource(d: OdDrive, i: OdItem): Record<string, unknown> {
    const out: Record<string, unknown> = {
      id: i.id,
      name: i.name,
      eTag: `"{${i.id}},${i.version}"`,
      cTag: `"c:{${i.id}},${i.version}"`,
      createdDateTime: new Date(i.created).toISOString(),
      lastModifiedDateTime: new Date(i.modified).toISOString(),
      fileSystemInfo: {
        createdDateTime: new Date(i.created).toISOString(),
        lastModifiedDateTime: new Date(i.fsModified).toISOString(),
      },
      size: i.folder ? this.treeSize(d, i) : (i.content?.length ?? 0),
    };
    if (i.id === d.rootId) out.root = {};
    if (i.parentId)
      out.parentReference = { driveId: d.id, driveType: d.driveType, id: i.parentId, path: this.pathOf(d, i) };
    if (i.folder) out.folder = { childCount: this.children(d, i.id).length };
    else {
      out.file = {
        mimeType: i.mimeType ?? 'application/octet-stream',
        hashes: { quickXorHash: quickXorHash(i.content ?? Buffer.alloc(0)) },
      };
      const token = randomId(24);
      this.downloads.set(token, { drive: d, itemId: i.id });
      out['@microsoft.graph.downloadUrl'] = `${this.url}/dl/${token}`;
    }
    return out;
  }

  private treeSize(d: OdDrive, folder: OdItem): number {
    let n = 0;
    for (const c of this.children(d, folder.id)) n += c.folder ? this.treeSize(d, c) : (c.content?.length ?? 0);
    return n;
  }

  private checkName(res: ServerResponse, name: string): boolean {
    if (
      !name ||
      INVALID_NAME.test(name) ||
      /^\s|\s$/.test(name) ||
      name.endsWith('.') ||
      RESERVED.test(name) ||
      name.startsWith('~$')
    ) {
      this.err(res, 400, 'invalidRequest', 'The provided name contains invalid characters or is a reserved name.');
      return false;
    }
    return true;
  }

  private newItem(
    d: OdDrive,
    parentId: string,
    name: string,
    folder: boolean,
    content?: Buffer,
    fsModified?: number,
  ): OdItem {
    const now = Date.now();
    const item: OdItem = {
      id:
        d.driveType === 'personal'
          ? `${d.id.toUpperCase()}!${d.nextId++}`
          : `01${randomId(32, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}`,
      name,
      parentId,
      folder,
      ...(content ? { content, mimeType: 'application/octet-stream' } : {}),
      created: now,
      modified: now,
      fsModified: fsModified ?? now,
      version: 1,
      deleted: false,
    };
    d.items.set(item.id, item);
    const parent = d.items.get(parentId);
    if (parent) parent.modified = now;
    return item;
  }

  private uniqueName(d: OdDrive, parentId: string, name: string): string {
    if (!this.childNamed(d, parentId, name)) return name;
    const dot = name.lastIndexOf('.');
    const stem = dot > 0 ? name.slice(0, dot) : name;
    const ext = dot > 0 ? name.slice(dot) : '';
    for (let n = 1; ; n++) {
      const candidate = `${stem} ${n}${ext}`;
      if (!this.childNamed(d, parentId, candidate)) return candidate;
    }
  }

  private roomFor(res: ServerResponse, d: OdDrive, bytes: number): boolean {
    if (this.usage(d).used + bytes > d.quotaTotal) {
      this.err(res, 507, 'quotaLimitReached', 'Insufficient Space Available');
      return false;
    }
    return true;
  }

  /** Parses `root`, `items/{id}`, an optional `:/{path}:` and an optional action. */
  private async itemRoute(req: EmuRequest, res: ServerResponse, _a: AuthContext, d: OdDrive): Promise<void> {
    const rest = req.params.rest ?? '';
    let baseId: string;
    let after: string;
    if (rest === 'root' || rest.startsWith('root:') || rest.startsWith('root/')) {
      baseId = d.rootId;
      after = rest.slice(4);
    } else {
      const m = /^items\/([^/:]+)(.*)$/.exec(rest);
      if (!m) return this.sendNoRoute(req, res);
      baseId = m[1]!;
      after = m[2] ?? '';
    }
    let relPath: string | undefined;
    let action = after;
    if (after.startsWith(':/') || after === ':') {
      const body = after.slice(2);
      const idx = body.lastIndexOf(':');
      relPath = idx >= 0 ? body.slice(0, idx) : body;
      action = idx >= 0 ? body.slice(idx + 1) : '';
    }
    action = action.replace(/^\//, '');
    const method = req.method;

    // Path-addressed creation targets: the parent is the base, the last segment the name.
    if (
      relPath !== undefined &&
      (action === 'content' || action === 'createUploadSession') &&
      (method === 'PUT' || method === 'POST')
    ) {
      const segs = relPath.split('/').filter(Boolean);
      const name = segs.pop() ?? '';
      const parent = this.resolvePath(d, baseId, segs.join('/'));
      if (!parent || !parent.folder) return this.err(res, 404, 'itemNotFound', 'The resource could not be found.');
      if (action === 'content') return this.simpleUpload(req, res, d, parent, name);
      return this.createSession(req, res, d, parent, name);
    }

    const item = relPath !== undefined ? this.resolvePath(d, baseId, relPath) : this.live(d, baseId);
    if (!item) return this.err(res, 404, 'itemNotFound', 'The resource could not be found.');

    if (action === '' && method === 'GET') return sendJson(res, 200, this.resource(d, item));
    if (action === '' && method === 'PATCH') return this.update(req, res, d, item);
    if (action === '' && method === 'DELETE') return this.remove(res, d, item);
    if (action === 'children' && method === 'GET') return this.listChildren(req, res, d, item);
    if (action === 'children' && method === 'POST') return this.createFolder(req, res, d, item);
    if (action === 'content' && method === 'GET') {
      if (item.folder) return this.err(res, 400, 'invalidRequest', 'Cannot download a folder.');
      const token = randomId(24);
      this.downloads.set(token, { drive: d, itemId: item.id });
      res.writeHead(302, { location: `${this.url}/dl/${token}`, 'content-length': '0' });
      return void res.end();
    }
    if (action === 'content' && method === 'PUT') {
      if (item.folder) return this.err(res, 400, 'invalidRequest', 'Cannot upload content to a folder.');
      return this.replaceContent(req, res, d, item);
    }
    if (action === 'createUploadSession' && method === 'POST') {
      const parent = item.parentId ? this.live(d, item.parentId) : undefined;
      if (!parent) return this.err(res, 400, 'invalidRequest', 'Invalid target.');
      return this.createSession(req, res, d, parent, item.name);
    }
    const search = /^search\(q='(.*)'\)$/s.exec(action);
    if (search && method === 'GET') return this.search(req, res, d, item, (search[1] ?? '').replace(/''/g, "'"));
    if (action === 'copy' && method === 'POST') return this.copy(req, res, d, item);
    if (action === 'permanentDelete' && method === 'POST') {
      if (d.driveType === 'personal')
        return this.err(res, 400, 'invalidRequest', 'permanentDelete is not supported on personal drives.');
      this.purge(d, item.id);
      return sendEmpty(res, 204);
    }
    this.sendNoRoute(req, res);
  }

  private listChildren(req: EmuRequest, res: ServerResponse, d: OdDrive, folder: OdItem): void {
    if (!folder.folder) return this.err(res, 400, 'invalidRequest', 'The item is not a folder.');
    const top = Math.min(Math.max(Number(req.query('$top') ?? 200) || 200, 1), 1000);
    const skip = Number(req.query('$skiptoken') ? Buffer.from(req.query('$skiptoken')!, 'base64url').toString() : 0);
    const all = this.children(d, folder.id).sort((x, y) => (x.name.toLowerCase() < y.name.toLowerCase() ? -1 : 1));
    const page = all.slice(skip, skip + top);
    const body: Record<string, unknown> = { value: page.map((i) => this.resource(d, i)) };
    if (skip + top < all.length) {
      const next = new URL(req.url.toString());
      next.searchParams.set('$skiptoken', Buffer.from(String(skip + top)).toString('base64url'));
      body['@odata.nextLink'] = next.toString();
    }
    sendJson(res, 200, body);
  }

  private search(req: EmuRequest, res: ServerResponse, d: OdDrive, folder: OdItem, q: string): void {
    if (!folder.folder) return this.err(res, 400, 'invalidRequest', 'The item is not a folder.');
    const top = Math.min(Math.max(Number(req.query('$top') ?? 200) || 200, 1), 1000);
    const skip = Number(req.query('$skiptoken') ? Buffer.from(req.query('$skiptoken')!, 'base64url').toString() : 0);
    const needle = q.toLowerCase();
    const all = [...d.items.values()].filter(
      (i) =>
        i.id !== folder.id &&
        !this.isDeleted(d, i) &&
        this.isAncestor(d, folder.id, i) &&
        i.name.toLowerCase().includes(needle),
    );
    const page = all.slice(skip, skip + top).map((i) => {
      const r = this.resource(d, i);
      if (this.searchOmitsPaths && r.parentReference)
        r.parentReference = { ...(r.parentReference as Record<string, unknown>), path: undefined };
      return r;
    });
    const body: Record<string, unknown> = { value: page };
    if (skip + top < all.length) {
      const next = new URL(req.url.toString());
      next.searchParams.set('$skiptoken', Buffer.from(String(skip + top)).toString('base64url'));
      body['@odata.nextLink'] = next.toString();
    }
    sendJson(res, 200, body);
  }

  private async createFolder(req: EmuRequest, res: ServerResponse, d: OdDrive, parent: OdItem): Promise<void> {
    const body = await req.json<Record<string, unknown>>();
    const name = String(body.name ?? '');
    if (!this.checkName(res, name)) return;
    if (!parent.folder) return this.err(res, 400, 'invalidRequest', 'The parent is not a folder.');
    const conflict = String(body['@microsoft.graph.conflictBehavior'] ?? 'fail');
    const existing = this.childNamed(d, parent.id, name);
    let finalName = name;
    if (existing) {
      if (conflict === 'fail')
        return this.err(res, 409, 'nameAlreadyExists', 'The specified item name already exists.');
      if (conflict === 'replace') this.purge(d, existing.id);
      else finalName = this.uniqueName(d, parent.id, name);
    }
    const item = this.newItem(d, parent.id, finalName, true);
    sendJson(res, 201, this.resource(d, item));
  }

  private async simpleUpload(
    req: EmuRequest,
    res: ServerResponse,
    d: OdDrive,
    parent: OdItem,
    name: string,
  ): Promise<void> {
    const body = await req.body();
    if (!this.checkName(res, name)) return;
    if (body.length > SIMPLE_UPLOAD_LIMIT)
      return this.err(res, 413, 'requestTooLarge', 'Use an upload session for files over 250 MB.');
    const conflict = req.query('@microsoft.graph.conflictBehavior') ?? 'replace';
    const existing = this.childNamed(d, parent.id, name);
    if (existing?.folder) return this.err(res, 409, 'nameAlreadyExists', 'A folder with this name already exists.');
    if (!this.roomFor(res, d, body.length - (existing?.content?.length ?? 0))) return;
    if (existing && conflict === 'replace') {
      existing.content = body;
      existing.version++;
      existing.modified = Date.now();
      existing.fsModified = existing.modified;
      return sendJson(res, 200, this.resource(d, existing));
    }
    if (existing && conflict === 'fail')
      return this.err(res, 409, 'nameAlreadyExists', 'The specified item name already exists.');
    const item = this.newItem(d, parent.id, existing ? this.uniqueName(d, parent.id, name) : name, false, body);
    sendJson(res, 201, this.resource(d, item));
  }

  private async replaceContent(req: EmuRequest, res: ServerResponse, d: OdDrive, item: OdItem): Promise<void> {
    const body = await req.body();
    if (!this.roomFor(res, d, body.length - (item.content?.length ?? 0))) return;
    item.content = body;
    item.version++;
    item.modified = Date.now();
    item.fsModified = item.modified;
    sendJson(res, 200, this.resource(d, item));
  }

  private async createSession(
    req: EmuRequest,
    res: ServerResponse,
    d: OdDrive,
    parent: OdItem,
    name: string,
  ): Promise<void> {
    const body = await req.json<{ item?: Record<string, unknown> }>();
    if (!this.checkName(res, name)) return;
    const conflict = String(body.item?.['@microsoft.graph.conflictBehavior'] ?? 'replace');
    const existing = this.childNamed(d, parent.id, name);
    if (existing && conflict === 'fail')
      return this.err(res, 409, 'nameAlreadyExists', 'The specified item name already exists.');
    const fsInfo = body.item?.fileSystemInfo as { lastModifiedDateTime?: string } | undefined;
    const fsModified = fsInfo?.lastModifiedDateTime ? Date.parse(fsInfo.lastModifiedDateTime) : undefined;
    const id = randomId(32);
    const expires = Date.now() + 15 * 60_000;
    this.sessions.set(id, {
      id,
      drive: d,
      parentId: parent.id,
      name,
      conflict,
      ...(fsModified !== undefined && Number.isFinite(fsModified) ? { fsModified } : {}),
      received: [],
      next: 0,
      expires,
    });
    sendJson(res, 200, {
      uploadUrl: `${this.url}/up/${id}`,
      expirationDateTime: new Date(expires).toISOString(),
      nextExpectedRanges: ['0-'],
    });
  }

  private async uploadFragment(req: EmuRequest, res: ServerResponse): Promise<void> {
    const body = await req.body();
    const s = this.sessions.get(req.params.session ?? '');
    if (!s || Date.now() > s.expires)
      return this.err(res, 404, 'itemNotFound', 'The upload session was not found or has expired.');
    if (req.header('authorization')) {
      return this.err(res, 401, 'unauthenticated', 'Do not send an Authorization header to the upload URL.');
    }
    const range = parseContentRange(req.header('content-range'));
    if (!range || range.start === undefined || range.total === undefined) {
      return this.err(res, 400, 'invalidRequest', 'A Content-Range header with the total size is required.');
    }
    if (s.total !== undefined && range.total !== s.total)
      return this.err(res, 400, 'invalidRequest', 'The total size changed.');
    if (range.end - range.start + 1 !== body.length)
      return this.err(res, 400, 'invalidRequest', 'Content-Range does not match the body.');
    if (body.length > MAX_FRAGMENT) return this.err(res, 413, 'requestTooLarge', 'Fragments must be under 60 MiB.');
    if (range.start !== s.next) {
      return this.err(res, 416, 'invalidRange', `Fragments must be uploaded in order; expected offset ${s.next}.`);
    }
    const isLast = range.end + 1 === range.total;
    if (!isLast && body.length % FRAGMENT !== 0) {
      return this.err(
        res,
        400,
        'invalidRequest',
        'Each fragment except the last must be a multiple of 320 KiB (327,680 bytes).',
      );
    }
    this.fragmentPuts++;
    s.total = range.total;
    s.received.push(body);
    s.next += body.length;
    s.expires = Date.now() + 15 * 60_000;
    if (!isLast) {
      return sendJson(res, 202, {
        expirationDateTime: new Date(s.expires).toISOString(),
        nextExpectedRanges: [`${s.next}-`],
      });
    }
    this.sessions.delete(s.id);
    const content = Buffer.concat(s.received, s.total);
    const d = s.drive;
    const parent = this.live(d, s.parentId);
    if (!parent) return this.err(res, 404, 'itemNotFound', 'The parent folder no longer exists.');
    const existing = this.childNamed(d, parent.id, s.name);
    if (existing?.folder) return this.err(res, 409, 'nameAlreadyExists', 'A folder with this name already exists.');
    if (!this.roomFor(res, d, content.length - (existing?.content?.length ?? 0))) return;
    if (existing && s.conflict === 'fail')
      return this.err(res, 409, 'nameAlreadyExists', 'The specified item name already exists.');
    if (existing && s.conflict === 'replace') {
      existing.content = content;
      existing.version++;
      existing.modified = Date.now();
      existing.fsModified = s.fsModified ?? existing.modified;
      return sendJson(res, 200, this.resource(d, existing));
    }
    const item = this.newItem(
      d,
      parent.id,
      existing ? this.uniqueName(d, parent.id, s.name) : s.name,
      false,
      content,
      s.fsModified,
    );
    sendJson(res, 201, this.resource(d, item));
  }

  private sessionStatus(req: EmuRequest, res: ServerResponse): void {
    const s = this.sessions.get(req.params.session ?? '');
    if (!s) return this.err(res, 404, 'itemNotFound', 'The upload session was not found.');
    sendJson(res, 200, { expirationDateTime: new Date(s.expires).toISOString(), nextExpectedRanges: [`${s.next}-`] });
  }

  private cancelSession(req: EmuRequest, res: ServerResponse): void {
    this.sessions.delete(req.params.session ?? '');
    sendEmpty(res, 204);
  }

  /** Upload sessions not yet finished (tests check aborts leave none behind). */
  openSessions(): number {
    return this.sessions.size;
  }

  private download(req: EmuRequest, res: ServerResponse): void {
    const dl = this.downloads.get(req.params.token ?? '');
    const item = dl ? this.live(dl.drive, dl.itemId) : undefined;
    if (!item || item.folder) return this.err(res, 404, 'itemNotFound', 'The resource could not be found.');
    sendBytes(req, res, item.content ?? Buffer.alloc(0), {}, item.mimeType ?? 'application/octet-stream');
  }

  private isAncestor(d: OdDrive, ancestorId: string, i: OdItem): boolean {
    let cur: OdItem | undefined = i;
    for (let n = 0; cur && n < 100; n++) {
      if (cur.id === ancestorId) return true;
      cur = cur.parentId ? d.items.get(cur.parentId) : undefined;
    }
    return false;
  }

  private async update(req: EmuRequest, res: ServerResponse, d: OdDrive, item: OdItem): Promise<void> {
    const body = await req.json<Record<string, unknown>>();
    if (item.id === d.rootId) return this.err(res, 400, 'invalidRequest', 'The root cannot be changed.');
    const newName = typeof body.name === 'string' ? body.name : item.name;
    const parentRef = body.parentReference as { id?: string; path?: string } | undefined;
    let parentId = item.parentId!;
    if (parentRef?.id) {
      const p = this.live(d, parentRef.id);
      if (!p || !p.folder) return this.err(res, 404, 'itemNotFound', 'The destination folder could not be found.');
      if (this.isAncestor(d, item.id, p))
        return this.err(res, 400, 'invalidRequest', 'Cannot move a folder into itself.');
      parentId = p.id;
    }
    if (newName !== item.name && !this.checkName(res, newName)) return;
    const clash = this.childNamed(d, parentId, newName);
    if (clash && clash.id !== item.id) {
      const conflict =
        req.query('@microsoft.graph.conflictBehavior') ?? String(body['@microsoft.graph.conflictBehavior'] ?? 'fail');
      if (conflict !== 'replace')
        return this.err(res, 409, 'nameAlreadyExists', 'The specified item name already exists.');
      this.purge(d, clash.id);
    }
    item.name = newName;
    item.parentId = parentId;
    const fsInfo = body.fileSystemInfo as { lastModifiedDateTime?: string } | undefined;
    if (fsInfo?.lastModifiedDateTime) {
      const t = Date.parse(fsInfo.lastModifiedDateTime);
      if (Number.isFinite(t)) item.fsModified = t;
    }
    item.version++;
    item.modified = Date.now();
    sendJson(res, 200, this.resource(d, item));
  }

  private remove(res: ServerResponse, d: OdDrive, item: OdItem): void {
    if (item.id === d.rootId) return this.err(res, 403, 'accessDenied', 'The root cannot be deleted.');
    item.deleted = true;
    sendEmpty(res, 204);
  }

  private purge(d: OdDrive, id: string): void {
    for (const c of [...d.items.values()]) if (c.parentId === id) this.purge(d, c.id);
    d.items.delete(id);
  }

  /** Items in the recycle bin (deleted, not purged). */
  recycleBin(d: OdDrive): OdItem[] {
    return [...d.items.values()].filter((i) => i.deleted);
  }

  private copyTree(d: OdDrive, src: OdItem, parentId: string, name: string): OdItem {
    const item = this.newItem(
      d,
      parentId,
      name,
      src.folder,
      src.content ? Buffer.from(src.content) : undefined,
      src.fsModified,
    );
    if (src.mimeType) item.mimeType = src.mimeType;
    if (src.folder) for (const c of this.children(d, src.id)) this.copyTree(d, c, item.id, c.name);
    return item;
  }

  private async copy(req: EmuRequest, res: ServerResponse, d: OdDrive, item: OdItem): Promise<void> {
    const body = await req.json<Record<string, unknown>>();
    const ref = body.parentReference as { driveId?: string; id?: string } | undefined;
    const target = ref?.driveId && ref.driveId !== d.id ? this.drives.get(ref.driveId) : d;
    if (!target || target.owner !== d.owner)
      return this.err(res, 404, 'itemNotFound', 'The destination drive could not be found.');
    const parent = this.live(target, ref?.id ?? item.parentId ?? target.rootId);
    if (!parent || !parent.folder)
      return this.err(res, 404, 'itemNotFound', 'The destination folder could not be found.');
    const name = typeof body.name === 'string' ? body.name : item.name;
    if (!this.checkName(res, name)) return;
    const conflict =
      req.query('@microsoft.graph.conflictBehavior') ?? String(body['@microsoft.graph.conflictBehavior'] ?? 'fail');
    const jobId = randomId(24);
    const clash = this.childNamed(target, parent.id, name);
    let result: CopyJob['result'];
    if (clash && conflict === 'fail')
      result = { status: 'failed', code: 'nameAlreadyExists', message: 'The specified item name already exists.' };
    else if (this.usage(target).used + this.treeSizeOf(item, d) > target.quotaTotal) {
      result = { status: 'failed', code: 'quotaLimitReached', message: 'Insufficient Space Available' };
    } else {
      if (clash && conflict === 'replace') this.purge(target, clash.id);
      const finalName = clash && conflict === 'rename' ? this.uniqueName(target, parent.id, name) : name;
      const copy = this.copyTree(target, item, parent.id, finalName);
      result = { status: 'completed', resourceId: copy.id };
    }
    this.jobs.set(jobId, { id: jobId, polls: 0, result });
    res.writeHead(202, { location: `${this.url}/monitor/${jobId}`, 'content-length': '0' });
    res.end();
  }

  private treeSizeOf(i: OdItem, d: OdDrive): number {
    return i.folder ? this.treeSize(d, i) : (i.content?.length ?? 0);
  }

  private monitor(req: EmuRequest, res: ServerResponse): void {
    const job = this.jobs.get(req.params.job ?? '');
    if (!job) return this.err(res, 404, 'itemNotFound', 'The monitor could not be found.');
    this.monitorPolls++;
    job.polls++;
    if (job.polls <= this.copyPolls) {
      return sendJson(res, 202, {
        operation: 'ItemCopy',
        status: 'inProgress',
        percentageComplete: Math.round((job.polls / (this.copyPolls + 1)) * 100),
      });
    }
    if (job.result.status === 'failed') {
      return sendJson(res, 200, {
        operation: 'ItemCopy',
        status: 'failed',
        percentageComplete: 0,
        error: { code: job.result.code, message: job.result.message },
      });
    }
    sendJson(res, 200, {
      operation: 'ItemCopy',
      status: 'completed',
      percentageComplete: 100,
      resourceId: job.result.resourceId,
    });
  }

  /** Every file under a folder path of a user's drive, by relative path (tests verify with it). */
  filesUnder(user: string, path: string): Map<string, Buffer> {
    const d = this.driveFor(user);
    const start = this.resolvePath(d, d.rootId, path);
    const out = new Map<string, Buffer>();
    const walk = (folder: OdItem, rel: string) => {
      for (const c of this.children(d, folder.id)) {
        if (c.folder) walk(c, `${rel}/${c.name}`);
        else out.set(`${rel}/${c.name}`, c.content ?? Buffer.alloc(0));
      }
    };
    if (start?.folder) walk(start, '');
    return out;
  }

  /** Adds a file or folder by path (test setup). */
  seed(user: string, path: string, content?: Buffer): OdItem {
    const d = this.driveFor(user);
    const segs = path.split('/').filter(Boolean);
    let parent = d.items.get(d.rootId)!;
    for (let i = 0; i < segs.length; i++) {
      const name = segs[i]!;
      const last = i === segs.length - 1;
      const found = this.childNamed(d, parent.id, name);
      if (found && (!last || !content)) {
        parent = found;
        continue;
      }
      parent = this.newItem(d, parent.id, name, !(last && content), last ? content : undefined);
    }
    return parent;
  }
}
