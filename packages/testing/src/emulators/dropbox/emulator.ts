import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomId, sendBytes, sendJson, sendText, type EmuRequest } from '../common/http.ts';
import { dropboxContentHash } from '../common/hashes.ts';
import { retryAfterHeader, ServiceEmulator, type AuthContext, type ServiceOptions } from '../common/service.ts';

/**
 * A Dropbox API v2 emulator, in memory, built from Dropbox's published documentation:
 * - HTTP reference for /files and /users (request and result shapes, endpoint error unions):
 *   https://www.dropbox.com/developers/documentation/http/documentation
 *   (files/list_folder, list_folder/continue, get_metadata, create_folder_v2, delete_v2, copy_v2,
 *   move_v2, download, upload, upload_session/start, append_v2, finish; users/get_current_account,
 *   users/get_space_usage)
 * - Batches, same reference: files/upload_session/finish_batch_v2 (synchronous; "Each entry in
 *   UploadSessionFinishBatchArg.entries will appear at the same position inside
 *   UploadSessionFinishBatchResult.entries", success = the FileMetadata, failure =
 *   UploadSessionFinishError; sessions must have been closed by their last start/append, else
 *   lookup_failed/not_closed; at most 1000 entries), files/upload_session/finish_batch +
 *   finish_batch/check (async_job_id, then in_progress | complete), files/delete_batch +
 *   delete_batch/check (DeleteBatchLaunch async_job_id; DeleteBatchJobStatus in_progress |
 *   complete with per-entry success {metadata} | failure DeleteError; PollError
 *   invalid_async_job_id). Batch jobs of one account run one after another ("this route should
 *   be executed serially").
 * - The namespace write lock behind too_many_write_operations ("Dropbox locks the namespace
 *   while a commit runs; concurrent commits fail; batch them"):
 *   https://developers.dropbox.com/dbx-performance-guide (section on lock contention) and the
 *   "too_many_write_operations" variants of UploadSessionFinishError / DeleteError. Modelled by
 *   `writeLockMs`, off by default.
 * - Endpoint formats: RPC (JSON body), content-upload and content-download (arguments in the
 *   Dropbox-API-Arg header, ASCII only with \uXXXX escapes; result in Dropbox-API-Result):
 *   same page, "Formats" and "Content-upload endpoints"
 * - Errors: 400 bad input (plain text), 401 (expired_access_token / invalid_access_token),
 *   409 endpoint-specific with error_summary, 429 rate limited with Retry-After
 *   (too_many_requests, too_many_write_operations): same page, "Errors"
 * - Performance guide (write contention, too_many_write_operations, concurrent upload sessions
 *   whose appends are multiples of 4 MiB): https://developers.dropbox.com/dbx-performance-guide
 * - Content hash: https://www.dropbox.com/developers/reference/content-hash
 * - Team spaces and the Dropbox-API-Path-Root header (root_info, root_namespace_id,
 *   home_namespace_id): https://developers.dropbox.com/dbx-team-files-guide and
 *   https://www.dropbox.com/developers/reference/path-root-header-modes
 *
 * - Deleted files, same reference: files/list_folder with include_deleted (DeletedMetadata
 *   entries for deleted paths that hold nothing now), files/get_metadata with include_deleted,
 *   files/list_revisions (is_deleted, server_deleted, revisions newest first; a folder answers
 *   path/not_file), files/restore (a revision of a file to a path, creating its folders; a folder
 *   in the way answers path_write/conflict), files/permanently_delete ("only available for
 *   Dropbox Business apps": team accounts; deletes a live item first, then what is deleted at
 *   and below the path)
 * - Search: files/search_v2 (options.path, max_results up to 1000, file_status, filename_only;
 *   matches of metadata, has_more and cursor) and files/search/continue_v2
 *
 * Paths compare without regard to case (path_lower), keep the case given (path_display).
 * Departures, on purpose: a folder's team members and sharing are not modelled; a live file's
 * revisions are only its latest content; search matches a name holding the query (case ignored)
 * rather than Dropbox's index, and sees new files at once; permanently_delete refuses personal
 * accounts with a 400 naming the Business requirement.
 */

const BLOCK = 4 * 1024 * 1024;
const UPLOAD_LIMIT = 150 * 1024 * 1024;
/** finish_batch and delete_batch take at most 1000 entries. */
const BATCH_LIMIT = 1000;

export interface DbxNode {
  id: string;
  name: string;
  parent?: DbxNode;
  folder: boolean;
  children: Map<string, DbxNode>;
  content?: Buffer;
  clientModified: number;
  serverModified: number;
  rev: string;
}

interface Account {
  user: string;
  accountId: string;
  /** Namespace the user's own paths resolve against. */
  home: string;
  /** The account's root namespace (equals home for personal accounts; the team space for teams). */
  root: string;
  team: boolean;
  allocated: number;
}

interface Session {
  id: string;
  user: string;
  concurrent: boolean;
  closed: boolean;
  /** Sequential: one growing list; concurrent: pieces by offset. */
  pieces: Map<number, Buffer>;
  length: number;
}

interface Job {
  kind: 'finish' | 'delete';
  user: string | undefined;
  root: DbxNode;
  /** Set when the job has completed. */
  entries: Record<string, unknown>[] | undefined;
}

interface Cursor {
  entries: Record<string, unknown>[];
  offset: number;
  limit: number;
}

/** What was deleted at a path (below one namespace root): the last item there, and a file's revisions. */
interface Grave {
  pathDisplay: string;
  folder: boolean;
  deletedAt: number;
  /** Newest first. */
  revisions: Array<{ rev: string; name: string; content: Buffer; clientModified: number; serverModified: number }>;
}

export class DropboxEmulator extends ServiceEmulator {
  readonly namespaces = new Map<string, DbxNode>();
  private readonly accounts = new Map<string, Account>();
  private readonly sessions = new Map<string, Session>();
  private readonly cursors = new Map<string, Cursor>();
  /** Items removed by delete_v2 (Dropbox keeps them restorable). */
  readonly deleted: Array<{ path: string; at: number }> = [];
  /** Deleted paths by namespace root, by path_lower. */
  private readonly graves = new Map<DbxNode, Map<string, Grave>>();
  /** Upload-session appends received (tests assert large files used sessions). */
  appendCalls = 0;
  /** Single upload_session/finish calls and finish batches (v1 or v2). */
  finishCalls = 0;
  finishBatchCalls = 0;
  /** Entries of each finish batch, in the order the batches ran. */
  readonly finishBatchSizes: number[] = [];
  /** delete_v2 calls, delete_batch calls, and polls of batch jobs. */
  deleteV2Calls = 0;
  deleteBatchCalls = 0;
  checkCalls = 0;
  /** How long a single commit holds the namespace write lock (0: no lock; see takeWriteLock). */
  writeLockMs = 0;
  /** How long an async batch job takes before it runs (check answers in_progress meanwhile). */
  jobDelayMs = 15;
  /** Commits refused with too_many_write_operations because the lock was held. */
  writeConflicts = 0;
  private readonly lockedUntil = new Map<DbxNode, number>();
  private readonly batchChains = new Map<DbxNode, Promise<void>>();
  private readonly jobs = new Map<string, Job>();

