import type { Readable } from 'node:stream';
import {
  Code,
  MAX_FILES_PER_CALL,
  NAME_PROBLEM_MESSAGE,
  PAGE_SIZES,
  Permission,
  RemoteFileType,
  baseName,
  hasFlag,
  joinPath,
  parentOf,
  validateName,
  type Album,
  type CloudInfoData,
  type CloudRef,
  type FileItem,
  type ListFilesData,
  type SearchFilesData,
  type TrashListData,
  type UploadSession,
} from '@skyferry/contract';
import { ProviderError, type Entry, type Provider } from '@skyferry/providers';
import type { Logger } from 'pino';
import { ApiError, errors } from '../../http/errors.ts';
import type { CloudIdentity, CloudRecord, CloudsService } from '../clouds.ts';
import type { SecretBox } from '../crypto.ts';
import { albumsOf, toAlbum, type AlbumCapable } from './albums.ts';
import { mapFileError } from './errors.ts';
import { LINK_LIFETIME_MS, signLink, verifyLink, type LinkClaims } from './links.ts';
import { ListingCache } from './listing-cache.ts';
import { isImageName, mimeOf } from './mime.ts';
import { ProviderPool, type ProviderLease } from './provider-pool.ts';
import { toFileItem } from './items.ts';
import { searchStep } from './search.ts';
import { makeThumbnail, spool } from './thumbnails.ts';
import { UploadSessions, type UploadOwner, type UploadRegistry } from './uploads.ts';
import { zipLength, zipStream, type ZipEntry } from './zip.ts';

export interface FilesServiceOptions {
  clouds: CloudsService;
  box: SecretBox;
  log: Logger;
  listingTtlMs?: number;
  providerIdleMs?: number;
  uploadIdleMs?: number;
  /** Records upload sessions for the other API processes sharing the database. */
  uploadRegistry?: UploadRegistry;
  now?: () => number;
}

/** A download ready to stream: one file (with its range) or a zip of several entries. */
export type Download =
  | {
      kind: 'file';
      entry: Entry;
      contentType: string;
      /** Opens the bytes (a range when given), and gives the provider back when the stream ends. */
      open(range?: { start: number; end: number }): Promise<Readable>;
      release(): void;
    }
  | { kind: 'zip'; name: string; length: number; stream: Readable; release(): void };

/** What a delete did: the paths that went, and each failure as the API error it would be. */
export interface DeleteResult {
  deleted: string[];
  failed: Array<{ path: string; error: ApiError }>;
  trashed: boolean;
}

function ownerKey(identity: CloudIdentity): string {
  return 'userId' in identity ? `u:${identity.userId}` : `v:${identity.visitorId}`;
}

export { toFileItem };

export function cloudLabel(cloud: CloudRecord): string {
  return cloud.alias || cloud.cloudAccount || cloud.kind;
}

/**
 * The permission a call needs, and whether it counts as using the cloud (`touch`, default true:
 * reads the app makes on its own do not; see ProviderPool.acquire).
 */
type Access = number | { need: number; touch: boolean };

/** Throws the naming rule's message (400) when a name is not acceptable. */
export function checkName(name: string): void {
  const problem = validateName(name);
  if (problem) throw errors.badRequest(NAME_PROBLEM_MESSAGE[problem]);
}

/** The common parent folder of several paths. */
export function commonParent(paths: readonly string[]): string {
  const split = paths.map((p) => parentOf(p).split('/').filter(Boolean));
  const first = split[0] ?? [];
  let n = first.length;
  for (const s of split) {
    let i = 0;
    while (i < n && i < s.length && s[i] === first[i]) i += 1;
    n = i;
  }
  return '/' + first.slice(0, n).join('/');
}

/**
 * The file calls of a connected cloud: list (cached), mkdir, rename, delete (to trash where there
 * is one), space info, streamed upload and download (ranges, zips of folders), resumable uploads
 * and signed download links. Ownership is enforced by the clouds service on every call.
 */
