import { XMLParser } from 'fast-xml-parser';
import type { Hashes } from '../../api/types.ts';

/** What one <response> of a PROPFIND multistatus says about a resource. */
export interface DavResource {
  /** The decoded path of the href (no trailing slash, except "/"). */
  hrefPath: string;
  isDir: boolean;
  size: number;
  modTime?: Date;
  mimeType?: string;
  etag?: string;
  fileId?: string;
  hashes?: Hashes;
}

export interface DavQuota {
  available?: number;
  used?: number;
}

/** The props we ask for: the standard ones plus ownCloud/Nextcloud's id and checksums. */
export const PROPFIND_BODY =
  '<?xml version="1.0" encoding="utf-8"?>' +
  '<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">' +
  '<d:prop><d:resourcetype/><d:getcontentlength/><d:getlastmodified/><d:getcontenttype/><d:getetag/>' +
  '<oc:fileid/><oc:checksums/></d:prop></d:propfind>';

export const QUOTA_BODY =
  '<?xml version="1.0" encoding="utf-8"?>' +
  '<d:propfind xmlns:d="DAV:"><d:prop><d:quota-available-bytes/><d:quota-used-bytes/></d:prop></d:propfind>';

const parser = new XMLParser({
  removeNSPrefix: true,
  ignoreAttributes: true,
  parseTagValue: false,
  trimValues: true,
  isArray: (name) => name === 'response' || name === 'propstat' || name === 'checksum',
});

export type Node = Record<string, unknown>;

function obj(v: unknown): Node | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Node) : undefined;
}

export function str(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  return undefined;
}

/** Decodes an href (absolute URL or absolute path) to a plain path without trailing slash. */
export function hrefToPath(href: string): string {
  let p = href;
  if (/^https?:\/\//i.test(p)) p = new URL(p).pathname;
  const decoded = p
    .split('/')
    .map((seg) => {
      try {
        return decodeURIComponent(seg);
      } catch {
        return seg;
      }
    })
    .join('/');
  return decoded.length > 1 && decoded.endsWith('/') ? decoded.slice(0, -1) : decoded || '/';
}

/** Props from the 2xx propstats of a response (404 propstats list what the server lacks). */
export function okProps(response: Node): Node {
  const props: Node = {};
  const propstats = (response.propstat as unknown[] | undefined) ?? [];
  for (const ps of propstats) {
    const p = obj(ps);
    if (!p) continue;
    const status = str(p.status) ?? 'HTTP/1.1 200 OK';
    if (!/\s2\d\d\s?/.test(status)) continue;
    Object.assign(props, obj(p.prop) ?? {});
  }
  return props;
}

/** Parses ownCloud checksums "SHA1:ab.. MD5:cd.. ADLER32:.." into our hash names. */
export function parseOcChecksums(value: string | undefined): Hashes | undefined {
  if (!value) return undefined;
  const hashes: Hashes = {};
  for (const part of value.split(/\s+/)) {
    const [algo, hex] = part.split(':');
    if (!algo || !hex) continue;
    const a = algo.toLowerCase();
    if (a === 'sha1') hashes.sha1 = hex.toLowerCase();
    else if (a === 'md5') hashes.md5 = hex.toLowerCase();
    else if (a === 'sha256') hashes.sha256 = hex.toLowerCase();
  }
  return Object.keys(hashes).length ? hashes : undefined;
}

export function multistatus(xml: string): Node[] {
  const doc = obj(parser.parse(xml));
  const ms = obj(doc?.multistatus);
  return ((ms?.response as unknown[] | undefined) ?? []).map(obj).filter((r): r is Node => r !== undefined);
}

export function parseResources(xml: string): DavResource[] {
  const out: DavResource[] = [];
  for (const r of multistatus(xml)) {
    const href = str(r.href);
    if (href === undefined) continue;
    const props = okProps(r);
    const rt = props.resourcetype;
    const isDir = obj(rt) !== undefined && 'collection' in (obj(rt) ?? {});
    const size = Number(str(props.getcontentlength) ?? 0);
    const lm = str(props.getlastmodified);
    const modTime = lm ? new Date(lm) : undefined;
    const ct = str(props.getcontenttype);
    const checksums = obj(props.checksums);
    const checksumList = (checksums?.checksum as unknown[] | undefined)?.map(str).filter(Boolean).join(' ');
    const res: DavResource = {
      hrefPath: hrefToPath(href),
      isDir,
      size: isDir || !Number.isFinite(size) ? 0 : size,
    };
    if (modTime && !Number.isNaN(modTime.getTime())) res.modTime = modTime;
    if (ct && !isDir) res.mimeType = ct.split(';')[0]?.trim();
    const etag = str(props.getetag);
    if (etag) res.etag = etag;
    const fileId = str(props.fileid);
    if (fileId) res.fileId = fileId;
    const hashes = parseOcChecksums(checksumList);
    if (hashes) res.hashes = hashes;
    out.push(res);
  }
  return out;
}

export function parseQuota(xml: string): DavQuota {
  const r = multistatus(xml)[0];
  if (!r) return {};
  const props = okProps(r);
  const q: DavQuota = {};
  const avail = Number(str(props['quota-available-bytes']));
  const used = Number(str(props['quota-used-bytes']));
  // Negative values mean "unknown" or "unlimited" (ownCloud uses -1, -2, -3).
  if (str(props['quota-available-bytes']) !== undefined && Number.isFinite(avail) && avail >= 0) q.available = avail;
  if (str(props['quota-used-bytes']) !== undefined && Number.isFinite(used) && used >= 0) q.used = used;
  return q;
}