  constructor(options: ServiceOptions) {
    super(options);
    const rpc = (
      name: string,
      h: (
        req: EmuRequest,
        res: ServerResponse,
        a: AuthContext,
        root: DbxNode,
        args: Record<string, unknown>,
      ) => Promise<void> | void,
    ) =>
      this.route('POST', `/2/${name}`, async (req, res, a) => {
        const root = this.rootFor(req, res, a);
        if (!root) return;
        let args: Record<string, unknown>;
        const raw = (await req.body()).toString('utf8');
        try {
          args = raw && raw !== 'null' ? (JSON.parse(raw) as Record<string, unknown>) : {};
        } catch {
          return sendText(
            res,
            400,
            `Error in call to API function "${name}": request body: could not decode input as JSON`,
          );
        }
        await h(req, res, a, root, args);
      });
    const content = (
      name: string,
      h: (
        req: EmuRequest,
        res: ServerResponse,
        a: AuthContext,
        root: DbxNode,
        args: Record<string, unknown>,
      ) => Promise<void> | void,
    ) =>
      this.route('POST', `/2/${name}`, async (req, res, a) => {
        const root = this.rootFor(req, res, a);
        if (!root) return;
        const header = req.header('dropbox-api-arg') ?? req.query('arg');
        if (header === undefined)
          return sendText(
            res,
            400,
            `Error in call to API function "${name}": Must provide HTTP header "Dropbox-API-Arg" or URL parameter "arg".`,
          );
        // eslint-disable-next-line no-control-regex
        if (/[^\x00-\x7f]/.test(header))
          return sendText(
            res,
            400,
            `Error in call to API function "${name}": HTTP header "Dropbox-API-Arg": could not decode input as JSON`,
          );
        let args: Record<string, unknown>;
        try {
          args = JSON.parse(header) as Record<string, unknown>;
        } catch {
          return sendText(
            res,
            400,
            `Error in call to API function "${name}": HTTP header "Dropbox-API-Arg": could not decode input as JSON`,
          );
        }
        await h(req, res, a, root, args);
      });

    rpc('users/get_current_account', (_q, res, a) => this.currentAccount(res, a));
    rpc('users/get_space_usage', (_q, res, a) => this.spaceUsage(res, a));
    rpc('files/list_folder', (_q, res, a, root, args) => this.listFolder(res, root, args));
    rpc('files/list_folder/continue', (_q, res, _a, _r, args) => this.listContinue(res, args));
    rpc('files/get_metadata', (_q, res, _a, root, args) => this.getMetadata(res, root, args));
    rpc('files/create_folder_v2', (_q, res, _a, root, args) => this.createFolder(res, root, args));
    rpc('files/delete_v2', (req, res, _a, root, args) => this.delete(req, res, root, args));
    rpc('files/delete_batch', (_q, res, _a, root, args) => this.deleteBatch(res, root, args));
    rpc('files/delete_batch/check', (_q, res, a, _r, args) => this.checkJob(res, a, args, 'delete'));
    rpc('files/upload_session/finish_batch_v2', (_q, res, a, root, args) => this.finishBatchV2(res, a, root, args));
    rpc('files/upload_session/finish_batch', (_q, res, a, root, args) => this.finishBatchV1(res, a, root, args));
    rpc('files/upload_session/finish_batch/check', (_q, res, a, _r, args) => this.checkJob(res, a, args, 'finish'));
    rpc('files/copy_v2', (_q, res, _a, root, args) => this.relocate(res, root, args, true));
    rpc('files/move_v2', (_q, res, _a, root, args) => this.relocate(res, root, args, false));
    rpc('files/list_revisions', (_q, res, _a, root, args) => this.listRevisions(res, root, args));
    rpc('files/restore', (_q, res, _a, root, args) => this.restore(res, root, args));
    rpc('files/permanently_delete', (_q, res, a, root, args) => this.permanentlyDelete(res, a, root, args));
    rpc('files/search_v2', (_q, res, _a, root, args) => this.search(res, root, args));
    rpc('files/search/continue_v2', (_q, res, _a, _r, args) => this.searchContinue(res, args));
    content('files/download', (req, res, _a, root, args) => this.download(req, res, root, args));
    content('files/upload', (req, res, a, root, args) => this.upload(req, res, a, root, args));
    content('files/upload_session/start', (req, res, a, _r, args) => this.sessionStart(req, res, a, args));
    content('files/upload_session/append_v2', (req, res, a, _r, args) => this.sessionAppend(req, res, a, args));
    content('files/upload_session/finish', (req, res, a, root, args) => this.sessionFinish(req, res, a, root, args));
  }

  // ---------- errors ----------

  /** 409 endpoint error: `summary` like "path/not_found/", `error` the union value. */
  private endpointError(res: ServerResponse, summary: string, error: Record<string, unknown>): void {
    sendJson(res, 409, { error_summary: `${summary}${summary.endsWith('/') ? '' : '/'}.${randomId(3)}`, error });
  }

  protected sendRateLimited(_req: EmuRequest, res: ServerResponse, seconds: number, variant?: string): void {
    const reason = variant === 'too_many_write_operations' ? 'too_many_write_operations' : 'too_many_requests';
    sendJson(
      res,
      429,
      {
        error_summary: `${reason}/..`,
        error: { reason: { '.tag': reason }, retry_after: Math.max(1, Math.ceil(seconds)) },
      },
      { 'retry-after': retryAfterHeader(seconds) },
    );
  }

  protected sendUnauthorized(_req: EmuRequest, res: ServerResponse, reason: string): void {
    const tag = reason === 'expired' ? 'expired_access_token' : 'invalid_access_token';
    sendJson(
      res,
      401,
      { error_summary: `${tag}/`, error: { '.tag': tag } },
      { 'www-authenticate': `Bearer realm="Dropbox-API"` },
    );
  }

  protected sendServerError(_req: EmuRequest, res: ServerResponse, status: number): void {
    sendText(res, status, 'Internal Server Error');
  }

  protected sendNoRoute(req: EmuRequest, res: ServerResponse): void {
    sendText(res, 400, `Unknown API function: "${req.path.replace(/^\/2\//, '')}"`);
  }

  // ---------- accounts and namespaces ----------

  private newFolderNode(name: string, parent?: DbxNode): DbxNode {
    const now = Date.now();
    const node: DbxNode = {
      id: `id:${randomId(22)}`,
      name,
      folder: true,
      children: new Map(),
      clientModified: now,
      serverModified: now,
      rev: '',
      ...(parent ? { parent } : {}),
    };
    if (parent) parent.children.set(name.toLowerCase(), node);
    return node;
  }

