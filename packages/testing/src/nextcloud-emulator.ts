import { randomBytes } from 'node:crypto';
import {
  createReadStream,
  createWriteStream,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
} from 'node:fs';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { startApacheWebdav } from './apache-webdav.ts';

export interface NextcloudEmulator {
  /** The files endpoint, as a user copies it from Nextcloud: .../remote.php/dav/files/<user>/ */
  readonly url: string;
  readonly username: string;
  readonly password: string;
  /** The folder holding the user's files (Apache's). */
  readonly dir: string;
  /** Chunked uploads seen (MOVE of .file), for tests that check the chunked path was taken. */
  readonly assembled: string[];
  /** The user's quota in bytes (RFC 4331 quota-available-bytes is this less what the files take). */
  quotaBytes: number;
  /** Deleted items kept in the trashbin: their name there, where they were, when they went. */
  readonly trashed: ReadonlyMap<string, { original: string; deletedAt: number }>;
  /** Every request to the files root, as "METHOD /path" (below the root, percent-encoded). */
  readonly requests: string[];
  stop(): Promise<void>;
}

export interface NextcloudEmulatorOptions {
  /** The user's quota (default 10 GiB). */
  quotaBytes?: number;
  /**
   * 'nextcloud' (default) answers /status.php as Nextcloud does; 'none' answers it 404, so clients
   * take the server for a generic WebDAV server (one that keeps times its own way, below).
   */
  product?: 'nextcloud' | 'none';
  /** Keeps the time a PUT names in X-OC-Mtime (default true), as Nextcloud and rclone serve webdav 1.6x do. */
  mtimeHeader?: boolean;
  /** Lets PROPPATCH set getlastmodified (default false: Apache refuses it as a protected property). */
  mtimeProppatch?: boolean;
}

/**
 * A Nextcloud stand-in for tests (Nextcloud itself, a PHP application, is not installable here):
 * built from Nextcloud's published WebDAV client documentation, over a real Apache mod_dav
 * server. It answers /status.php, serves /remote.php/dav/files/<user>/ by proxying to Apache
 * (rewriting hrefs and Destination headers), keeps the modification time sent in X-OC-Mtime, and
 * implements chunked upload v2 (/remote.php/dav/uploads/<user>/<id>: MKCOL, numbered chunk PUTs,
 * MOVE of ".file" to assemble, DELETE to abort), which requires the Destination header throughout.
 * Also, from the same manual and RFC 4331:
 * - The trashbin (https://docs.nextcloud.com/server/latest/developer_manual/client_apis/WebDAV/trashbin.html):
 *   a DELETE of a file or folder moves it to /remote.php/dav/trashbin/<user>/trash/<name>.d<unix time>;
 *   PROPFIND there lists the items with {http://nextcloud.org/ns}trashbin-filename,
 *   trashbin-original-location and trashbin-deletion-time; MOVE of an item to .../restore/<item>
 *   puts it back where it was (as "<name> (restored)" when that name is taken again, as Nextcloud
 *   does); DELETE of an item removes it for good, DELETE of .../trash empties the trashbin.
 * - Quota (RFC 4331 quota-available-bytes and quota-used-bytes, which Nextcloud reports for a
 *   folder): a PROPFIND asking for them answers the user's quota and what the files take.
 * With `product: 'none'` it stands in for generic servers that keep times their own way
 * (X-OC-Mtime as rclone serve webdav 1.6x does, or PROPPATCH of getlastmodified), and without
 * Nextcloud's trashbin: a DELETE deletes.
 */
