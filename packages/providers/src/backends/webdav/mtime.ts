import type { IncomingMessage } from 'node:http';
import { joinPath } from '../../path.ts';
import { activeTemps, tempName } from '../../temp-files.ts';
import { drain, isOk, text, type DavHttp } from './http.ts';
import { PROPFIND_BODY, parseResources } from './propfind.ts';

/**
 * How a WebDAV server keeps the modification time a write gives a file. WebDAV has no standard
 * way: Nextcloud and ownCloud (and rclone serve webdav from 1.6x) take it in an `X-OC-Mtime`
 * header on PUT; a few servers let PROPPATCH set `getlastmodified` (Apache mod_dav refuses it,
 * RFC 4918 asks servers to protect it); others keep only the time of the write.
 */
export type WebdavMtimeMethod = 'x-oc-mtime' | 'proppatch' | 'none';
export const WEBDAV_MTIME_METHODS: readonly WebdavMtimeMethod[] = ['x-oc-mtime', 'proppatch', 'none'];

/** Where the provider context's state keeps what the server was found to do, and when. */
export const MTIME_STATE_KEY = 'webdav_mtime';
export interface MtimeRecord {
  method: WebdavMtimeMethod;
  /** ms */
  checked_at: number;
}
/** A server may be upgraded or reconfigured: what was found is asked again after this long. */
export const MTIME_RECHECK_MS = 30 * 86_400_000;

/** The time a probe gives its file: far from any write's own time, and a whole second. */
const PROBE_TIME = new Date(Date.UTC(2001, 1, 3, 4, 5, 6));

/** What a provider context's state says of the server, while it is recent enough. */
export function recordedMtime(
  state: Record<string, unknown> | undefined,
  now = Date.now(),
): WebdavMtimeMethod | undefined {
  const rec = state?.[MTIME_STATE_KEY] as Partial<MtimeRecord> | undefined;
  if (!rec || !WEBDAV_MTIME_METHODS.includes(rec.method as WebdavMtimeMethod)) return undefined;
  if (typeof rec.checked_at !== 'number' || now - rec.checked_at > MTIME_RECHECK_MS) return undefined;
  return rec.method;
}

/** The X-OC-Mtime header's value: Unix seconds. */
export function ocMtime(t: Date): number {
  return Math.floor(t.getTime() / 1000);
}

/** Whether a listed time is the wanted one, to the second (getlastmodified's precision). */
export function keepsTime(kept: Date | undefined, wanted: Date): boolean {
  return kept !== undefined && Math.floor(kept.getTime() / 1000) === Math.floor(wanted.getTime() / 1000);
}

/** What setting a time needs from the WebDAV provider (kept here so neither file imports the other's module). */
export interface MtimeDav {
  readonly accountKey: string;
  readonly http: DavHttp;
  url(path: string, dir?: boolean): URL;
  deleteQuietly(path: string): Promise<void>;
}

/** The modification time the server lists for a path (the probe's file is hidden from stat). */
async function listedTime(dav: MtimeDav, path: string, signal?: AbortSignal): Promise<Date | undefined> {
  const res = await dav.http.send({
    method: 'PROPFIND',
    url: dav.url(path),
    headers: { depth: '0', 'content-type': 'application/xml; charset=utf-8' },
    body: PROPFIND_BODY,
    signal,
  });
  const xml = await text(res);
  return res.statusCode === 207 ? parseResources(xml)[0]?.modTime : undefined;
}

/** Whether a PROPPATCH answer (207 multistatus) reports the property set: a 2xx propstat and no other. */
function proppatchAccepted(res: IncomingMessage, xml: string): boolean {
  if (res.statusCode !== 207) return isOk(res);
  const statuses = [...xml.matchAll(/<(?:\w+:)?status>\s*HTTP\/[\d.]+\s+(\d{3})/gi)].map((m) => Number(m[1]));
  return statuses.length > 0 && statuses.every((s) => s >= 200 && s < 300);
}

/** Sets `path`'s getlastmodified with PROPPATCH; true when the server says it did. */
export async function proppatchMtime(dav: MtimeDav, path: string, t: Date, signal?: AbortSignal): Promise<boolean> {
  const body =
    '<?xml version="1.0" encoding="utf-8"?><d:propertyupdate xmlns:d="DAV:"><d:set><d:prop>' +
    `<d:getlastmodified>${t.toUTCString()}</d:getlastmodified></d:prop></d:set></d:propertyupdate>`;
  const res = await dav.http.send({
    method: 'PROPPATCH',
    url: dav.url(path),
    headers: { 'content-type': 'application/xml; charset=utf-8' },
    body,
    signal,
  });
  return proppatchAccepted(res, await text(res));
}

/**
 * Finds out how the server keeps a given modification time: writes a hidden temporary file at
 * the root with X-OC-Mtime and reads its time back, then, if that did not keep it, tries
 * PROPPATCH; the file is removed after. Undefined when it could not tell (the root is not
 * writable, the server did not answer): nothing is recorded then, and the next open asks again.
 */
export async function probeMtime(dav: MtimeDav, signal?: AbortSignal): Promise<WebdavMtimeMethod | undefined> {
  const tmp = joinPath('/', tempName());
  const key = `${dav.accountKey}|${tmp}`;
  activeTemps.add(key);
  try {
    const put = await dav.http.send({
      method: 'PUT',
      url: dav.url(tmp),
      headers: { 'content-type': 'application/octet-stream', 'content-length': 1, 'x-oc-mtime': ocMtime(PROBE_TIME) },
      body: Buffer.from('x'),
      signal,
    });
    await drain(put);
    if (!isOk(put)) return undefined;
    if (keepsTime(await listedTime(dav, tmp, signal), PROBE_TIME)) return 'x-oc-mtime';
    if (
      (await proppatchMtime(dav, tmp, PROBE_TIME, signal)) &&
      keepsTime(await listedTime(dav, tmp, signal), PROBE_TIME)
    ) {
      return 'proppatch';
    }
    return 'none';
  } catch {
    return undefined;
  } finally {
    await dav.deleteQuietly(tmp);
    activeTemps.delete(key);
  }
}