  /** A personal account (default) or a team member whose home folder sits inside a team space. */
  account(user: string, team?: { teamRoot?: string; memberFolder?: string }): Account {
    let acc = this.accounts.get(user);
    if (acc) return acc;
    const accountId = `dbid:${randomId(40)}`;
    if (team) {
      let rootNs = team.teamRoot;
      if (!rootNs || !this.namespaces.has(rootNs)) {
        rootNs = randomId(10, '0123456789');
        this.namespaces.set(rootNs, this.newFolderNode(''));
      }
      const teamRoot = this.namespaces.get(rootNs)!;
      const home = this.newFolderNode(team.memberFolder ?? user.split('@')[0] ?? user, teamRoot);
      const homeNs = randomId(10, '0123456789');
      this.namespaces.set(homeNs, home);
      acc = { user, accountId, home: homeNs, root: rootNs, team: true, allocated: 5 * 1024 ** 4 };
    } else {
      const ns = randomId(10, '0123456789');
      this.namespaces.set(ns, this.newFolderNode(''));
      acc = { user, accountId, home: ns, root: ns, team: false, allocated: 2 * 1024 ** 3 };
    }
    this.accounts.set(user, acc);
    return acc;
  }

  setAllocation(user: string, bytes: number): void {
    this.account(user).allocated = bytes;
  }

  /** Resolves Dropbox-API-Path-Root (home when absent). */
  private rootFor(req: EmuRequest, res: ServerResponse, a: AuthContext): DbxNode | undefined {
    const acc = this.account(a.user);
    const header = req.header('dropbox-api-path-root');
    let ns = acc.home;
    if (header) {
      try {
        const pr = JSON.parse(header) as { '.tag': string; root?: string; namespace_id?: string };
        if (pr['.tag'] === 'root') {
          if (pr.root !== acc.root) {
            sendJson(res, 422, {
              error_summary: 'invalid_root/..',
              error: {
                '.tag': 'invalid_root',
                invalid_root: {
                  '.tag': acc.team ? 'team' : 'user',
                  root_namespace_id: acc.root,
                  home_namespace_id: acc.home,
                },
              },
            });
            return undefined;
          }
          ns = acc.root;
        } else if (pr['.tag'] === 'namespace_id') {
          if (pr.namespace_id !== acc.root && pr.namespace_id !== acc.home) {
            sendJson(res, 422, { error_summary: 'no_permission/..', error: { '.tag': 'no_permission' } });
            return undefined;
          }
          ns = pr.namespace_id;
        }
      } catch {
        sendText(
          res,
          400,
          'Error in call to API function: HTTP header "Dropbox-API-Path-Root": could not decode input as JSON',
        );
        return undefined;
      }
    }
    return this.namespaces.get(ns);
  }

  private currentAccount(res: ServerResponse, a: AuthContext): void {
    const acc = this.account(a.user);
    const name = a.user.split('@')[0] ?? a.user;
    sendJson(res, 200, {
      account_id: acc.accountId,
      name: {
        given_name: name,
        surname: '',
        familiar_name: name,
        display_name: name,
        abbreviated_name: name.slice(0, 2).toUpperCase(),
      },
      email: a.user,
      email_verified: true,
      disabled: false,
      locale: 'en',
      is_paired: false,
      account_type: { '.tag': acc.team ? 'business' : 'basic' },
      root_info: acc.team
        ? {
            '.tag': 'team',
            root_namespace_id: acc.root,
            home_namespace_id: acc.home,
            home_path: `/${this.namespaces.get(acc.home)!.name}`,
          }
        : { '.tag': 'user', root_namespace_id: acc.root, home_namespace_id: acc.home },
    });
  }

  private treeBytes(node: DbxNode): number {
    if (!node.folder) return node.content?.length ?? 0;
    let n = 0;
    for (const c of node.children.values()) n += this.treeBytes(c);
    return n;
  }

  private spaceUsage(res: ServerResponse, a: AuthContext): void {
    const acc = this.account(a.user);
    const used = this.treeBytes(this.namespaces.get(acc.root)!);
    sendJson(res, 200, {
      used,
      allocation: acc.team
        ? {
            '.tag': 'team',
            used,
            allocated: acc.allocated,
            user_within_team_space_allocated: 0,
            user_within_team_space_limit_type: { '.tag': 'off' },
          }
        : { '.tag': 'individual', allocated: acc.allocated },
    });
  }

  // ---------- paths ----------

  private static splitPath(path: string): string[] | 'malformed' {
    if (path === '' || path === '/') return [];
    if (!path.startsWith('/') || path.endsWith('/') || path.includes('//')) return 'malformed';
    return path.slice(1).split('/');
  }

  private static badName(name: string): boolean {
    // eslint-disable-next-line no-control-regex
    return name === '.' || name === '..' || name.includes('\\') || /[\x00-\x1f\x7f]/.test(name) || name.endsWith(' ');
  }

  private find(root: DbxNode, path: string): DbxNode | undefined | 'malformed' {
    const segs = DropboxEmulator.splitPath(path);
    if (segs === 'malformed') return 'malformed';
    let cur: DbxNode | undefined = root;
    for (const seg of segs) {
      if (!cur?.folder) return undefined;
      cur = cur.children.get(seg.toLowerCase());
    }
    return cur;
  }

  private pathDisplay(root: DbxNode, node: DbxNode): string {
    const segs: string[] = [];
    let cur: DbxNode | undefined = node;
    while (cur && cur !== root) {
      segs.unshift(cur.name);
      cur = cur.parent;
    }
    return '/' + segs.join('/');
  }

  metadata(root: DbxNode, node: DbxNode): Record<string, unknown> {
    const display = this.pathDisplay(root, node);
    if (node.folder)
      return {
        '.tag': 'folder',
        name: node.name,
        id: node.id,
        path_lower: display.toLowerCase(),
        path_display: display,
      };
    return {
      '.tag': 'file',
      name: node.name,
      id: node.id,
      client_modified: isoSeconds(node.clientModified),
      server_modified: isoSeconds(node.serverModified),
      rev: node.rev,
      size: node.content?.length ?? 0,
      path_lower: display.toLowerCase(),
      path_display: display,
      is_downloadable: true,
      content_hash: dropboxContentHash(node.content ?? Buffer.alloc(0)),
    };
  }

  /** The parent folder for a new item at `path` (creating missing parents, as Dropbox does). */
  private parentFor(root: DbxNode, path: string): { parent: DbxNode; name: string } | 'malformed' | 'conflict' {
    const segs = DropboxEmulator.splitPath(path);
    if (segs === 'malformed' || segs.length === 0) return 'malformed';
    const name = segs.pop()!;
    if (DropboxEmulator.badName(name)) return 'malformed';
    let cur = root;
    for (const seg of segs) {
      if (DropboxEmulator.badName(seg)) return 'malformed';
      const next = cur.children.get(seg.toLowerCase());
      if (next && !next.folder) return 'conflict';
      cur = next ?? this.newFolderNode(seg, cur);
    }
    return { parent: cur, name };
  }

