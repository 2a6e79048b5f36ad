import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  Code,
  EXTERNAL_APP_ID_START,
  baseName,
  externalAppBodySchema,
  joinPath,
  parentOf,
  type AppConvertBody,
  type AppFile,
  type AppFileInfo,
  type AppFunction,
  type AppTokenData,
  type EcologyApp,
  type ExternalAppBody,
  type MyAppsData,
} from '@skyferry/contract';
import type { Logger } from 'pino';
import { ApiError, errors } from '../../http/errors.ts';
import type { EcologyRepository, ExternalAppRow } from '../../repositories/ecology.ts';
import type { Authorization, Caller } from '../authorization.ts';
import type { CloudIdentity, CloudsService } from '../clouds.ts';
import { randomToken, sha256Hex } from '../crypto.ts';
import { entryEtag, type Download, type FilesService } from '../files/files-service.ts';
import { mimeOf } from '../files/mime.ts';
import { FIRST_PARTY_APPS } from './first-party.ts';
import { convertImage, viewablePicture } from './convert.ts';

const TOKEN_PREFIX = 'sk_app_';
/** An app token lasts a working day; the host asks for a new one when the user opens a file again. */
export const APP_TOKEN_LIFETIME_MS = 12 * 3_600_000;
/** How long the cached list of external origins (the pages' frame-src) may be stale in other processes. */
const ORIGINS_TTL_MS = 30_000;

/** Who asks for an app token: an account in one of its sessions, or a visitor. */
export type AppTokenOwner =
  { kind: 'user'; userId: string; sessionId: string } | { kind: 'visitor'; visitorId: string };

/** One file an app token reaches. */
interface Grant {
  /** The id the app names the file by. */
  id: string;
  cloud: string;
  path: string;
}

/** A valid app token as the file calls see it. */
export interface AppTokenContext {
  hash: string;
  appId: number;
  identity: CloudIdentity;
  writable: boolean;
  grants: Grant[];
}

function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
}

function toApp(row: ExternalAppRow): EcologyApp {
  const functions = JSON.parse(row.functions) as AppFunction[];
  return {
    app_id: row.app_id,
    name: row.name,
    description: row.description,
    icon: row.icon,
    url: row.url,
    origin: row.origin,
    function_id: functions[0]?.id ?? null,
    is_mandatory_login: row.mandatory_login === 1,
    state: row.state,
    functions,
    office: row.state === 2 ? { name: row.name, token: '' } : null,
    first_party: false,
  };
}

/**
 * The app registry and the tokens handed to embedded apps. First-party apps are built in; the
 * operator registers external ones (nothing external by default). An app token reaches only the
 * files the user opened with the app, reads them, and writes them only for an app that edits or
 * converts; it ends with its session (logout), when the host revokes it (the tab closed), or after
 * APP_TOKEN_LIFETIME_MS. Ownership of every file is checked again by the files service on each use.
 */
export class EcologyService {
  private readonly repo: EcologyRepository;
  private readonly files: FilesService;
  private readonly clouds: CloudsService;
  private readonly authz: Authorization;
  private readonly log: Logger;
  private readonly now: () => number;
  private origins: { list: string[]; at: number } = { list: [], at: -Infinity };

  constructor(deps: {
    repo: EcologyRepository;
    files: FilesService;
    clouds: CloudsService;
    authz: Authorization;
    log: Logger;
    now?: () => number;
  }) {
    this.repo = deps.repo;
    this.files = deps.files;
    this.clouds = deps.clouds;
    this.authz = deps.authz;
    this.log = deps.log;
    this.now = deps.now ?? Date.now;
  }

  /** GET /ecology/v1/apps: first-party apps, then the operator's; office-type apps only with showOffice. */
  async list(showOffice: boolean): Promise<EcologyApp[]> {
    const external = (await this.repo.listApps()).map(toApp);
    return [...FIRST_PARTY_APPS, ...external].filter((a) => showOffice || a.state !== 2);
  }

  /** One app by id (404 app_not_found). */
  async get(appId: number): Promise<EcologyApp> {
    const first = FIRST_PARTY_APPS.find((a) => a.app_id === appId);
    if (first) return first;
    const row = await this.repo.findApp(appId);
    if (!row) throw errors.notFound('app_not_found');
    return toApp(row);
  }