export class FilesService {
  private readonly clouds: CloudsService;
  private readonly box: SecretBox;
  private readonly log: Logger;
  private readonly now: () => number;
  readonly cache: ListingCache;
  readonly pool: ProviderPool;
  readonly uploads: UploadSessions;
  private readonly thumbs = new Map<string, { data: Buffer; type: string }>();
  private thumbBytes = 0;

  constructor(options: FilesServiceOptions) {
    this.clouds = options.clouds;
    this.box = options.box;
    this.log = options.log;
    this.now = options.now ?? Date.now;
    this.cache = new ListingCache({ ttlMs: options.listingTtlMs, now: this.now });
    this.pool = new ProviderPool({ clouds: options.clouds, log: options.log, idleMs: options.providerIdleMs });
    this.uploads = new UploadSessions({
      idleMs: options.uploadIdleMs,
      now: this.now,
      onSettled: (cloudId, path) => this.cache.invalidate(cloudId, parentOf(path)),
      mapError: async (err, lease) => this.failure(err, lease),
      ...(options.uploadRegistry ? { registry: options.uploadRegistry } : {}),
      onRegistryError: (err) => this.log.warn({ err }, 'upload sessions: the shared record could not be written'),
    });
  }

  /** Which cloud a call names: cloud_id or token_id; a cloud_type that does not match is "not found". */
  static cloudIdOf(ref: CloudRef): string {
    const id = ref.cloud_id ?? ref.token_id;
    if (!id) throw errors.badRequest('field_required', { field: 'cloud_id' });
    return id;
  }

  private async lease(identity: CloudIdentity, ref: CloudRef | string, access: Access): Promise<ProviderLease> {
    const id = typeof ref === 'string' ? ref : FilesService.cloudIdOf(ref);
    const need = typeof access === 'number' ? access : access.need;
    const lease = await this.pool.acquire(identity, id, typeof access === 'number' ? {} : { touch: access.touch });
    if (typeof ref !== 'string' && ref.cloud_type && ref.cloud_type !== lease.cloud.kind) {
      lease.release();
      throw errors.notFound();
    }
    if (!hasFlag(lease.cloud.flags, need)) {
      lease.release();
      throw errors.forbidden();
    }
    return lease;
  }

  /** Maps a failure; an expired authorisation marks the cloud expired and drops its provider. */
  private async failure(err: unknown, lease: { cloud: CloudRecord }): Promise<ApiError> {
    const mapped = mapFileError(err, { id: lease.cloud.id, label: cloudLabel(lease.cloud) });
    if (mapped.expired) {
      await this.clouds.markExpired(lease.cloud.id).catch(() => undefined);
      this.pool.forget(lease.cloud.id);
      this.cache.invalidateCloud(lease.cloud.id);
    }
    if (mapped.error.code === Code.CLOUD_OPERATION_ERROR || mapped.error.code === Code.CLOUD_UNAVAILABLE) {
      this.log.warn({ err, cloud: lease.cloud.id, kind: lease.cloud.kind }, 'cloud file operation failed');
    }
    return mapped.error;
  }

  private async run<T>(
    identity: CloudIdentity,
    ref: CloudRef | string,
    access: Access,
    work: (lease: ProviderLease) => Promise<T>,
  ): Promise<T> {
    const lease = await this.lease(identity, ref, access);
    try {
      return await work(lease);
    } catch (err) {
      throw await this.failure(err, lease);
    } finally {
      lease.release();
    }
  }