  private uniqueName(parent: DbxNode, name: string): string {
    if (!parent.children.has(name.toLowerCase())) return name;
    const dot = name.lastIndexOf('.');
    const stem = dot > 0 ? name.slice(0, dot) : name;
    const ext = dot > 0 ? name.slice(dot) : '';
    for (let n = 1; ; n++) {
      const candidate = `${stem} (${n})${ext}`;
      if (!parent.children.has(candidate.toLowerCase())) return candidate;
    }
  }

  // ---------- listing ----------

  private listFolder(res: ServerResponse, root: DbxNode, args: Record<string, unknown>): void {
    const path = String(args.path ?? '');
    const node = this.find(root, path);
    if (node === 'malformed')
      return this.endpointError(res, 'path/malformed_path/', { '.tag': 'path', path: { '.tag': 'malformed_path' } });
    if (!node) return this.endpointError(res, 'path/not_found/', { '.tag': 'path', path: { '.tag': 'not_found' } });
    if (!node.folder)
      return this.endpointError(res, 'path/not_folder/', { '.tag': 'path', path: { '.tag': 'not_folder' } });
    const entries: Record<string, unknown>[] = [];
    const walk = (dir: DbxNode) => {
      for (const c of [...dir.children.values()].sort((x, y) => (x.name < y.name ? -1 : 1))) {
        entries.push(this.metadata(root, c));
        if (args.recursive === true && c.folder) walk(c);
      }
    };
    if (args.recursive === true && node !== root) entries.push(this.metadata(root, node));
    walk(node);
    if (args.include_deleted === true) {
      const base = this.pathDisplay(root, node).toLowerCase();
      for (const [lower, g] of this.gravesOf(root)) {
        const rel = base === '/' ? lower : lower.slice(base.length);
        if (!lower.startsWith(base === '/' ? '/' : `${base}/`) || this.find(root, lower)) continue;
        if (args.recursive !== true && rel.lastIndexOf('/') > 0) continue;
        entries.push({
          '.tag': 'deleted',
          name: g.pathDisplay.slice(g.pathDisplay.lastIndexOf('/') + 1),
          path_lower: lower,
          path_display: g.pathDisplay,
        });
      }
    }
    const limit = Math.min(Math.max(Number(args.limit ?? 500) || 500, 1), 2000);
    const id = randomId(32);
    this.cursors.set(id, { entries, offset: 0, limit });
    this.sendPage(res, id);
  }

  private sendPage(res: ServerResponse, id: string): void {
    const c = this.cursors.get(id)!;
    const page = c.entries.slice(c.offset, c.offset + c.limit);
    c.offset += page.length;
    sendJson(res, 200, { entries: page, cursor: `AA${id}`, has_more: c.offset < c.entries.length });
  }

  private listContinue(res: ServerResponse, args: Record<string, unknown>): void {
    const id = String(args.cursor ?? '').replace(/^AA/, '');
    if (!this.cursors.has(id)) return this.endpointError(res, 'reset/', { '.tag': 'reset' });
    this.sendPage(res, id);
  }

  private getMetadata(res: ServerResponse, root: DbxNode, args: Record<string, unknown>): void {
    const path = String(args.path ?? '');
    if (path === '' || path === '/')
      return sendText(
        res,
        400,
        'Error in call to API function "files/get_metadata": request body: path: The root folder is unsupported.',
      );
    const node = this.find(root, path);
    if (node === 'malformed')
      return this.endpointError(res, 'path/malformed_path/', { '.tag': 'path', path: { '.tag': 'malformed_path' } });
    const grave = args.include_deleted === true && !node ? this.gravesOf(root).get(path.toLowerCase()) : undefined;
    if (grave)
      return sendJson(res, 200, {
        '.tag': 'deleted',
        name: grave.pathDisplay.slice(grave.pathDisplay.lastIndexOf('/') + 1),
        path_lower: path.toLowerCase(),
        path_display: grave.pathDisplay,
      });
    if (!node) return this.endpointError(res, 'path/not_found/', { '.tag': 'path', path: { '.tag': 'not_found' } });
    sendJson(res, 200, this.metadata(root, node));
  }

  // ---------- deleted files ----------

  private gravesOf(root: DbxNode): Map<string, Grave> {
    let g = this.graves.get(root);
    if (!g) {
      g = new Map();
      this.graves.set(root, g);
    }
    return g;
  }

  /** Records a deleted tree: each item in it is deleted at its path. */
  private bury(root: DbxNode, node: DbxNode): void {
    const display = this.pathDisplay(root, node);
    const lower = display.toLowerCase();
    const graves = this.gravesOf(root);
    const before = graves.get(lower);
    const revisions = node.folder
      ? []
      : [
          {
            rev: node.rev,
            name: node.name,
            content: node.content ?? Buffer.alloc(0),
            clientModified: node.clientModified,
            serverModified: node.serverModified,
          },
          ...(before?.revisions ?? []),
        ];
    graves.set(lower, { pathDisplay: display, folder: node.folder, deletedAt: Date.now(), revisions });
    for (const c of node.children.values()) this.bury(root, c);
  }

  private listRevisions(res: ServerResponse, root: DbxNode, args: Record<string, unknown>): void {
    const path = String(args.path ?? '');
    const node = this.find(root, path);
    if (node === 'malformed')
      return this.endpointError(res, 'path/malformed_path/', { '.tag': 'path', path: { '.tag': 'malformed_path' } });
    const limit = Math.min(Math.max(Number(args.limit ?? 10) || 10, 1), 100);
    if (node) {
      if (node.folder)
        return this.endpointError(res, 'path/not_file/', { '.tag': 'path', path: { '.tag': 'not_file' } });
      return sendJson(res, 200, { is_deleted: false, entries: [this.metadata(root, node)] });
    }
    const grave = this.gravesOf(root).get(path.toLowerCase());
    if (!grave) return this.endpointError(res, 'path/not_found/', { '.tag': 'path', path: { '.tag': 'not_found' } });
    if (grave.folder)
      return this.endpointError(res, 'path/not_file/', { '.tag': 'path', path: { '.tag': 'not_file' } });
    sendJson(res, 200, {
      is_deleted: true,
      server_deleted: isoSeconds(grave.deletedAt),
      entries: grave.revisions.slice(0, limit).map((r) => ({
        '.tag': 'file',
        name: r.name,
        id: `id:${randomId(22)}`,
        client_modified: isoSeconds(r.clientModified),
        server_modified: isoSeconds(r.serverModified),
        rev: r.rev,
        size: r.content.length,
        path_lower: path.toLowerCase(),
        path_display: grave.pathDisplay,
        is_downloadable: true,
        content_hash: dropboxContentHash(r.content),
      })),
    });
  }

