import { randomBytes } from 'node:crypto';
import type { OutgoingHttpHeaders } from 'node:http';
import { ProviderError, canceled, toProviderError } from '../../api/errors.ts';
import type { ChunkWriter, Entry, SrcInfo, TrashEntry, TrashPage } from '../../api/types.ts';
import { drain, statusError, text, type DavHttp } from './http.ts';
import { ocMtime } from './mtime.ts';
import { hrefToPath, multistatus, okProps, str } from './propfind.ts';

/** What the chunk writer needs from the WebDAV provider (kept here so neither file imports the other's module). */
export interface NextcloudDav {
  readonly base: URL;
  readonly username: string;
  readonly http: DavHttp;
  readonly chunkSize: number;
  readonly concurrency: number;
  url(path: string, dir?: boolean): URL;
  /** The entry once assembled, with the source's time kept (or reported lost). */
  afterChunkedUpload(path: string, src: SrcInfo): Promise<Entry>;
}

/** Where Nextcloud keeps chunked uploads: /remote.php/dav/uploads/<user>/ beside /files/<user>/. */
export function uploadsBase(base: URL, username: string): URL {
  const path = base.pathname;
  const i = path.indexOf('/remote.php/');
  const prefix = i < 0 ? '' : path.slice(0, i);
  const files = path.match(/\/remote\.php\/dav\/files\/([^/]+)\//);
  const user = files?.[1] ?? encodeURIComponent(username);
  const u = new URL(base.href);
  u.pathname = `${prefix}/remote.php/dav/uploads/${user}/`;
  return u;
}

/**
 * Nextcloud chunked upload v2: MKCOL an upload folder, PUT numbered chunks (1..10000) in any order
 * and in parallel, then MOVE its ".file" onto the destination, which Nextcloud assembles; DELETE
 * the upload folder to abort. Every request names the destination (v2 requires it) and the total
 * length. Nothing is visible at the destination until the MOVE.
 */
export async function openNextcloudChunkWriter(
  dav: NextcloudDav,
  path: string,
  src: SrcInfo,
  signal?: AbortSignal,
): Promise<ChunkWriter> {
  const uploads = uploadsBase(dav.base, dav.username);
  const folder = new URL(uploads.href);
  folder.pathname += `skyferry-${randomBytes(12).toString('hex')}/`;
  const destination = dav.url(path).href;
  const common: OutgoingHttpHeaders = { destination };
  if (src.size >= 0) common['oc-total-length'] = src.size;
  const mk = await dav.http.send({ method: 'MKCOL', url: folder, headers: common, signal });
  if ((mk.statusCode ?? 0) >= 300) throw await statusError(mk, `MKCOL ${folder.pathname}`);
  await drain(mk);
  let finished = false;
  const chunkUrl = (index: number) => {
    const u = new URL(folder.href);
    u.pathname += String(index + 1);
    return u;
  };
  const discard = async () => {
    try {
      const res = await dav.http.send({ method: 'DELETE', url: folder });
      await drain(res);
    } catch {
      // best effort: Nextcloud also expires stale uploads
    }
  };
  return {
    chunkSize: dav.chunkSize,
    concurrency: dav.concurrency,
    async writeChunk(index: number, data: Buffer, chunkSignal?: AbortSignal): Promise<void> {
      if (finished) throw new ProviderError('canceled', 'chunk writer is closed');
      if (index < 0 || index >= 10_000) throw new ProviderError('invalid_name', `chunk index out of range: ${index}`);
      const s = chunkSignal ?? signal;
      const res = await dav.http.send({
        method: 'PUT',
        url: chunkUrl(index),
        headers: { ...common, 'content-type': 'application/octet-stream' },
        body: data,
        signal: s,
      });
      if ((res.statusCode ?? 0) >= 300) throw await statusError(res, `PUT chunk ${index + 1} of ${path}`);
      await drain(res);
    },
    async close(): Promise<Entry> {
      if (finished) throw new ProviderError('canceled', 'chunk writer is closed');
      finished = true;
      try {
        if (signal?.aborted) throw canceled();
        const file = new URL(folder.href);
        file.pathname += '.file';
        const headers: OutgoingHttpHeaders = { ...common, overwrite: 'T' };
        if (src.modTime) headers['x-oc-mtime'] = ocMtime(src.modTime);
        const res = await dav.http.send({ method: 'MOVE', url: file, headers, signal });
        if ((res.statusCode ?? 0) >= 300) throw await statusError(res, `MOVE ${path}`);
        await drain(res);
      } catch (err) {
        await discard();
        throw toProviderError(err);
      }
      const entry = await dav.afterChunkedUpload(path, src);
      if (src.size >= 0 && entry.size !== src.size) {
        throw new ProviderError('corrupted', `size mismatch writing ${path}: expected ${src.size}, got ${entry.size}`);
      }
      return entry;
    },
    async abort(): Promise<void> {
      if (finished) return;
      finished = true;
      await discard();
    },
  };
}

/** Where Nextcloud keeps a user's trashbin: /remote.php/dav/trashbin/<user>/trash/ beside /files/<user>/. */
export function trashbinBase(base: URL, username: string): URL {
  const u = uploadsBase(base, username);
  u.pathname = u.pathname.replace(/\/uploads\/([^/]+)\/$/, '/trashbin/$1/');
  return u;
}

/** The cloud's folder inside the user's files (the base URL may name a folder below them): '' or 'a/b/'. */
function filesPrefix(base: URL): string | undefined {
  const m = base.pathname.match(/\/remote\.php\/dav\/files\/[^/]+\/(.*)$/);
  if (!m) return undefined;
  return (m[1] ?? '')
    .split('/')
    .filter(Boolean)
    .map((s) => decodeURIComponent(s))
    .map((s) => `${s}/`)
    .join('');
}

const TRASH_BODY =
  '<?xml version="1.0" encoding="utf-8"?>' +
  '<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns">' +
  '<d:prop><d:resourcetype/><d:getcontentlength/><oc:size/><nc:trashbin-filename/>' +
  '<nc:trashbin-original-location/><nc:trashbin-deletion-time/></d:prop></d:propfind>';

/** What the trash code needs of the WebDAV provider. */
export interface NextcloudTrashDav {
  readonly base: URL;
  readonly username: string;
  readonly http: DavHttp;
  stat(path: string): Promise<Entry>;
}

function trashItemUrl(dav: NextcloudTrashDav, area: 'trash' | 'restore', id?: string): URL {
  // "." and ".." would name the trashbin itself or its parent once the URL is resolved.
  if (id === '' || id === '.' || id === '..') throw new ProviderError('not_found', `not in the trash: ${id}`);
  const u = trashbinBase(dav.base, dav.username);
  u.pathname += area + '/' + (id === undefined ? '' : encodeURIComponent(id));
  return u;
}

/** Whether the server has a trashbin for this user (Nextcloud's trashbin app is on). */
export async function hasNextcloudTrash(dav: NextcloudTrashDav): Promise<boolean> {
  try {
    const res = await dav.http.send({
      method: 'PROPFIND',
      url: trashItemUrl(dav, 'trash'),
      headers: { depth: '0', 'content-type': 'application/xml; charset=utf-8' },
      body: TRASH_BODY,
    });
    await drain(res);
    return res.statusCode === 207;
  } catch {
    return false;
  }
}

/** The trashbin's items that were inside this cloud's folder, newest first. */
export async function listNextcloudTrash(dav: NextcloudTrashDav, signal?: AbortSignal): Promise<TrashPage> {
  const url = trashItemUrl(dav, 'trash');
  const res = await dav.http.send({
    method: 'PROPFIND',
    url,
    headers: { depth: '1', 'content-type': 'application/xml; charset=utf-8' },
    body: TRASH_BODY,
    signal,
  });
  if (res.statusCode !== 207) throw await statusError(res, 'PROPFIND trashbin');
  const prefix = filesPrefix(dav.base) ?? '';
  const entries: TrashEntry[] = [];
  for (const r of multistatus(await text(res))) {
    const href = str(r.href);
    if (href === undefined) continue;
    const id = hrefToPath(href).split('/').pop() ?? '';
    const props = okProps(r);
    const location = str(props['trashbin-original-location']);
    if (!id || location === undefined || hrefToPath(href) === hrefToPath(url.pathname)) continue;
    if (!location.startsWith(prefix)) continue;
    // An empty <resourcetype/> parses as '' (a file); a folder's holds <collection/>.
    const rt = props.resourcetype;
    const isDir = rt !== null && typeof rt === 'object' && 'collection' in rt;
    const size = Number(str(isDir ? props.size : props.getcontentlength) ?? 0);
    const secs = Number(str(props['trashbin-deletion-time']));
    const originalPath = '/' + location.slice(prefix.length);
    const entry: TrashEntry = {
      id,
      name: str(props['trashbin-filename']) ?? baseNameOf(originalPath),
      originalPath,
      kind: isDir ? 'dir' : 'file',
      size: Number.isFinite(size) ? size : 0,
    };
    if (Number.isFinite(secs) && secs > 0) entry.deletedAt = new Date(secs * 1000);
    entries.push(entry);
  }
  entries.sort((a, b) => (b.deletedAt?.getTime() ?? 0) - (a.deletedAt?.getTime() ?? 0));
  return { entries };
}

function baseNameOf(path: string): string {
  return path.split('/').filter(Boolean).pop() ?? '';
}

/**
 * Restores an item by a MOVE into the trashbin's restore folder: Nextcloud puts it back where it
 * was, as "<name> (restored)" when that name is taken again. Answers the restored entry.
 */
export async function restoreNextcloudTrash(dav: NextcloudTrashDav, id: string): Promise<Entry> {
  const item = (await listNextcloudTrash(dav)).entries.find((e) => e.id === id);
  if (!item?.originalPath) throw new ProviderError('not_found', `not in the trash: ${id}`);
  const original = item.originalPath;
  const taken = await dav.stat(original).then(
    () => true,
    () => false,
  );
  const res = await dav.http.send({
    method: 'MOVE',
    url: trashItemUrl(dav, 'trash', id),
    headers: { destination: trashItemUrl(dav, 'restore', id).href, overwrite: 'F' },
  });
  if ((res.statusCode ?? 0) >= 300) throw await statusError(res, `MOVE trashbin ${id}`);
  await drain(res);
  if (!taken) return dav.stat(original);
  const name = baseNameOf(original);
  const dot = item.kind === 'file' ? name.lastIndexOf('.') : -1;
  const renamed = dot > 0 ? `${name.slice(0, dot)} (restored)${name.slice(dot)}` : `${name} (restored)`;
  const parent = original.slice(0, original.length - name.length);
  return dav.stat(parent + renamed).catch(() => dav.stat(original));
}

export async function purgeNextcloudTrash(dav: NextcloudTrashDav, id: string): Promise<void> {
  const res = await dav.http.send({ method: 'DELETE', url: trashItemUrl(dav, 'trash', id) });
  if ((res.statusCode ?? 0) >= 300) throw await statusError(res, `DELETE trashbin ${id}`);
  await drain(res);
}

export async function emptyNextcloudTrash(dav: NextcloudTrashDav): Promise<void> {
  const res = await dav.http.send({ method: 'DELETE', url: trashItemUrl(dav, 'trash') });
  if ((res.statusCode ?? 0) >= 300) throw await statusError(res, 'DELETE trashbin');
  await drain(res);
}