  /** One page of a folder, from the cache unless `refresh`. */
  async list(
    identity: CloudIdentity,
    ref: CloudRef,
    path: string,
    opts: { pageToken?: string | null; pageSize?: number; refresh?: boolean; background?: boolean } = {},
  ): Promise<ListFilesData> {
    const pageSize = opts.pageSize ?? PAGE_SIZES.files;
    const token = opts.pageToken || null;
    const access = { need: Permission.read, touch: !opts.background };
    return this.run(identity, ref, access, async ({ cloud, provider }) => {
      if (!opts.refresh) {
        const hit = this.cache.get(cloud.id, path, token, pageSize);
        if (hit) return hit;
      } else if (!token) {
        this.cache.invalidate(cloud.id, path);
      }
      const page = await provider.list(path, { pageToken: token ?? undefined, pageSize });
      // Object stores list a missing prefix as empty: tell an empty folder from no folder.
      if (page.entries.length === 0 && !token && path !== '/') {
        const st = await provider.stat(path);
        if (st.kind !== 'dir') throw errors.pathNotExist();
      }
      const data: ListFilesData = { items: page.entries.map(toFileItem), page_token: page.nextPageToken ?? null };
      this.cache.set(cloud.id, path, token, pageSize, data);
      return data;
    });
  }

  /** Creates a folder; answers its id. `reuse` (not_allow_conflict) answers an existing folder's id instead of 409002. */
  async mkdir(identity: CloudIdentity, ref: CloudRef, parent: string, name: string, reuse: boolean): Promise<string> {
    checkName(name);
    return this.run(identity, ref, Permission.mkdir, async ({ cloud, provider }) => {
      const path = joinPath(parent, name);
      const existing = await statOrUndefined(provider, path);
      if (existing) {
        if (reuse && existing.kind === 'dir') return existing.id ?? existing.path;
        throw errors.alreadyExists();
      }
      if (parent !== '/') {
        const p = await statOrUndefined(provider, parent);
        if (!p || p.kind !== 'dir') throw errors.pathNotExist();
      }
      await provider.mkdir(path);
      this.cache.invalidate(cloud.id, parent);
      const made = await statOrUndefined(provider, path);
      return made?.id ?? path;
    });
  }

  async rename(identity: CloudIdentity, ref: CloudRef, path: string, newName: string): Promise<FileItem> {
    checkName(newName);
    if (path === '/') throw errors.forbidden();
    return this.run(identity, ref, Permission.rename, async ({ cloud, provider }) => {
      const src = await provider.stat(path);
      const target = joinPath(parentOf(path), newName);
      if (target !== path && (await statOrUndefined(provider, target))) {
        // A change of case only is a rename of the same item on case-insensitive services.
        if (!(provider.features.caseInsensitive && target.toLowerCase() === path.toLowerCase()))
          throw errors.alreadyExists();
      }
      const entry = await provider.rename(path, newName);
      this.cache.invalidate(cloud.id, parentOf(path));
      if (src.kind === 'dir') this.cache.invalidateTree(cloud.id, path);
      return toFileItem(entry);
    });
  }

  /** Deletes each path (to the trash where the cloud has one, unless permanent); reports each failure. */
  async delete(
    identity: CloudIdentity,
    ref: CloudRef,
    files: readonly string[],
    permanent: boolean,
  ): Promise<DeleteResult> {
    if (files.length > MAX_FILES_PER_CALL) throw errors.badRequest('invalid_request', { detail: 'too many files' });
    return this.run(identity, ref, Permission.delete, async (lease) => {
      const { cloud, provider } = lease;
      const useTrash = !permanent && provider.trash !== undefined;
      const out: DeleteResult = { deleted: [], failed: [], trashed: useTrash };
      for (const path of [...new Set(files)]) {
        try {
          if (path === '/') throw errors.forbidden();
          const st = await provider.stat(path);
          if (useTrash && provider.trash) await provider.trash(path);
          else if (st.kind === 'dir') await provider.rmdir(path);
          else await provider.remove(path);
          out.deleted.push(path);
          this.cache.invalidate(cloud.id, parentOf(path));
          if (st.kind === 'dir') this.cache.invalidateTree(cloud.id, path);
        } catch (err) {
          const mapped = mapFileError(err, { id: cloud.id, label: cloudLabel(cloud) });
          // An expired authorisation stops the whole call.
          if (mapped.expired) throw err;
          this.log.info({ cloud: cloud.id, code: mapped.error.code }, 'delete failed');
          out.failed.push({ path, error: mapped.error });
        }
      }
      return out;
    });
  }