  private restore(res: ServerResponse, root: DbxNode, args: Record<string, unknown>): void {
    const rev = String(args.rev ?? '');
    let found: Grave['revisions'][number] | undefined;
    for (const g of this.gravesOf(root).values()) found ??= g.revisions.find((r) => r.rev === rev);
    if (!found) return this.endpointError(res, 'invalid_revision/', { '.tag': 'invalid_revision' });
    const target = this.parentFor(root, String(args.path ?? ''));
    if (target === 'malformed')
      return this.endpointError(res, 'path_lookup/malformed_path/', {
        '.tag': 'path_lookup',
        path_lookup: { '.tag': 'malformed_path' },
      });
    const existing = target === 'conflict' ? undefined : target.parent.children.get(target.name.toLowerCase());
    if (target === 'conflict' || existing?.folder)
      return this.endpointError(res, 'path_write/conflict/folder/', {
        '.tag': 'path_write',
        path_write: { '.tag': 'conflict', conflict: { '.tag': 'folder' } },
      });
    const node: DbxNode = existing ?? {
      id: `id:${randomId(22)}`,
      name: target.name,
      parent: target.parent,
      folder: false,
      children: new Map(),
      clientModified: found.clientModified,
      serverModified: Date.now(),
      rev: '',
    };
    node.content = Buffer.from(found.content);
    node.clientModified = found.clientModified;
    node.serverModified = Date.now();
    node.rev = randomId(15, '0123456789abcdef');
    target.parent.children.set(node.name.toLowerCase(), node);
    sendJson(res, 200, this.metadata(root, node));
  }

  private permanentlyDelete(res: ServerResponse, a: AuthContext, root: DbxNode, args: Record<string, unknown>): void {
    if (!this.account(a.user).team)
      return sendText(
        res,
        400,
        'Error in call to API function "files/permanently_delete": This API function operation is only available for Dropbox Business',
      );
    const path = String(args.path ?? '');
    const lower = path.toLowerCase();
    const node = this.find(root, path);
    if (node === 'malformed')
      return this.endpointError(res, 'path_lookup/malformed_path/', {
        '.tag': 'path_lookup',
        path_lookup: { '.tag': 'malformed_path' },
      });
    const graves = this.gravesOf(root);
    if (!node && !graves.has(lower))
      return this.endpointError(res, 'path_lookup/not_found/', {
        '.tag': 'path_lookup',
        path_lookup: { '.tag': 'not_found' },
      });
    if (node && node !== root) this.deleteResult(root, path);
    for (const key of [...graves.keys()]) if (key === lower || key.startsWith(`${lower}/`)) graves.delete(key);
    sendJson(res, 200, null);
  }

  // ---------- search ----------

  private search(res: ServerResponse, root: DbxNode, args: Record<string, unknown>): void {
    const query = String(args.query ?? '');
    if (!query || query.length > 1000)
      return sendText(res, 400, 'Error in call to API function "files/search_v2": request body: query: invalid');
    const options = (args.options ?? {}) as { path?: string; max_results?: number; file_status?: { '.tag'?: string } };
    const max = Number(options.max_results ?? 100) || 100;
    if (max < 1 || max > 1000)
      return sendText(res, 400, 'Error in call to API function "files/search_v2": request body: options: max_results');
    const base = this.find(root, options.path ?? '');
    if (base === 'malformed')
      return this.endpointError(res, 'path/malformed_path/', { '.tag': 'path', path: { '.tag': 'malformed_path' } });
    if (!base) return this.endpointError(res, 'path/not_found/', { '.tag': 'path', path: { '.tag': 'not_found' } });
    const needle = query.toLowerCase();
    const entries: Record<string, unknown>[] = [];
    const walk = (dir: DbxNode) => {
      for (const c of dir.children.values()) {
        if (c.name.toLowerCase().includes(needle))
          entries.push({
            match_type: { '.tag': 'filename' },
            metadata: { '.tag': 'metadata', metadata: this.metadata(root, c) },
          });
        if (c.folder) walk(c);
      }
    };
    if (base.folder) walk(base);
    const id = randomId(32);
    this.cursors.set(id, { entries, offset: 0, limit: max });
    this.sendMatches(res, id);
  }

  private sendMatches(res: ServerResponse, id: string): void {
    const c = this.cursors.get(id)!;
    const page = c.entries.slice(c.offset, c.offset + c.limit);
    c.offset += page.length;
    const more = c.offset < c.entries.length;
    sendJson(res, 200, { matches: page, has_more: more, ...(more ? { cursor: `SS${id}` } : {}) });
  }

  private searchContinue(res: ServerResponse, args: Record<string, unknown>): void {
    const id = String(args.cursor ?? '').replace(/^SS/, '');
    if (!this.cursors.has(id))
      return sendText(res, 400, 'Error in call to API function "files/search/continue_v2": cursor: invalid');
    this.sendMatches(res, id);
  }

  // ---------- changes ----------

  private createFolder(res: ServerResponse, root: DbxNode, args: Record<string, unknown>): void {
    const target = this.parentFor(root, String(args.path ?? ''));
    if (target === 'malformed')
      return this.endpointError(res, 'path/malformed_path/', { '.tag': 'path', path: { '.tag': 'malformed_path' } });
    if (target === 'conflict')
      return this.endpointError(res, 'path/conflict/file/', {
        '.tag': 'path',
        path: { '.tag': 'conflict', conflict: { '.tag': 'file' } },
      });
    const existing = target.parent.children.get(target.name.toLowerCase());
    let name = target.name;
    if (existing) {
      if (args.autorename !== true) {
        const kind = existing.folder ? 'folder' : 'file';
        return this.endpointError(res, `path/conflict/${kind}/`, {
          '.tag': 'path',
          path: { '.tag': 'conflict', conflict: { '.tag': kind } },
        });
      }
      name = this.uniqueName(target.parent, name);
    }
    const node = this.newFolderNode(name, target.parent);
    sendJson(res, 200, { metadata: this.metadata(root, node) });
  }

  private delete(req: EmuRequest, res: ServerResponse, root: DbxNode, args: Record<string, unknown>): void {
    if (!this.takeWriteLock(req, res, root)) return;
    this.deleteV2Calls++;
    const r = this.deleteResult(root, String(args.path ?? ''));
    if ('summary' in r) return this.endpointError(res, r.summary, r.error);
    sendJson(res, 200, { metadata: r.metadata });
  }

  /** Deletes one item (DeleteError union on failure). */
  private deleteResult(
    root: DbxNode,
    path: string,
  ): { metadata: Record<string, unknown> } | { summary: string; error: Record<string, unknown> } {
    const node = this.find(root, path);
    if (node === 'malformed')
      return {
        summary: 'path_lookup/malformed_path/',
        error: { '.tag': 'path_lookup', path_lookup: { '.tag': 'malformed_path' } },
      };
    if (!node || node === root)
      return {
        summary: 'path_lookup/not_found/',
        error: { '.tag': 'path_lookup', path_lookup: { '.tag': 'not_found' } },
      };
    const meta = this.metadata(root, node);
    this.bury(root, node);
    node.parent!.children.delete(node.name.toLowerCase());
    this.deleted.push({ path: String(meta.path_display), at: Date.now() });
    return { metadata: meta };
  }