  /**
   * An operator's office-type app (state 2) and its function that opens `path`: 400 when the app
   * is not an office app or takes no file of that type.
   */
  async officeFunction(appId: number, path: string): Promise<{ app: EcologyApp; url: string; edits: boolean }> {
    const app = await this.get(appId);
    if (app.state !== 2) throw errors.badRequest('field_invalid', { field: 'app_id' });
    const fn = app.functions.find((f) => f.extensions.includes(extensionOf(baseName(path))));
    if (!fn) throw errors.badRequest('field_invalid', { field: 'path' });
    return { app, url: fn.url || app.url, edits: fn.action !== 'view' };
  }

  /** PUT /ecology/v1/apps/usage/{appId}: the user opened the app. */
  async recordUse(userId: string, appId: number): Promise<void> {
    await this.get(appId);
    await this.repo.recordUse(userId, appId, this.now());
  }

  /** GET /ecology/v1/apps/me: the apps the user opened that still exist, most recently used first. */
  async mine(userId: string): Promise<MyAppsData> {
    const usage = await this.repo.usageOf(userId);
    const apps = new Map((await this.list(true)).map((a) => [a.app_id, a]));
    return {
      items: usage.flatMap((u) => {
        const app = apps.get(u.app_id);
        return app ? [{ ...app, last_used_at: Number(u.used_at), uses: u.uses }] : [];
      }),
    };
  }

  /** The origins external apps are framed from (the pages' CSP frame-src), cached for a short while. */
  async frameOrigins(): Promise<string[]> {
    if (this.now() - this.origins.at > ORIGINS_TTL_MS) {
      const list = [...new Set((await this.repo.listApps()).map((a) => a.origin))];
      this.origins = { list, at: this.now() };
    }
    return this.origins.list;
  }

  /** The last answer of frameOrigins without waiting (the security headers are set synchronously). */
  cachedFrameOrigins(): string[] {
    if (this.now() - this.origins.at > ORIGINS_TTL_MS) void this.frameOrigins().catch(() => undefined);
    return this.origins.list;
  }

  // The operator's registrations.

  async listExternal(caller: Caller | undefined): Promise<EcologyApp[]> {
    await this.authz.requireOperator(caller);
    return (await this.repo.listApps()).map(toApp);
  }

  private rowOf(input: ExternalAppBody): Omit<ExternalAppRow, 'app_id' | 'created_at' | 'created_by'> {
    const body = externalAppBodySchema.parse(input);
    const origin = new URL(body.url).origin;
    const functions: AppFunction[] = body.functions.map((f, i) => {
      const url = f.url ?? body.url;
      if (new URL(url).origin !== origin) throw errors.badRequest('app_function_origin', { origin });
      return { id: i + 1, name: f.name, url, action: f.action, extensions: [...new Set(f.extensions)] };
    });
    return {
      name: body.name,
      description: body.description,
      icon: body.icon,
      url: body.url,
      origin,
      functions: JSON.stringify(functions),
      state: body.state,
      mandatory_login: body.is_mandatory_login ? 1 : 0,
      updated_at: this.now(),
    };
  }

  async register(caller: Caller | undefined, input: ExternalAppBody): Promise<EcologyApp> {
    const operator = await this.authz.requireOperator(caller);
    const row = this.rowOf(input);
    let appId: number;
    for (let attempt = 0; ; attempt += 1) {
      try {
        appId = await this.repo.insertApp(
          { ...row, created_at: this.now(), created_by: operator.id },
          EXTERNAL_APP_ID_START,
        );
        break;
      } catch (err) {
        // Another process took the same id at the same moment: take the next one.
        if (attempt >= 3) throw err;
      }
    }
    this.origins.at = -Infinity;
    await this.frameOrigins();
    this.log.info({ operator: operator.id, app: appId, origin: row.origin }, 'external app registered');
    return this.get(appId);
  }

  async update(caller: Caller | undefined, appId: number, input: ExternalAppBody): Promise<EcologyApp> {
    const operator = await this.authz.requireOperator(caller);
    if (!(await this.repo.updateApp(appId, this.rowOf(input)))) throw errors.notFound('app_not_found');
    this.origins.at = -Infinity;
    await this.frameOrigins();
    this.log.info({ operator: operator.id, app: appId }, 'external app changed');
    return this.get(appId);
  }

  async remove(caller: Caller | undefined, appId: number): Promise<void> {
    const operator = await this.authz.requireOperator(caller);
    if (!(await this.repo.deleteApp(appId))) throw errors.notFound('app_not_found');
    this.origins.at = -Infinity;
    await this.frameOrigins();
    this.log.info({ operator: operator.id, app: appId }, 'external app removed');
  }

  // App tokens.