export async function startNextcloudEmulator(options: NextcloudEmulatorOptions = {}): Promise<NextcloudEmulator> {
  const { product = 'nextcloud', mtimeHeader = true, mtimeProppatch = false } = options;
  const requests: string[] = [];
  const apache = await startApacheWebdav();
  const trashDir = mkdtempSync(join(apache.dir, '..', 'skyferry-nc-trash-'));
  const trashed = new Map<string, { original: string; deletedAt: number }>();
  const username = 'alice';
  const trashPrefix = `/remote.php/dav/trashbin/${username}/`;
  const password = `pw-${randomBytes(6).toString('hex')}`;
  const uploadsDir = mkdtempSync(join(tmpdir(), 'skyferry-nc-uploads-'));
  const filesPrefix = `/remote.php/dav/files/${username}/`;
  const uploadsPrefix = `/remote.php/dav/uploads/${username}/`;
  const apacheUrl = new URL(apache.url);
  const apacheAuth = `Basic ${Buffer.from(`${apache.username}:${apache.password}`).toString('base64')}`;
  const assembled: string[] = [];
  let base = '';

  const diskPath = (encodedRest: string) =>
    join(
      apache.dir,
      ...encodedRest
        .split('/')
        .filter(Boolean)
        .map((s) => decodeURIComponent(s)),
    );

  /** Sends a request to Apache; `rest` is the percent-encoded path below the files root. */
  const toApache = (method: string, rest: string, headers: Record<string, string>, body?: Readable) =>
    new Promise<IncomingMessage>((resolve, reject) => {
      const r = request(
        {
          host: apacheUrl.hostname,
          port: apacheUrl.port,
          method,
          path: `/${rest}`,
          headers: { ...headers, authorization: apacheAuth },
        },
        resolve,
      );
      r.on('error', reject);
      if (body) pipeline(body, r).catch(reject);
      else r.end();
    });

  const setMtime = (rest: string, header: string | string[] | undefined): boolean => {
    const secs = Number(Array.isArray(header) ? header[0] : header);
    if (!mtimeHeader || !header || !Number.isFinite(secs)) return false;
    utimesSync(diskPath(rest), new Date(), new Date(secs * 1000));
    return true;
  };

  /** Bytes the files take (what quota-used-bytes reports), the trashbin not counted. */
  const usedBytes = (dir: string): number => {
    let total = 0;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, e.name);
      total += e.isDirectory() ? usedBytes(full) : lstatSync(full).size;
    }
    return total;
  };
  const decodeRest = (rest: string) =>
    rest
      .split('/')
      .filter(Boolean)
      .map((seg) => decodeURIComponent(seg))
      .join('/');
  const encodeRel = (rel: string) => rel.split('/').map(encodeURIComponent).join('/');

  /** Makes the folders of `rel` through Apache (so they belong to the user Apache writes as). */
  const mkcolTree = async (rel: string) => {
    const segs = rel.split('/').filter(Boolean);
    for (let i = 1; i <= segs.length; i++) {
      const up = await toApache('MKCOL', `${encodeRel(segs.slice(0, i).join('/'))}/`, {});
      up.resume();
    }
  };

  /** A DELETE: the item goes to the trashbin, as "<name>.d<unix time>". */
  const toTrash = (res: ServerResponse, rest: string) => {
    const rel = decodeRest(rest.split('?')[0] ?? '');
    const from = join(apache.dir, ...rel.split('/'));
    if (!rel || !existsSync(from)) return send(res, 404, 'not found');
    const name = rel.split('/').pop() as string;
    const secs = Math.floor(Date.now() / 1000);
    let item = `${name}.d${secs}`;
    for (let n = 2; trashed.has(item); n++) item = `${name}.d${secs}.${n}`;
    renameSync(from, join(trashDir, item));
    trashed.set(item, { original: rel, deletedAt: secs });
    return send(res, 204, '');
  };

  const quotaAnswer = (res: ServerResponse, rest: string) => {
    const used = usedBytes(apache.dir);
    const href = `${filesPrefix}${rest.split('?')[0] ?? ''}`;
    const xml =
      '<?xml version="1.0"?><d:multistatus xmlns:d="DAV:"><d:response>' +
      `<d:href>${href}</d:href><d:propstat><d:prop>` +
      `<d:quota-used-bytes>${used}</d:quota-used-bytes>` +
      `<d:quota-available-bytes>${Math.max(0, emulator.quotaBytes - used)}</d:quota-available-bytes>` +
      '</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>';
    res.writeHead(207, { 'content-type': 'application/xml; charset=utf-8' });
    res.end(xml);
  };

  const trashbinRequest = async (req: IncomingMessage, res: ServerResponse, rest: string) => {
    const [area, item, extra] = rest.split('/').filter(Boolean);
    if (extra !== undefined || (area !== 'trash' && area !== 'restore')) return send(res, 404, 'not found');
    const name = item === undefined ? undefined : decodeURIComponent(item);
    if (area === 'trash' && req.method === 'PROPFIND' && name === undefined) {
      req.resume();
      const depth = req.headers.depth ?? '1';
      const rows = [
        `<d:response><d:href>${trashPrefix}trash/</d:href><d:propstat><d:prop><d:resourcetype><d:collection/></d:resourcetype></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>`,
      ];
      if (depth !== '0') {
        for (const [entry, info] of trashed) {
          const st = lstatSync(join(trashDir, entry));
          const dir = st.isDirectory();
          rows.push(
            `<d:response><d:href>${trashPrefix}trash/${encodeURIComponent(entry)}${dir ? '/' : ''}</d:href><d:propstat><d:prop>` +
              `<d:resourcetype>${dir ? '<d:collection/>' : ''}</d:resourcetype>` +
              (dir
                ? `<oc:size>${usedBytes(join(trashDir, entry))}</oc:size>`
                : `<d:getcontentlength>${st.size}</d:getcontentlength>`) +
              `<nc:trashbin-filename>${escapeXml(info.original.split('/').pop() ?? '')}</nc:trashbin-filename>` +
              `<nc:trashbin-original-location>${escapeXml(info.original)}</nc:trashbin-original-location>` +
              `<nc:trashbin-deletion-time>${info.deletedAt}</nc:trashbin-deletion-time>` +
              '</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>',
          );
        }
      }
      res.writeHead(207, { 'content-type': 'application/xml; charset=utf-8' });
      res.end(
        '<?xml version="1.0"?><d:multistatus xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns">' +
          rows.join('') +
          '</d:multistatus>',
      );
      return;
    }
    req.resume();
    if (area === 'trash' && req.method === 'DELETE' && name === undefined) {
      for (const entry of trashed.keys()) rmSync(join(trashDir, entry), { recursive: true, force: true });
      trashed.clear();
      return send(res, 204, '');
    }
    const info = name === undefined ? undefined : trashed.get(name);
    if (area === 'trash' && name !== undefined && !info) return send(res, 404, 'not in the trashbin');
    if (area === 'trash' && req.method === 'DELETE' && name !== undefined) {
      rmSync(join(trashDir, name), { recursive: true, force: true });
      trashed.delete(name);
      return send(res, 204, '');
    }
    if (area === 'trash' && req.method === 'MOVE' && name !== undefined && info) {
      const d = new URL(String(req.headers.destination ?? ''), base);
      if (d.pathname !== `${trashPrefix}restore/${encodeURIComponent(name)}`) return send(res, 400, 'bad destination');
      const segs = info.original.split('/');
      const leaf = segs.pop() as string;
      await mkcolTree(segs.join('/'));
      let target = join(apache.dir, ...segs, leaf);
      if (existsSync(target)) {
        const dot = leaf.lastIndexOf('.');
        const [stem, ext] = dot > 0 ? [leaf.slice(0, dot), leaf.slice(dot)] : [leaf, ''];
        target = join(apache.dir, ...segs, `${stem} (restored)${ext}`);
      }
      renameSync(join(trashDir, name), target);
      trashed.delete(name);
      return send(res, 201, '');
    }
    return send(res, 405, 'not allowed');
  };

  /** PROPPATCH of getlastmodified, where the options allow it: the file's time is set, a 207 says so. */
  const proppatchMtime = async (req: IncomingMessage, res: ServerResponse, rest: string) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const wanted = /getlastmodified>([^<]+)</i.exec(Buffer.concat(chunks).toString('utf8'))?.[1];
    const when = wanted ? new Date(wanted) : undefined;
    if (!when || Number.isNaN(when.getTime())) return send(res, 400, 'no getlastmodified');
    utimesSync(diskPath(rest), new Date(), when);
    const href = `${filesPrefix}${rest}`;
    return send(
      res,
      207,
      `<?xml version="1.0" encoding="utf-8"?><d:multistatus xmlns:d="DAV:"><d:response><d:href>${href}</d:href>` +
        '<d:propstat><d:prop><d:getlastmodified/></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>' +
        '</d:response></d:multistatus>',
      'application/xml; charset=utf-8',
    );
  };

  const filesRequest = async (req: IncomingMessage, res: ServerResponse, rest: string) => {
    requests.push(`${req.method ?? 'GET'} /${rest}`);
    if (req.method === 'PROPPATCH' && mtimeProppatch) return proppatchMtime(req, res, rest);
    if (req.method === 'DELETE' && product === 'nextcloud') {
      req.resume();
      return toTrash(res, rest);
    }
    let body: Readable = req;
    if (req.method === 'PROPFIND') {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const xml = Buffer.concat(chunks);
      if (xml.includes('quota-available-bytes')) return quotaAnswer(res, rest);
      body = Readable.from([xml]);
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (v === undefined || k === 'authorization' || k === 'host') continue;
      headers[k] = Array.isArray(v) ? v.join(', ') : v;
    }
    if (headers.destination) {
      const d = new URL(headers.destination);
      if (!d.pathname.startsWith(filesPrefix)) return send(res, 502, 'destination outside the files root');
      headers.destination = `${apache.url}${d.pathname.slice(filesPrefix.length)}`;
    }
    // Bodies go through as they come (PUT data, PROPFIND and PROPPATCH XML).
    const up = await toApache(req.method ?? 'GET', rest, headers, body);
    const status = up.statusCode ?? 502;
    const outHeaders: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && k !== 'content-length') outHeaders[k] = v;
    if (req.method === 'PUT' && status < 300 && setMtime(rest, req.headers['x-oc-mtime']))
      outHeaders['x-oc-mtime'] = 'accepted';
    if (status === 207) {
      const chunks: Buffer[] = [];
      for await (const c of up) chunks.push(c as Buffer);
      const xml = Buffer.concat(chunks)
        .toString('utf8')
        .replace(/(<(?:\w+:)?href>)\//g, `$1${filesPrefix}`);
      res.writeHead(status, outHeaders);
      res.end(xml);
      return;
    }
    res.writeHead(status, outHeaders);
    await pipeline(up, res);
  };

  const uploadsRequest = async (req: IncomingMessage, res: ServerResponse, rest: string) => {
    const [id, chunk, extra] = rest.split('/').filter(Boolean);
    if (!id || extra !== undefined || !/^[\w.-]+$/.test(id)) return send(res, 400, 'bad upload path');
    const folder = join(uploadsDir, id);
    const destination = req.headers.destination;
    // Chunking v2 needs the destination on every request.
    if (req.method !== 'DELETE' && !destination) return send(res, 400, 'Destination header missing');
    if (req.method === 'MKCOL' && !chunk) {
      mkdirSync(folder);
      return send(res, 201, '');
    }
    if (req.method === 'DELETE' && !chunk) {
      rmSync(folder, { recursive: true, force: true });
      return send(res, 204, '');
    }
    if (req.method === 'PUT' && chunk && /^\d+$/.test(chunk)) {
      const n = Number(chunk);
      if (n < 1 || n > 10_000) return send(res, 400, 'chunk number out of range');
      await pipeline(req, createWriteStream(join(folder, String(n))));
      return send(res, 201, '');
    }
    if (req.method === 'MOVE' && chunk === '.file') {
      req.resume();
      const d = new URL(String(destination));
      if (!d.pathname.startsWith(filesPrefix)) return send(res, 400, 'bad destination');
      const target = d.pathname.slice(filesPrefix.length);
      const parts = readdirSync(folder)
        .map(Number)
        .sort((a, b) => a - b);
      const total = parts.reduce((sum, n) => sum + statSync(join(folder, String(n))).size, 0);
      const announced = req.headers['oc-total-length'];
      if (announced !== undefined && Number(announced) !== total) return send(res, 400, 'total length mismatch');
      const body = new PassThrough();
      void (async () => {
        for (const n of parts) await pipeline(createReadStream(join(folder, String(n))), body, { end: false });
        body.end();
      })().catch((err: unknown) => body.destroy(err as Error));
      const up = await toApache('PUT', target, { 'content-length': String(total) }, body);
      up.resume();
      if ((up.statusCode ?? 500) >= 300) return send(res, up.statusCode ?? 500, 'assembly failed');
      setMtime(target, req.headers['x-oc-mtime']);
      rmSync(folder, { recursive: true, force: true });
      assembled.push(decodeURIComponent(target));
      return send(res, up.statusCode === 204 ? 204 : 201, '');
    }
    return send(res, 405, 'not allowed');
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', base || 'http://127.0.0.1');
    const auth = req.headers.authorization ?? '';
    const ok = auth === `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
    const handle = async () => {
      if (url.pathname === '/status.php') {
        if (product === 'none') return send(res, 404, 'not found');
        return send(
          res,
          200,
          JSON.stringify({ installed: true, maintenance: false, version: '30.0.0.0', productname: 'Nextcloud' }),
          'application/json',
        );
      }
      if (!ok) return send(res, 401, 'unauthorized', 'text/plain', { 'www-authenticate': 'Basic realm="Nextcloud"' });
      if (url.pathname.startsWith(filesPrefix) || `${url.pathname}/` === filesPrefix) {
        return filesRequest(req, res, url.pathname.slice(filesPrefix.length) + url.search);
      }
      if (url.pathname.startsWith(uploadsPrefix))
        return uploadsRequest(req, res, url.pathname.slice(uploadsPrefix.length));
      if (url.pathname.startsWith(trashPrefix))
        return trashbinRequest(req, res, url.pathname.slice(trashPrefix.length));
      return send(res, 404, 'not found');
    };
    handle().catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, String(err));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  const emulator: NextcloudEmulator = {
    url: `${base}${filesPrefix}`,
    username,
    password,
    dir: apache.dir,
    assembled,
    quotaBytes: options.quotaBytes ?? 10 * 1024 ** 3,
    trashed,
    requests,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await apache.stop();
      rmSync(uploadsDir, { recursive: true, force: true });
    },
  };
  return emulator;
}

function escapeXml(text: string): string {
  return text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

function send(
  res: ServerResponse,
  status: number,
  body: string,
  type = 'text/plain',
  extra: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': type, ...extra });
  res.end(body);
}