  private cloneTree(node: DbxNode, parent: DbxNode, name: string): DbxNode {
    if (node.folder) {
      const copy = this.newFolderNode(name, parent);
      for (const c of node.children.values()) this.cloneTree(c, copy, c.name);
      return copy;
    }
    const copy: DbxNode = {
      ...node,
      id: `id:${randomId(22)}`,
      name,
      parent,
      children: new Map(),
      rev: randomId(15, '0123456789abcdef'),
      serverModified: Date.now(),
    };
    parent.children.set(name.toLowerCase(), copy);
    return copy;
  }

  private relocate(res: ServerResponse, root: DbxNode, args: Record<string, unknown>, copy: boolean): void {
    const from = this.find(root, String(args.from_path ?? ''));
    if (from === 'malformed')
      return this.endpointError(res, 'from_lookup/malformed_path/', {
        '.tag': 'from_lookup',
        from_lookup: { '.tag': 'malformed_path' },
      });
    if (!from || from === root)
      return this.endpointError(res, 'from_lookup/not_found/', {
        '.tag': 'from_lookup',
        from_lookup: { '.tag': 'not_found' },
      });
    const target = this.parentFor(root, String(args.to_path ?? ''));
    if (target === 'malformed')
      return this.endpointError(res, 'to/malformed_path/', { '.tag': 'to', to: { '.tag': 'malformed_path' } });
    if (target === 'conflict')
      return this.endpointError(res, 'to/conflict/file/', {
        '.tag': 'to',
        to: { '.tag': 'conflict', conflict: { '.tag': 'file' } },
      });
    for (let p: DbxNode | undefined = target.parent; p; p = p.parent) {
      if (p === from)
        return this.endpointError(res, 'cant_move_folder_into_itself/', { '.tag': 'cant_move_folder_into_itself' });
    }
    const existing = target.parent.children.get(target.name.toLowerCase());
    let name = target.name;
    if (existing && existing !== from) {
      if (args.autorename !== true) {
        const kind = existing.folder ? 'folder' : 'file';
        return this.endpointError(res, `to/conflict/${kind}/`, {
          '.tag': 'to',
          to: { '.tag': 'conflict', conflict: { '.tag': kind } },
        });
      }
      name = this.uniqueName(target.parent, name);
    }
    if (copy) {
      const node = this.cloneTree(from, target.parent, name);
      return sendJson(res, 200, { metadata: this.metadata(root, node) });
    }
    from.parent!.children.delete(from.name.toLowerCase());
    from.name = name;
    from.parent = target.parent;
    target.parent.children.set(name.toLowerCase(), from);
    sendJson(res, 200, { metadata: this.metadata(root, from) });
  }

  // ---------- content ----------

  private download(req: EmuRequest, res: ServerResponse, root: DbxNode, args: Record<string, unknown>): void {
    const node = this.find(root, String(args.path ?? ''));
    if (node === 'malformed')
      return this.endpointError(res, 'path/malformed_path/', { '.tag': 'path', path: { '.tag': 'malformed_path' } });
    if (!node) return this.endpointError(res, 'path/not_found/', { '.tag': 'path', path: { '.tag': 'not_found' } });
    if (node.folder) return this.endpointError(res, 'path/not_file/', { '.tag': 'path', path: { '.tag': 'not_file' } });
    const result = asciiJson(this.metadata(root, node));
    sendBytes(req, res, node.content ?? Buffer.alloc(0), { 'dropbox-api-result': result });
  }

  private writeMode(args: Record<string, unknown>): { mode: string; rev?: string } {
    const m = args.mode;
    if (typeof m === 'string') return { mode: m };
    if (m && typeof m === 'object') {
      const tag = (m as Record<string, unknown>)['.tag'];
      return { mode: String(tag), ...(tag === 'update' ? { rev: String((m as Record<string, unknown>).update) } : {}) };
    }
    return { mode: 'add' };
  }

  /** Commits bytes at a path under Dropbox's write modes; answers the file metadata or an error. */
  private commit(
    res: ServerResponse,
    root: DbxNode,
    user: string,
    commit: Record<string, unknown>,
    content: Buffer,
    contentHash?: unknown,
  ): void {
    const r = this.commitResult(root, user, commit, content, contentHash, true);
    if ('summary' in r) return this.endpointError(res, r.summary, r.error);
    sendJson(res, 200, r.metadata);
  }

  /**
   * The commit itself. `uploadError` shapes path errors as files/upload's UploadError (reason inside
   * UploadWriteFailed); upload_session/finish's UploadSessionFinishError carries the WriteError as `path`.
   */
  private commitResult(
    root: DbxNode,
    user: string,
    commit: Record<string, unknown>,
    content: Buffer,
    contentHash: unknown,
    uploadError: boolean,
  ): { metadata: Record<string, unknown> } | { summary: string; error: Record<string, unknown> } {
    const fail = (inner: Record<string, unknown>, summary: string) => ({
      summary: `path/${summary}`,
      error: uploadError ? { '.tag': 'path', reason: inner } : { '.tag': 'path', path: inner },
    });
    if (typeof contentHash === 'string' && contentHash !== dropboxContentHash(content)) {
      return { summary: 'content_hash_mismatch/', error: { '.tag': 'content_hash_mismatch' } };
    }
    const target = this.parentFor(root, String(commit.path ?? ''));
    if (target === 'malformed') return fail({ '.tag': 'malformed_path' }, 'malformed_path/');
    if (target === 'conflict') return fail({ '.tag': 'conflict', conflict: { '.tag': 'file' } }, 'conflict/file/');
    const acc = this.account(user);
    const existing = target.parent.children.get(target.name.toLowerCase());
    if (
      this.treeBytes(this.namespaces.get(acc.root)!) + content.length - (existing?.content?.length ?? 0) >
      acc.allocated
    ) {
      return fail({ '.tag': 'insufficient_space' }, 'insufficient_space/');
    }
    const { mode, rev } = this.writeMode(commit);
    const clientModified = typeof commit.client_modified === 'string' ? Date.parse(commit.client_modified) : Date.now();
    let name = target.name;
    if (existing) {
      if (existing.folder) return fail({ '.tag': 'conflict', conflict: { '.tag': 'folder' } }, 'conflict/folder/');
      const same = existing.content?.equals(content) ?? false;
      const replace = mode === 'overwrite' || (mode === 'update' && rev === existing.rev);
      if (!replace && !same) {
        if (commit.autorename !== true)
          return fail({ '.tag': 'conflict', conflict: { '.tag': 'file' } }, 'conflict/file/');
        name = this.uniqueName(target.parent, name);
      } else {
        existing.content = content;
        existing.clientModified = Number.isFinite(clientModified) ? clientModified : Date.now();
        existing.serverModified = Date.now();
        existing.rev = randomId(15, '0123456789abcdef');
        return { metadata: this.metadata(root, existing) };
      }
    }
    const node: DbxNode = {
      id: `id:${randomId(22)}`,
      name,
      parent: target.parent,
      folder: false,
      children: new Map(),
      content,
      clientModified: Number.isFinite(clientModified) ? clientModified : Date.now(),
      serverModified: Date.now(),
      rev: randomId(15, '0123456789abcdef'),
    };
    target.parent.children.set(name.toLowerCase(), node);
    return { metadata: this.metadata(root, node) };
  }