  /** One page of the cloud's trash; `supported` false where it has none Skyferry can read. */
  async listTrash(identity: CloudIdentity, ref: CloudRef, pageToken: string | null): Promise<TrashListData> {
    return this.run(identity, ref, Permission.read, async ({ provider }) => {
      const abilities = { can_purge: Boolean(provider.purgeTrash), can_empty: Boolean(provider.emptyTrash) };
      if (!provider.listTrash)
        return { supported: false, service_trash: Boolean(provider.trash), ...abilities, items: [], page_token: null };
      const page = await provider.listTrash({ pageToken: pageToken ?? undefined });
      return {
        supported: true,
        service_trash: true,
        ...abilities,
        items: page.entries.map((e) => ({
          id: e.id,
          name: e.name,
          original_path: e.originalPath ?? null,
          type: e.kind === 'dir' ? RemoteFileType.folder : RemoteFileType.file,
          size: e.kind === 'dir' ? 0 : e.size,
          deleted_at: e.deletedAt ? e.deletedAt.getTime() : 0,
        })),
        page_token: page.nextPageToken ?? null,
      };
    });
  }

  /** Restores (or, `purge`, deletes for good) each trashed item; reports each failure. */
  async fromTrash(
    identity: CloudIdentity,
    ref: CloudRef,
    ids: readonly string[],
    purge: boolean,
  ): Promise<{ done: Array<{ id: string; entry?: Entry }>; failed: Array<{ id: string; error: ApiError }> }> {
    const need = purge ? Permission.delete : Permission.write;
    return this.run(identity, ref, need, async ({ cloud, provider }) => {
      const { purgeTrash, restoreTrash } = provider;
      if (!(purge ? purgeTrash : restoreTrash)) throw errors.forbidden();
      const act = async (id: string): Promise<Entry | undefined> => {
        if (purge) return void (await purgeTrash?.call(provider, id));
        return restoreTrash?.call(provider, id);
      };
      const out: { done: Array<{ id: string; entry?: Entry }>; failed: Array<{ id: string; error: ApiError }> } = {
        done: [],
        failed: [],
      };
      for (const id of [...new Set(ids)]) {
        try {
          const entry = await act(id);
          if (entry) this.cache.invalidate(cloud.id, parentOf(entry.path));
          out.done.push(entry ? { id, entry } : { id });
        } catch (err) {
          const mapped = mapFileError(err, { id: cloud.id, label: cloudLabel(cloud) });
          if (mapped.expired) throw err;
          out.failed.push({ id, error: mapped.error });
        }
      }
      return out;
    });
  }

  /** Deletes everything in the cloud's trash for good. */
  async emptyTrash(identity: CloudIdentity, ref: CloudRef): Promise<void> {
    await this.run(identity, ref, Permission.delete, async ({ provider }) => {
      if (!provider.emptyTrash) throw errors.forbidden();
      await provider.emptyTrash();
    });
  }

  /** One step of a search by name below `path` (searchStep). */
  async search(
    identity: CloudIdentity,
    ref: CloudRef,
    path: string,
    query: string,
    pageToken: string | null,
    signal?: AbortSignal,
  ): Promise<SearchFilesData> {
    return this.run(identity, ref, Permission.read, async ({ provider }) =>
      searchStep(provider, path, query, pageToken, signal),
    );
  }

  /** The space the service reports now, stored on the cloud. */
  async info(identity: CloudIdentity, ref: CloudRef, opts: { background?: boolean } = {}): Promise<CloudInfoData> {
    const access = { need: Permission.none, touch: !opts.background };
    return this.run(identity, ref, access, async ({ cloud, provider }) => {
      if (!provider.about) return { space_amount: cloud.space, space_used: cloud.usedSpace, reported: false };
      const about = await provider.about();
      const total = about.total ?? 0;
      const used = about.used ?? (about.total !== undefined && about.free !== undefined ? about.total - about.free : 0);
      const reported = about.total !== undefined || about.used !== undefined;
      if (reported) await this.clouds.recordSpace(cloud.id, total, used);
      return { space_amount: total, space_used: used, reported };
    });
  }