  /**
   * POST /ecology/v1/app-tokens: a token for `appId` reaching `files` of the caller's own clouds.
   * Files the app does not accept are refused (a viewer is not handed an archive).
   */
  async issueToken(
    owner: AppTokenOwner,
    appId: number,
    files: ReadonlyArray<{ cloud_id: string; path: string }>,
  ): Promise<AppTokenData> {
    const app = await this.get(appId);
    if (app.is_mandatory_login && owner.kind !== 'user') throw errors.unauthenticated();
    const identity: CloudIdentity =
      owner.kind === 'user' ? { kind: 'user', userId: owner.userId } : { kind: 'visitor', visitorId: owner.visitorId };
    const accepted = new Set(app.functions.flatMap((f) => f.extensions));
    for (const cloudId of new Set(files.map((f) => f.cloud_id))) await this.clouds.get(identity, cloudId);
    const grants: Grant[] = [];
    const seen = new Set<string>();
    for (const f of files) {
      const key = `${f.cloud_id}\u0000${f.path}`;
      if (seen.has(key)) continue;
      seen.add(key);
      if (f.path === '/' || !accepted.has(extensionOf(baseName(f.path))))
        throw errors.badRequest('field_invalid', { field: 'files' });
      grants.push({ id: randomBytes(9).toString('base64url'), cloud: f.cloud_id, path: f.path });
    }
    const writable = app.functions.some((f) => f.action !== 'view');
    const token = randomToken(TOKEN_PREFIX);
    const now = this.now();
    const expiresAt = now + APP_TOKEN_LIFETIME_MS;
    await this.repo.insertToken({
      token_hash: sha256Hex(token),
      app_id: app.app_id,
      user_id: owner.kind === 'user' ? owner.userId : null,
      session_id: owner.kind === 'user' ? owner.sessionId : null,
      visitor_id: owner.kind === 'visitor' ? owner.visitorId : null,
      grants: JSON.stringify(grants),
      writable: writable ? 1 : 0,
      created_at: now,
      expires_at: expiresAt,
    });
    return { token, expires_at: expiresAt, files: grants.map((g) => this.appFile(g, writable)) };
  }

  /** POST /ecology/v1/app-tokens/revoke: the host closed the app. Only the token's owner may. */
  async revokeToken(owner: AppTokenOwner, token: string): Promise<void> {
    if (!token.startsWith(TOKEN_PREFIX)) return;
    const hash = sha256Hex(token);
    const row = await this.repo.findLiveToken(hash, this.now());
    if (!row) return;
    const mine = owner.kind === 'user' ? row.user_id === owner.userId : row.visitor_id === owner.visitorId;
    if (mine) await this.repo.deleteToken(hash);
  }

  /** The context of a token sent by an app; 140013 with app_token_invalid when it does not work. */
  async resolve(token: string | undefined): Promise<AppTokenContext> {
    const invalid = new ApiError(Code.UNAUTHENTICATED, 'app_token_invalid');
    if (!token?.startsWith(TOKEN_PREFIX) || token.length > 200) throw invalid;
    const hash = sha256Hex(token);
    const row = await this.repo.findLiveToken(hash, this.now());
    if (!row) throw invalid;
    const identity: CloudIdentity | undefined = row.user_id
      ? { kind: 'user', userId: row.user_id }
      : row.visitor_id
        ? { kind: 'visitor', visitorId: row.visitor_id }
        : undefined;
    if (!identity) throw invalid;
    return {
      hash,
      appId: row.app_id,
      identity,
      writable: row.writable === 1,
      grants: JSON.parse(row.grants) as Grant[],
    };
  }

  private appFile(g: Grant, writable: boolean): AppFile {
    return { file_id: g.id, name: baseName(g.path), writable };
  }

  private grantOf(ctx: AppTokenContext, fileId: string): Grant {
    const g = ctx.grants.find((x) => x.id === fileId);
    if (!g) throw errors.notFound();
    return g;
  }

  private requireWritable(ctx: AppTokenContext): void {
    if (!ctx.writable) throw new ApiError(Code.FORBIDDEN, 'app_cannot_write');
  }

  fileList(ctx: AppTokenContext): AppFile[] {
    return ctx.grants.map((g) => this.appFile(g, ctx.writable));
  }