  private async upload(
    req: EmuRequest,
    res: ServerResponse,
    a: AuthContext,
    root: DbxNode,
    args: Record<string, unknown>,
  ): Promise<void> {
    const body = await req.body();
    if (body.length > UPLOAD_LIMIT)
      return this.endpointError(res, 'payload_too_large/', { '.tag': 'payload_too_large' });
    if (!this.takeWriteLock(req, res, root)) return;
    this.commit(res, root, a.user, args, body, args.content_hash);
  }

  private async sessionStart(
    req: EmuRequest,
    res: ServerResponse,
    a: AuthContext,
    args: Record<string, unknown>,
  ): Promise<void> {
    const body = await req.body();
    const type = (args.session_type as { '.tag'?: string } | undefined)?.['.tag'] ?? 'sequential';
    const concurrent = type === 'concurrent';
    if (concurrent && body.length > 0)
      return this.endpointError(res, 'concurrent_session_data_not_allowed/', {
        '.tag': 'concurrent_session_data_not_allowed',
      });
    const id = `pid_upload_session:${randomId(40)}`;
    const s: Session = { id, user: a.user, concurrent, closed: args.close === true, pieces: new Map(), length: 0 };
    if (body.length) {
      s.pieces.set(0, body);
      s.length = body.length;
    }
    this.sessions.set(id, s);
    sendJson(res, 200, { session_id: id });
  }

  private lookupError(res: ServerResponse, tag: string, extra: Record<string, unknown> = {}): void {
    this.endpointError(res, `${tag}/`, { '.tag': tag, ...extra });
  }

  private async sessionAppend(
    req: EmuRequest,
    res: ServerResponse,
    a: AuthContext,
    args: Record<string, unknown>,
  ): Promise<void> {
    const body = await req.body();
    const cursor = (args.cursor ?? {}) as { session_id?: string; offset?: number };
    const s = this.sessions.get(String(cursor.session_id ?? ''));
    if (!s || s.user !== a.user) return this.lookupError(res, 'not_found');
    if (s.closed) return this.lookupError(res, 'closed');
    if (body.length > UPLOAD_LIMIT) return this.lookupError(res, 'payload_too_large');
    const offset = Number(cursor.offset ?? -1);
    this.appendCalls++;
    if (s.concurrent) {
      if (offset % BLOCK !== 0) return this.lookupError(res, 'concurrent_session_invalid_offset');
      if (args.close !== true && body.length % BLOCK !== 0)
        return this.lookupError(res, 'concurrent_session_invalid_data_size');
      if (s.pieces.has(offset)) return this.lookupError(res, 'incorrect_offset', { correct_offset: s.length });
      s.pieces.set(offset, body);
      s.length = Math.max(s.length, offset + body.length);
    } else {
      if (offset !== s.length) return this.lookupError(res, 'incorrect_offset', { correct_offset: s.length });
      s.pieces.set(offset, body);
      s.length += body.length;
    }
    if (args.close === true) s.closed = true;
    sendText(res, 200, 'null', {}, 'application/json');
  }

  /** The session's bytes in order, or undefined when pieces are missing. */
  private assemble(s: Session): Buffer | undefined {
    const offsets = [...s.pieces.keys()].sort((x, y) => x - y);
    let pos = 0;
    const parts: Buffer[] = [];
    for (const off of offsets) {
      if (off !== pos) return undefined;
      const piece = s.pieces.get(off)!;
      parts.push(piece);
      pos += piece.length;
    }
    return Buffer.concat(parts, pos);
  }

  private async sessionFinish(
    req: EmuRequest,
    res: ServerResponse,
    a: AuthContext,
    root: DbxNode,
    args: Record<string, unknown>,
  ): Promise<void> {
    const body = await req.body();
    if (!this.takeWriteLock(req, res, root)) return;
    this.finishCalls++;
    const r = this.finishResult(a, root, args, body, false);
    if ('summary' in r) return this.endpointError(res, r.summary, r.error);
    sendJson(res, 200, r.metadata);
  }

  /** upload_session/finish for one session (alone, or as one entry of a finish batch). */
  private finishResult(
    a: AuthContext,
    root: DbxNode,
    args: Record<string, unknown>,
    body: Buffer,
    batch: boolean,
  ): { metadata: Record<string, unknown> } | { summary: string; error: Record<string, unknown> } {
    const lookup = (inner: Record<string, unknown>) => ({
      summary: `lookup_failed/${String(inner['.tag'])}/`,
      error: { '.tag': 'lookup_failed', lookup_failed: inner },
    });
    const plain = (tag: string) => ({ summary: `${tag}/`, error: { '.tag': tag } });
    const cursor = (args.cursor ?? {}) as { session_id?: string; offset?: number };
    const s = this.sessions.get(String(cursor.session_id ?? ''));
    if (!s || s.user !== a.user) return lookup({ '.tag': 'not_found' });
    // A batch finishes closed sessions only (their last start or append had close=true).
    if (batch && !s.closed) return lookup({ '.tag': 'not_closed' });
    if (s.concurrent) {
      if (body.length) return plain('concurrent_session_data_not_allowed');
      if (!s.closed) return plain('concurrent_session_not_closed');
    } else if (body.length) {
      if (Number(cursor.offset) !== s.length) return lookup({ '.tag': 'incorrect_offset', correct_offset: s.length });
      s.pieces.set(s.length, body);
      s.length += body.length;
    }
    const content = this.assemble(s);
    if (!content) return plain('concurrent_session_missing_data');
    // cursor.offset counts the bytes uploaded before this call; the finish body follows them.
    if (Number(cursor.offset) + body.length !== content.length)
      return lookup({ '.tag': 'incorrect_offset', correct_offset: content.length });
    this.sessions.delete(s.id);
    return this.commitResult(
      root,
      a.user,
      (args.commit ?? {}) as Record<string, unknown>,
      content,
      args.content_hash,
      !batch,
    );
  }

  // ---------- batches and the namespace write lock ----------

  /**
   * Dropbox serializes the commits of a namespace under a lock: a commit arriving while another
   * holds it answers too_many_write_operations (429, Retry-After), which is why the performance
   * guide recommends committing many files together with upload_session/finish_batch and deleting
   * with delete_batch (a batch takes the lock once for all its entries, and batch jobs of the same
   * namespace wait for each other instead of failing). Off (0) unless a test sets `writeLockMs`:
   * each single commit (files/upload, upload_session/finish, delete_v2) holds the lock that long.
   */
  private takeWriteLock(req: EmuRequest, res: ServerResponse, root: DbxNode): boolean {
    if (this.writeLockMs <= 0) return true;
    const now = Date.now();
    if ((this.lockedUntil.get(root) ?? 0) > now) {
      this.writeConflicts++;
      this.sendRateLimited(req, res, 1, 'too_many_write_operations');
      return false;
    }
    this.lockedUntil.set(root, now + this.writeLockMs);
    return true;
  }