  /** A plain upload: the body streams to the cloud. */
  async upload(
    identity: CloudIdentity,
    cloudId: string,
    path: string,
    body: Readable,
    opts: { size: number; overwrite: boolean; modTime?: Date; signal?: AbortSignal; ifMatch?: string },
  ): Promise<FileItem> {
    if (path === '/') throw errors.badRequest('name_empty');
    checkName(baseName(path));
    return this.run(identity, cloudId, Permission.write, async ({ cloud, provider }) => {
      await this.checkTarget(provider, path, opts.overwrite, opts.ifMatch);
      try {
        const entry = await provider.put(
          path,
          body,
          { size: opts.size, modTime: opts.modTime },
          { signal: opts.signal },
        );
        return toFileItem(entry);
      } finally {
        this.cache.invalidate(cloud.id, parentOf(path));
      }
    });
  }

  /** One file or folder of the cloud (404 "The path does not exist." when there is none). */
  async stat(identity: CloudIdentity, ref: CloudRef, path: string): Promise<{ item: FileItem; writable: boolean }> {
    return this.run(identity, ref, Permission.read, async ({ cloud, provider }) => ({
      item: toFileItem(path === '/' ? rootEntry() : await provider.stat(path)),
      writable: hasFlag(cloud.flags, Permission.write),
    }));
  }

  /** Throws what a write to the cloud would (not found, not the caller's, read-only) without writing. */
  async checkWritable(identity: CloudIdentity, ref: CloudRef): Promise<void> {
    await this.run(identity, ref, Permission.write, async () => undefined);
  }

  /**
   * Writes a new file into `parent` under `name`, or under "name (1).ext", "name (2).ext" and so on
   * when the name is taken (an export never replaces a file). Answers the file written.
   */
  async writeNew(
    identity: CloudIdentity,
    ref: CloudRef,
    parent: string,
    name: string,
    body: Readable,
    opts: { size: number; signal?: AbortSignal },
  ): Promise<FileItem> {
    checkName(name);
    return this.run(identity, ref, Permission.write, async ({ cloud, provider }) => {
      if (parent !== '/') {
        const p = await statOrUndefined(provider, parent);
        if (p && p.kind !== 'dir') throw errors.pathNotExist();
      }
      const dot = name.lastIndexOf('.');
      const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
      let path = joinPath(parent, name);
      for (let n = 1; await statOrUndefined(provider, path); n += 1) {
        if (n > 999) throw errors.alreadyExists();
        path = joinPath(parent, `${stem} (${n})${ext}`);
      }
      try {
        return toFileItem(await provider.put(path, body, { size: opts.size }, { signal: opts.signal }));
      } finally {
        this.cache.invalidate(cloud.id, parent);
      }
    });
  }

  /**
   * Refuses to replace a folder, or a file unless `overwrite`; with `ifMatch`, also a file whose
   * ETag is no longer that one (it changed, or went, since the caller read it).
   */
  private async checkTarget(provider: Provider, path: string, overwrite: boolean, ifMatch?: string): Promise<void> {
    const existing = await statOrUndefined(provider, path);
    if (existing?.kind === 'dir') throw errors.alreadyExists();
    if (existing && !overwrite) throw errors.alreadyExists();
    if (ifMatch !== undefined && (!existing || entryEtag(existing) !== ifMatch))
      throw new ApiError(Code.CONFLICT, 'file_changed_meanwhile');
  }

  /** A file's or folder's entry as the cloud reports it now (its ETag: entryEtag). */
  async entryOf(identity: CloudIdentity, cloudId: string, path: string): Promise<Entry> {
    return this.run(identity, cloudId, Permission.read, async ({ provider }) =>
      path === '/' ? rootEntry() : provider.stat(path),
    );
  }