  /** A granted file's state now: size, time, type and the ETag a save must send back. */
  async info(ctx: AppTokenContext, fileId: string): Promise<AppFileInfo> {
    const g = this.grantOf(ctx, fileId);
    const entry = await this.files.entryOf(ctx.identity, g.cloud, g.path);
    if (entry.kind !== 'file') throw errors.pathNotExist();
    return {
      ...this.appFile(g, ctx.writable),
      size: entry.size,
      modified: entry.modTime?.getTime() ?? 0,
      mime_type: mimeOf(entry.name, entry.mimeType),
      etag: entryEtag(entry),
    };
  }

  /** The bytes of a granted file (the route streams them, with ranges). */
  async download(ctx: AppTokenContext, fileId: string, signal: AbortSignal): Promise<Download> {
    const g = this.grantOf(ctx, fileId);
    return this.files.download(ctx.identity, g.cloud, [g.path], undefined, signal);
  }

  /** Writes a granted file back; with `ifMatch`, only when it has not changed since (409006 otherwise). */
  async save(
    ctx: AppTokenContext,
    fileId: string,
    body: Readable,
    opts: { size: number; ifMatch?: string; signal: AbortSignal },
  ): Promise<AppFileInfo> {
    this.requireWritable(ctx);
    const g = this.grantOf(ctx, fileId);
    await this.files.upload(ctx.identity, g.cloud, g.path, body, {
      size: opts.size,
      overwrite: true,
      ifMatch: opts.ifMatch,
      signal: opts.signal,
    });
    return this.info(ctx, fileId);
  }

  /** Adds a new file beside a granted one to the token (save as, conversions). */
  private async grantSibling(ctx: AppTokenContext, of: Grant, name: string): Promise<Grant> {
    const g: Grant = {
      id: randomBytes(9).toString('base64url'),
      cloud: of.cloud,
      path: joinPath(parentOf(of.path), name),
    };
    ctx.grants.push(g);
    await this.repo.updateGrants(ctx.hash, JSON.stringify(ctx.grants));
    return g;
  }

  /** Saves a new file named `name` beside a granted one (409002 when the name is taken). */
  async saveAs(
    ctx: AppTokenContext,
    fileId: string,
    name: string,
    body: Readable,
    opts: { size: number; signal: AbortSignal },
  ): Promise<AppFileInfo> {
    this.requireWritable(ctx);
    const of = this.grantOf(ctx, fileId);
    const path = joinPath(parentOf(of.path), name);
    await this.files.upload(ctx.identity, of.cloud, path, body, {
      size: opts.size,
      overwrite: false,
      signal: opts.signal,
    });
    const g = await this.grantSibling(ctx, of, name);
    return this.info(ctx, g.id);
  }

  /** A converted copy of a granted picture beside it (resized, in another format). */
  async convert(
    ctx: AppTokenContext,
    fileId: string,
    input: AppConvertBody,
    signal: AbortSignal,
  ): Promise<AppFileInfo> {
    this.requireWritable(ctx);
    const of = this.grantOf(ctx, fileId);
    const dl = await this.download(ctx, fileId, signal);
    let out: Buffer;
    try {
      if (dl.kind !== 'file') throw errors.pathNotExist();
      out = await convertImage(await dl.open(), dl.entry.name, input);
    } finally {
      dl.release();
    }
    const name = input.name;
    const path = joinPath(parentOf(of.path), name);
    await this.files.upload(ctx.identity, of.cloud, path, Readable.from([out]), {
      size: out.length,
      overwrite: false,
      signal,
    });
    const g = await this.grantSibling(ctx, of, name);
    return this.info(ctx, g.id);
  }

  /** A granted picture the browser cannot decode (HEIC/HEIF) as a JPEG the Viewer shows. */
  async picture(ctx: AppTokenContext, fileId: string, signal: AbortSignal): Promise<Buffer> {
    const dl = await this.download(ctx, fileId, signal);
    try {
      if (dl.kind !== 'file') throw errors.pathNotExist();
      return await viewablePicture(await dl.open(), dl.entry.name);
    } finally {
      dl.release();
    }
  }

  async purgeExpired(): Promise<void> {
    await this.repo.purgeExpired(this.now());
  }
}

/**
 * The frame address of an office-type app (spec section 7): the app's address, then the office
 * name and the encoded WOPI access token as a path, and the file's WOPISrc in the query (what
 * WOPI clients read).
 */
export function officeFrameUrl(appUrl: string, officeName: string, token: string, wopiSrc: string): string {
  const base = appUrl.endsWith('/') ? appUrl : `${appUrl}/`;
  const url = new URL(`${encodeURIComponent(officeName)}/${encodeURIComponent(token)}`, base);
  url.searchParams.set('WOPISrc', wopiSrc);
  return url.toString();
}