  /** Runs a batch under the namespace lock: batches wait for each other and for single commits. */
  private underLock<T>(root: DbxNode, work: () => T): Promise<T> {
    const prev = this.batchChains.get(root) ?? Promise.resolve();
    const run = prev.then(async () => {
      for (;;) {
        const wait = (this.lockedUntil.get(root) ?? 0) - Date.now();
        if (wait <= 0) break;
        await sleep(wait);
      }
      if (this.writeLockMs > 0) this.lockedUntil.set(root, Date.now() + this.writeLockMs);
      return work();
    });
    this.batchChains.set(
      root,
      run.then(
        () => undefined,
        () => undefined,
      ),
    );
    return run;
  }

  private batchEntries(res: ServerResponse, name: string, args: Record<string, unknown>): unknown[] | undefined {
    const entries = args.entries;
    if (!Array.isArray(entries)) {
      sendText(res, 400, `Error in call to API function "${name}": request body: entries: missing required field`);
      return undefined;
    }
    if (entries.length > BATCH_LIMIT) {
      sendText(
        res,
        400,
        `Error in call to API function "${name}": request body: entries: ${entries.length} items, at most ${BATCH_LIMIT} allowed`,
      );
      return undefined;
    }
    return entries;
  }

  private finishEntries(a: AuthContext, root: DbxNode, entries: unknown[]): Record<string, unknown>[] {
    this.finishBatchCalls++;
    this.finishBatchSizes.push(entries.length);
    return entries.map((e) => {
      const r = this.finishResult(a, root, (e ?? {}) as Record<string, unknown>, Buffer.alloc(0), true);
      return 'summary' in r ? { '.tag': 'failure', failure: r.error } : { ...r.metadata, '.tag': 'success' };
    });
  }

  /** files/upload_session/finish_batch_v2: synchronous, one result per entry in the same order. */
  private async finishBatchV2(
    res: ServerResponse,
    a: AuthContext,
    root: DbxNode,
    args: Record<string, unknown>,
  ): Promise<void> {
    const entries = this.batchEntries(res, 'files/upload_session/finish_batch_v2', args);
    if (!entries) return;
    const results = await this.underLock(root, () => this.finishEntries(a, root, entries));
    sendJson(res, 200, { entries: results });
  }

  /** files/upload_session/finish_batch (v1): launches an async job, polled with finish_batch/check. */
  private finishBatchV1(res: ServerResponse, a: AuthContext, root: DbxNode, args: Record<string, unknown>): void {
    const entries = this.batchEntries(res, 'files/upload_session/finish_batch', args);
    if (!entries) return;
    sendJson(res, 200, {
      '.tag': 'async_job_id',
      async_job_id: this.launchJob(a, 'finish', root, () => this.finishEntries(a, root, entries)),
    });
  }

  /** files/delete_batch: launches an async job, polled with delete_batch/check. */
  private deleteBatch(res: ServerResponse, root: DbxNode, args: Record<string, unknown>): void {
    const entries = this.batchEntries(res, 'files/delete_batch', args);
    if (!entries) return;
    this.deleteBatchCalls++;
    const id = this.launchJob(undefined, 'delete', root, () =>
      entries.map((e) => {
        const r = this.deleteResult(root, String((e as Record<string, unknown> | null)?.path ?? ''));
        return 'summary' in r ? { '.tag': 'failure', failure: r.error } : { '.tag': 'success', metadata: r.metadata };
      }),
    );
    sendJson(res, 200, { '.tag': 'async_job_id', async_job_id: id });
  }

  private launchJob(
    a: AuthContext | undefined,
    kind: 'finish' | 'delete',
    root: DbxNode,
    work: () => Record<string, unknown>[],
  ): string {
    const id = `dbjid:${randomId(40)}`;
    const job: Job = { kind, user: a?.user, root, entries: undefined };
    this.jobs.set(id, job);
    // The job runs in the background, after a short while, under the namespace lock.
    void sleep(this.jobDelayMs)
      .then(() => this.underLock(root, work))
      .then((entries) => {
        job.entries = entries;
      });
    return id;
  }

  /** finish_batch/check and delete_batch/check: in_progress until the job completes. */
  private checkJob(
    res: ServerResponse,
    a: AuthContext,
    args: Record<string, unknown>,
    kind: 'finish' | 'delete',
  ): void {
    this.checkCalls++;
    const job = this.jobs.get(String(args.async_job_id ?? ''));
    if (!job || job.kind !== kind || (job.user !== undefined && job.user !== a.user))
      return this.endpointError(res, 'invalid_async_job_id/', { '.tag': 'invalid_async_job_id' });
    if (!job.entries) return sendJson(res, 200, { '.tag': 'in_progress' });
    sendJson(res, 200, { '.tag': 'complete', entries: job.entries });
  }

  /** Upload sessions not yet finished. */
  openSessions(): number {
    return this.sessions.size;
  }

  /** Every file under a folder path of the user's home namespace, by relative path (tests verify with it). */
  filesUnder(user: string, path: string): Map<string, Buffer> {
    const root = this.namespaces.get(this.account(user).home)!;
    const start = path === '/' || path === '' ? root : this.find(root, path);
    const out = new Map<string, Buffer>();
    const walk = (folder: DbxNode, rel: string) => {
      for (const c of folder.children.values()) {
        if (c.folder) walk(c, `${rel}/${c.name}`);
        else out.set(`${rel}/${c.name}`, c.content ?? Buffer.alloc(0));
      }
    };
    if (start && start !== 'malformed' && start.folder) walk(start, '');
    return out;
  }

  /** Adds a file or folder (test setup), in the user's home namespace. */
  seed(user: string, path: string, content?: Buffer): void {
    const root = this.namespaces.get(this.account(user).home)!;
    const segs = path.split('/').filter(Boolean);
    let cur = root;
    segs.forEach((seg, i) => {
      const last = i === segs.length - 1;
      const existing = cur.children.get(seg.toLowerCase());
      if (last && content) {
        const node: DbxNode = {
          id: `id:${randomId(22)}`,
          name: seg,
          parent: cur,
          folder: false,
          children: new Map(),
          content,
          clientModified: Date.now(),
          serverModified: Date.now(),
          rev: randomId(15, '0123456789abcdef'),
        };
        cur.children.set(seg.toLowerCase(), node);
      } else {
        cur = existing ?? this.newFolderNode(seg, cur);
      }
    });
  }
}

/** Dropbox timestamps: seconds precision, "Z". */
function isoSeconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** JSON with every non-ASCII character escaped, as HTTP headers need. */
export function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'),
  );
}