  /** Opens a resumable upload session. */
  async createUpload(
    identity: CloudIdentity,
    ref: CloudRef,
    path: string,
    size: number,
    opts: { overwrite: boolean; modTime?: Date },
  ): Promise<UploadSession> {
    if (path === '/') throw errors.badRequest('name_empty');
    checkName(baseName(path));
    const lease = await this.lease(identity, ref, Permission.write);
    try {
      await this.checkTarget(lease.provider, path, opts.overwrite);
      return await this.uploads.open({ key: ownerKey(identity) }, lease, path, size, opts.modTime);
    } catch (err) {
      lease.release();
      throw await this.failure(err, lease);
    }
  }

  uploadOwner(identity: CloudIdentity): UploadOwner {
    return { key: ownerKey(identity) };
  }

  async completeUpload(identity: CloudIdentity, uploadId: string): Promise<FileItem> {
    const { entry, lease } = await this.uploads.complete(this.uploadOwner(identity), uploadId);
    this.cache.invalidate(lease.cloud.id, parentOf(entry.path));
    return toFileItem(entry);
  }

  /** A signed link a browser can navigate to (5 minutes). */
  async createLink(
    identity: CloudIdentity,
    ref: CloudRef,
    paths: readonly string[],
    name?: string,
  ): Promise<{ url: string; expires_at: number }> {
    if (name !== undefined) checkName(name);
    // A path that is gone (or unreadable) fails here, with the reason, not in the browser's download.
    const cloudId = await this.run(identity, ref, Permission.read, async ({ cloud, provider }) => {
      const queue = [...new Set(paths)].filter((p) => p !== '/');
      await Promise.all(
        Array.from({ length: Math.min(8, queue.length) }, async () => {
          for (let p = queue.shift(); p !== undefined; p = queue.shift()) await provider.stat(p);
        }),
      );
      return cloud.id;
    });
    const expiresAt = this.now() + LINK_LIFETIME_MS;
    const token = signLink(this.box, {
      identity,
      cloudId,
      paths: [...new Set(paths)],
      name,
      expiresAt,
    });
    if (token.length > 12_000)
      throw errors.badRequest('invalid_request', { detail: 'too many files for one link; download the folder' });
    return { url: `/api/cloud-manager/files?link=${token}`, expires_at: expiresAt };
  }

  /** The claims of a download link, or 404 when it is invalid or expired. */
  resolveLink(token: string): LinkClaims {
    const claims = verifyLink(this.box, token, this.now());
    if (!claims) throw errors.notFound();
    return claims;
  }

  /**
   * Prepares a download: a file (ranges allowed), or a zip of a folder or of several paths. The
   * lease is held until the caller's stream ends (`release`).
   */
  async download(
    identity: CloudIdentity,
    cloudId: string,
    paths: readonly string[],
    name?: string,
    signal?: AbortSignal,
  ): Promise<Download> {
    const lease = await this.lease(identity, cloudId, Permission.read);
    const { provider } = lease;
    try {
      const stats: Entry[] = [];
      for (const p of paths) stats.push(p === '/' ? rootEntry() : await provider.stat(p));
      const single = stats.length === 1 ? stats[0] : undefined;
      if (single && single.kind === 'file') {
        return {
          kind: 'file',
          entry: single,
          contentType: mimeOf(single.name, single.mimeType),
          open: async (range) => {
            try {
              const stream = await provider.openRead(single.path, range ? { range, signal } : { signal });
              await firstBytes(stream);
              return stream;
            } catch (err) {
              throw await this.failure(err, lease);
            }
          },
          release: () => lease.release(),
        };
      }
      const base = single ? single.path : commonParent(paths);
      const entries = await this.zipEntries(provider, stats, base, signal);
      const zipName =
        name ?? (single ? `${single.path === '/' ? cloudLabel(lease.cloud) : single.name}.zip` : 'download.zip');
      return {
        kind: 'zip',
        name: zipName.endsWith('.zip') ? zipName : `${zipName}.zip`,
        length: zipLength(entries),
        stream: zipStream(entries, signal),
        release: () => lease.release(),
      };
    } catch (err) {
      lease.release();
      throw await this.failure(err, lease);
    }
  }

