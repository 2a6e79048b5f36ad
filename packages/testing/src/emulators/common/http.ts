import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The small HTTP layer every service emulator is built on: a node:http server on 127.0.0.1, a
 * router with `:param` segments, body readers and JSON replies. No framework, so each emulator
 * reads like the service's own reference pages (method, path, headers, body, status).
 */

export interface EmuRequest {
  readonly method: string;
  readonly url: URL;
  /** Decoded path without the query string. */
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly params: Record<string, string>;
  readonly raw: IncomingMessage;
  /** The whole request body (read once, cached). */
  body(): Promise<Buffer>;
  json<T = Record<string, unknown>>(): Promise<T>;
  header(name: string): string | undefined;
  query(name: string): string | undefined;
}

export type EmuHandler = (req: EmuRequest, res: ServerResponse) => Promise<void> | void;

interface Route {
  method: string;
  pattern: RegExp;
  names: string[];
  handler: EmuHandler;
}

/** Routes by method and path; `:name` matches one segment, `*name` the rest of the path. */
export class Router {
  private readonly routes: Route[] = [];

  on(method: string, path: string, handler: EmuHandler): this {
    const names: string[] = [];
    const source = path
      .split('/')
      .map((seg) => {
        if (seg.startsWith(':')) {
          names.push(seg.slice(1));
          return '([^/]+)';
        }
        if (seg.startsWith('*')) {
          names.push(seg.slice(1));
          return '(.*)';
        }
        return seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      })
      .join('/');
    this.routes.push({ method: method.toUpperCase(), pattern: new RegExp(`^${source}$`), names, handler });
    return this;
  }

  match(method: string, path: string): { handler: EmuHandler; params: Record<string, string> } | undefined {
    for (const route of this.routes) {
      if (route.method !== method && !(route.method === 'GET' && method === 'HEAD')) continue;
      const m = route.pattern.exec(path);
      if (!m) continue;
      const params: Record<string, string> = {};
      route.names.forEach((name, i) => (params[name] = m[i + 1] ?? ''));
      return { handler: route.handler, params };
    }
    return undefined;
  }
}

export function makeRequest(raw: IncomingMessage, params: Record<string, string>, base: string): EmuRequest {
  const url = new URL(raw.url ?? '/', base);
  let cached: Promise<Buffer> | undefined;
  const body = (): Promise<Buffer> => {
    cached ??= new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      raw.on('data', (c: Buffer) => chunks.push(c));
      raw.on('end', () => resolve(Buffer.concat(chunks)));
      raw.on('error', reject);
    });
    return cached;
  };
  return {
    method: (raw.method ?? 'GET').toUpperCase(),
    url,
    path: decodeURIComponent(url.pathname),
    headers: raw.headers,
    params,
    raw,
    body,
    async json<T>() {
      const buf = await body();
      if (buf.length === 0) return {} as T;
      return JSON.parse(buf.toString('utf8')) as T;
    },
    header(name: string) {
      const v = raw.headers[name.toLowerCase()];
      return Array.isArray(v) ? v[0] : v;
    },
    query(name: string) {
      return url.searchParams.get(name) ?? undefined;
    },
  };
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function sendText(
  res: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
  contentType = 'text/plain; charset=utf-8',
): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

export function sendEmpty(res: ServerResponse, status: number, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-length': '0', ...headers });
  res.end();
}

/** Parses `Range: bytes=a-b` (one range) against a size; undefined when absent or unsatisfiable. */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | 'invalid' | undefined {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m) return 'invalid';
  let start: number;
  let end: number;
  if (m[1] === '' && m[2] !== '') {
    const suffix = Number(m[2]);
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start > end || start >= size) return size === 0 && start === 0 ? undefined : 'invalid';
  return { start, end };
}

/** Sends file bytes honouring a Range header (206 Partial Content / 416). */
export function sendBytes(
  req: EmuRequest,
  res: ServerResponse,
  data: Buffer,
  headers: Record<string, string> = {},
  contentType = 'application/octet-stream',
): void {
  const range = parseRange(req.header('range'), data.length);
  if (range === 'invalid') {
    res.writeHead(416, { 'content-range': `bytes */${data.length}`, 'content-length': '0' });
    res.end();
    return;
  }
  const slice = range ? data.subarray(range.start, range.end + 1) : data;
  res.writeHead(range ? 206 : 200, {
    'content-type': contentType,
    'content-length': String(slice.length),
    'accept-ranges': 'bytes',
    ...(range ? { 'content-range': `bytes ${range.start}-${range.end}/${data.length}` } : {}),
    ...headers,
  });
  res.end(req.method === 'HEAD' ? undefined : slice);
}

/** Parses `Content-Range: bytes a-b/total` or `bytes * /total` (spaces as written by clients). */
export function parseContentRange(
  header: string | undefined,
):
  | { start: number; end: number; total: number | undefined }
  | { start: undefined; end: undefined; total: number | undefined }
  | undefined {
  if (!header) return undefined;
  const m = /^bytes\s+(?:(\d+)-(\d+)|\*)\/(\d+|\*)$/.exec(header.trim());
  if (!m) return undefined;
  const total = m[3] === '*' ? undefined : Number(m[3]);
  if (m[1] === undefined) return { start: undefined, end: undefined, total };
  return { start: Number(m[1]), end: Number(m[2]), total };
}

export interface RunningServer {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** Starts a node:http server on 127.0.0.1 (a free port) and returns its base URL. */
export async function listen(
  handler: (raw: IncomingMessage, res: ServerResponse, base: string) => Promise<void>,
): Promise<RunningServer> {
  let base = '';
  const server: Server = createServer((raw, res) => {
    handler(raw, res, base).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { code: 500, message: String(err) } });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  return {
    url: base,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A random identifier in the given alphabet, like the opaque ids services hand out. */
export function randomId(
  length = 16,
  alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789',
): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[Math.floor(Math.random() * alphabet.length)];
  return out;
}

export function bearerToken(req: EmuRequest): string | undefined {
  const auth = req.header('authorization');
  if (!auth) return undefined;
  const m = /^Bearer\s+(.+)$/i.exec(auth);
  return m?.[1]?.trim();
}