  /** Every entry below the chosen items, named relative to `base`, folders first in each level. */
  private async zipEntries(
    provider: Provider,
    items: readonly Entry[],
    base: string,
    signal?: AbortSignal,
  ): Promise<ZipEntry[]> {
    const rel = (p: string) => (base === '/' ? p.slice(1) : p.slice(base.length + 1));
    const out: ZipEntry[] = [];
    const fileEntry = (e: Entry): ZipEntry => ({
      name: rel(e.path),
      dir: false,
      size: e.size,
      modTime: e.modTime,
      open: () => provider.openRead(e.path, { signal }),
    });
    const walk = async (dir: string) => {
      let token: string | undefined;
      do {
        if (signal?.aborted) throw new ProviderError('canceled', 'canceled');
        const page = await provider.list(dir, { pageToken: token, pageSize: 1000, signal });
        for (const e of page.entries) {
          if (e.kind === 'dir') {
            out.push({ name: rel(e.path), dir: true, size: 0, modTime: e.modTime });
            await walk(e.path);
          } else {
            out.push(fileEntry(e));
          }
        }
        token = page.nextPageToken;
      } while (token);
    };
    for (const item of items) {
      if (item.kind === 'dir') {
        // The chosen folder itself is the zip's top level when it is the base.
        if (item.path !== base) out.push({ name: rel(item.path), dir: true, size: 0, modTime: item.modTime });
        await walk(item.path);
      } else {
        out.push(fileEntry(item));
      }
    }
    return out;
  }

  /** Runs album work on a photos cloud whose backend has albums; 403003 otherwise. */
  private async withAlbums<T>(
    identity: CloudIdentity,
    ref: CloudRef,
    need: number,
    work: (albums: AlbumCapable, lease: ProviderLease) => Promise<T>,
  ): Promise<T> {
    return this.run(identity, ref, need, async (lease) => {
      const albums = albumsOf(lease.provider);
      if (!albums) throw errors.forbidden();
      return work(albums, lease);
    });
  }

  async listAlbums(identity: CloudIdentity, ref: CloudRef): Promise<Album[]> {
    return this.withAlbums(identity, ref, Permission.read, async (albums) => (await albums.listAlbums()).map(toAlbum));
  }

  async createAlbum(identity: CloudIdentity, ref: CloudRef, title: string): Promise<Album> {
    return this.withAlbums(identity, ref, Permission.write, async (albums) => toAlbum(await albums.createAlbum(title)));
  }

  async addToAlbum(identity: CloudIdentity, ref: CloudRef, albumId: string, paths: string[]): Promise<number> {
    return this.withAlbums(identity, ref, Permission.write, async (albums) => albums.addToAlbum(albumId, paths));
  }

  async albumItems(
    identity: CloudIdentity,
    ref: CloudRef,
    albumId: string,
    pageToken?: string | null,
  ): Promise<ListFilesData> {
    return this.withAlbums(identity, ref, Permission.read, async (albums, { provider }) => {
      if (!albums.listAlbumItems) throw errors.forbidden();
      const page = await albums.listAlbumItems(albumId, { pageToken: pageToken ?? undefined });
      const items: FileItem[] = [];
      for (const p of page.paths) items.push(toFileItem(await provider.stat(p)));
      return { items, page_token: page.nextPageToken ?? null };
    });
  }

  /**
   * A thumbnail of an image for the photos grid: made by the server (WebP, longest side `size`
   * pixels, never enlarged; see thumbnails.ts) and kept in memory (least recently used out, 64 MB
   * in all) so scrolling back does not read the cloud again. An image the server cannot decode
   * (HEIC, a broken file) is served as it is, for the browser to scale.
   */
  async thumbnail(
    identity: CloudIdentity,
    cloudId: string,
    path: string,
    size: number = THUMBNAIL_DEFAULT_SIZE,
    signal?: AbortSignal,
  ): Promise<{ body: Buffer | Readable; type: string; etag: string }> {
    return this.run(identity, cloudId, Permission.read, async ({ cloud, provider }) => {
      const st = await provider.stat(path);
      if (st.kind !== 'file' || !isImageName(st.name)) throw errors.pathNotExist();
      if (st.size > THUMBNAIL_MAX_SOURCE)
        throw errors.badRequest('invalid_request', { detail: 'the image is too large for a preview' });
      const etag = `"${st.size.toString(36)}-${(st.modTime?.getTime() ?? 0).toString(36)}-${size}"`;
      const key = `${cloud.id}\u0000${path}\u0000${etag}`;
      const hit = this.thumbs.get(key);
      if (hit) {
        this.thumbs.delete(key);
        this.thumbs.set(key, hit);
        return { body: hit.data, type: hit.type, etag };
      }
      // Through the disk, never whole in memory: libvips reads the file in strips.
      const original = await spool(await provider.openRead(path, { signal }));
      const thumb = await makeThumbnail(original.path, st.name, size);
      if (!thumb) return { body: original.stream(), type: mimeOf(st.name, st.mimeType), etag };
      await original.remove();
      this.thumbs.set(key, thumb);
      this.thumbBytes += thumb.data.length;
      for (const [k, v] of this.thumbs) {
        if (this.thumbBytes <= THUMBNAIL_CACHE_BYTES) break;
        this.thumbs.delete(k);
        this.thumbBytes -= v.data.length;
      }
      return { body: thumb.data, type: thumb.type, etag };
    });
  }

  async close(): Promise<void> {
    this.uploads.close();
    await this.pool.close();
  }
}

/** The ETag of a file's bytes as Skyferry serves them: size and modification time. */
export function entryEtag(entry: Entry): string {
  return `"${entry.size.toString(36)}-${(entry.modTime?.getTime() ?? 0).toString(36)}"`;
}

/** Images over this size get no preview. */
const THUMBNAIL_MAX_SOURCE = 100 * 1024 * 1024;
/** The longest side of a thumbnail when the call names no size (pixels). */
const THUMBNAIL_DEFAULT_SIZE = 256;
const THUMBNAIL_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * Waits for a download's first bytes (or its end): a cloud that fails before it sends anything
 * then answers an error envelope, where the answer's head would otherwise have gone out already.
 */
function firstBytes(stream: Readable): Promise<void> {
  if (stream.errored) return Promise.reject(stream.errored);
  if (stream.readableLength > 0 || stream.readableEnded) return Promise.resolve();
  if (stream.destroyed) return Promise.reject(new ProviderError('network', 'the download ended early'));
  return new Promise<void>((resolve, reject) => {
    const done = (err?: Error) => {
      stream.off('readable', onReady);
      stream.off('end', onReady);
      stream.off('error', done);
      stream.off('close', onClose);
      if (err) reject(err);
      else resolve();
    };
    const onReady = () => done();
    const onClose = () => done(stream.errored ?? new ProviderError('network', 'the download ended early'));
    stream.once('readable', onReady);
    stream.once('end', onReady);
    stream.once('error', done);
    stream.once('close', onClose);
  });
}

function rootEntry(): Entry {
  return { path: '/', name: '', kind: 'dir', size: 0 };
}

async function statOrUndefined(provider: Provider, path: string): Promise<Entry | undefined> {
  try {
    return await provider.stat(path);
  } catch (err) {
    if (ProviderError.is(err, 'not_found') || ProviderError.is(err, 'not_dir')) return undefined;
    throw err;
  }
}

/**
 * The byte range of a Range header for a file of `size` bytes: one range, or 'unsatisfiable'
 * (416), or null to send the whole file (no header, several ranges, or a unit we do not serve).
 */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | 'unsatisfiable' | null {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m) return null;
  const [, a, b] = m;
  if (a === '' && b === '') return null;
  let start: number;
  let end: number;
  if (a === '') {
    const suffix = Number(b);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(a);
    end = b === '' ? size - 1 : Math.min(Number(b), size - 1);
    if (b !== '' && Number(b) < start) return null;
  }
  if (start >= size || size === 0) return 'unsatisfiable';
  return { start, end };
}
