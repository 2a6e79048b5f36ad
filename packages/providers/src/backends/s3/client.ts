import { createHash } from 'node:crypto';
import {
  Agent as HttpAgent,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
} from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import { ProviderError } from '../../api/errors.ts';
import { RingHttp } from '../../http-read.ts';
import { sendHttp } from '../../http-send.ts';
import type { OutboundGuard } from '../../net/guard.ts';
import { keepSocketErrorListeners } from '../../net/listeners.ts';
import { SigV4Signer, UNSIGNED_PAYLOAD, amzDate, canonicalQuery, uriEncode } from './sigv4.ts';

/**
 * A small S3 REST client for the calls the backend makes (objects, listings, multipart uploads
 * and copies), over node:http(s) keep-alive agents and signed with SigV4 (sigv4.ts). It replaces
 * the AWS SDK, whose middleware stack cost about 8 ms of CPU per small file (a GET and a PUT).
 * Bodies are never signed (UNSIGNED-PAYLOAD, as the SDK does over HTTPS); buffered bodies carry
 * Content-MD5, which S3 checks, and with `checksums: 'WHEN_SUPPORTED'` single PUTs also
 * x-amz-checksum-crc32. Errors are thrown as S3ServiceError, shaped as the SDK's were
 * (name/Code, $metadata.httpStatusCode, $response.headers), for errors.ts to map.
 */

export interface S3ClientConfig {
  /** Where requests go; AWS's regional endpoint when undefined. */
  endpoint?: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Bucket in the path (https://host/bucket/key) rather than in the host name. */
  pathStyle: boolean;
  checksums: 'WHEN_REQUIRED' | 'WHEN_SUPPORTED';
  /** Sockets per endpoint (default 64). */
  maxSockets?: number;
  /** A request idle this long fails with a network error (default 300 s). */
  timeoutMs?: number;
  /** Checks the endpoint's address on every connection (unset: any address). */
  guard?: OutboundGuard;
}

export class S3ServiceError extends Error {
  readonly Code: string;
  readonly $metadata: { httpStatusCode: number };
  readonly $response: { headers: Record<string, string | undefined> };
  constructor(code: string, message: string, status: number, headers: IncomingHttpHeaders) {
    super(message || code);
    this.name = code;
    this.Code = code;
    this.$metadata = { httpStatusCode: status };
    const h: Record<string, string | undefined> = {};
    for (const [k, v] of Object.entries(headers)) h[k] = Array.isArray(v) ? v.join(', ') : v;
    this.$response = { headers: h };
  }
}

export interface S3Object {
  Key: string;
  Size: number;
  ETag?: string;
  LastModified?: Date;
}

export interface ListObjectsResult {
  Contents: S3Object[];
  CommonPrefixes: string[];
  IsTruncated: boolean;
  NextContinuationToken?: string;
}

export interface HeadObjectResult {
  ContentLength: number;
  ETag?: string;
  LastModified?: Date;
  ContentType?: string;
  /** x-amz-meta-* headers, names lower-case without the prefix. */
  Metadata: Record<string, string>;
  PartsCount?: number;
}

export interface PutObjectInput {
  key: string;
  body: Buffer | Readable;
  contentLength: number;
  /** Base64 MD5 of a buffered body. */
  contentMD5?: string;
  contentType?: string;
  metadata?: Record<string, string>;
}

interface RequestInput {
  method: string;
  /** Object key; undefined for bucket-level calls. */
  key?: string;
  query?: Record<string, string | undefined>;
  headers?: Record<string, string | number | undefined>;
  body?: Buffer | Readable;
  signal?: AbortSignal;
}

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** Decodes XML character data (the five named entities and numeric references). */
export function xmlDecode(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(/&(#x[0-9a-fA-F]+|#\d+|amp|lt|gt|quot|apos);/g, (_, e: string) => {
    if (e[0] === '#') return String.fromCodePoint(e[1] === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
    return XML_ENTITIES[e] ?? '';
  });
}

export function xmlEscape(s: string): string {
  return s.replace(
    /[&<>"']/g,
    (c) => `&${c === '&' ? 'amp' : c === '<' ? 'lt' : c === '>' ? 'gt' : c === '"' ? 'quot' : 'apos'};`,
  );
}

/** The text of the first <tag> element in `xml` (decoded), or undefined. */
export function xmlTag(xml: string, tag: string): string | undefined {
  const open = xml.indexOf(`<${tag}>`);
  if (open < 0) return xml.includes(`<${tag}/>`) ? '' : undefined;
  const start = open + tag.length + 2;
  const end = xml.indexOf(`</${tag}>`, start);
  return end < 0 ? undefined : xmlDecode(xml.slice(start, end));
}

/** The inner XML of every <tag> element in `xml`. */
export function xmlBlocks(xml: string, tag: string): string[] {
  const out: string[] = [];
  const open = `<${tag}>`;
  const close = `</${tag}>`;
  for (let i = xml.indexOf(open); i >= 0; i = xml.indexOf(open, i)) {
    const end = xml.indexOf(close, i + open.length);
    if (end < 0) break;
    out.push(xml.slice(i + open.length, end));
    i = end + close.length;
  }
  return out;
}

/** Parses a ListObjectsV2 answer. */
export function parseListObjects(xml: string): ListObjectsResult {
  const Contents: S3Object[] = [];
  for (const b of xmlBlocks(xml, 'Contents')) {
    const o: S3Object = { Key: xmlTag(b, 'Key') ?? '', Size: Number(xmlTag(b, 'Size') ?? 0) };
    const etag = xmlTag(b, 'ETag');
    if (etag !== undefined) o.ETag = etag;
    const lm = xmlTag(b, 'LastModified');
    if (lm) o.LastModified = new Date(lm);
    Contents.push(o);
  }
  const CommonPrefixes: string[] = [];
  for (const b of xmlBlocks(xml, 'CommonPrefixes')) {
    const p = xmlTag(b, 'Prefix');
    if (p !== undefined) CommonPrefixes.push(p);
  }
  const res: ListObjectsResult = { Contents, CommonPrefixes, IsTruncated: xmlTag(xml, 'IsTruncated') === 'true' };
  const next = xmlTag(xml, 'NextContinuationToken');
  if (next) res.NextContinuationToken = next;
  return res;
}

/** An answer: node:http's, or RingHttp's for object bodies (downloads, uploads from memory). */
type Answer = Readable & { statusCode?: number; headers: IncomingHttpHeaders };

/** Reads a (short) response body. */
async function readText(res: Answer): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function drain(res: Answer): void {
  res.resume();
}

function header(h: IncomingHttpHeaders, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

const HEAD_ERRORS: Record<number, string> = {
  301: 'PermanentRedirect',
  400: 'BadRequest',
  403: 'Forbidden',
  404: 'NotFound',
  412: 'PreconditionFailed',
  503: 'SlowDown',
};

/** The service error of a failed response (its XML body, or the status for bodiless answers). */
async function errorOf(res: Answer, method: string): Promise<S3ServiceError> {
  const status = res.statusCode ?? 0;
  const body = method === 'HEAD' ? '' : await readText(res).catch(() => '');
  return errorFromBody(body, status, res.headers);
}

function errorFromBody(body: string, status: number, headers: IncomingHttpHeaders): S3ServiceError {
  const code = xmlTag(body, 'Code') ?? HEAD_ERRORS[status] ?? (status >= 500 ? 'InternalError' : '');
  const message = xmlTag(body, 'Message') ?? '';
  return new S3ServiceError(code, message || code || `HTTP ${status}`, status, headers);
}

export class S3Http {
  readonly config: S3ClientConfig;
  private readonly signer: SigV4Signer;
  private readonly agent: HttpAgent | HttpsAgent;
  /** Object bodies: downloads read into recycled buffers, uploads from memory (http-read.ts). */
  private readonly objects: RingHttp;
  private readonly secure: boolean;
  private readonly hostname: string;
  private readonly port: number;
  /** The Host header (with the port when it is not the scheme's default). */
  private readonly host: string;
  private readonly basePath: string;
  private readonly pathStyle: boolean;

  constructor(config: S3ClientConfig) {
    this.config = config;
    const endpoint = new URL(config.endpoint ?? `https://s3.${config.region}.amazonaws.com`);
    this.secure = endpoint.protocol === 'https:';
    // Virtual-hosted names need a DNS-safe bucket (no dots under TLS, where certificates are *.host).
    const dnsSafe =
      /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/.test(config.bucket) || (!this.secure && /^[a-z0-9.-]+$/.test(config.bucket));
    this.pathStyle = config.pathStyle || !dnsSafe;
    this.hostname = this.pathStyle ? endpoint.hostname : `${config.bucket}.${endpoint.hostname}`;
    this.port = endpoint.port ? Number(endpoint.port) : this.secure ? 443 : 80;
    this.host = endpoint.port ? `${this.hostname}:${endpoint.port}` : this.hostname;
    this.basePath = endpoint.pathname.replace(/\/+$/, '');
    this.signer = new SigV4Signer(config.accessKeyId, config.secretAccessKey, config.region);
    const agentOpts = {
      keepAlive: true,
      maxSockets: config.maxSockets ?? 64,
      maxFreeSockets: 64,
      scheduling: 'lifo' as const,
    };
    this.agent = keepSocketErrorListeners(this.secure ? new HttpsAgent(agentOpts) : new HttpAgent(agentOpts));
    // As many idle connections kept as the engine runs files at once (a lane of 64 small ones
    // beside 8 others): fewer would close and open connections (a round trip each) between the
    // files of a busy run. Idle ones close after 4 s.
    this.objects = new RingHttp({
      secure: this.secure,
      hostname: this.hostname,
      port: this.port,
      maxIdle: 128,
      ...(config.guard ? { guard: config.guard } : {}),
    });
  }

  /** The encoded request path of an object key (or of the bucket). */
  private pathOf(key: string | undefined): string {
    const bucket = this.pathStyle ? `/${uriEncode(this.config.bucket)}` : '';
    if (key === undefined) return `${this.basePath}${bucket}/`;
    return `${this.basePath}${bucket}/${uriEncode(key, true)}`;
  }

  /**
   * Signs and sends one request; resolves with the response once its headers arrive (2xx only;
   * any other status is read and thrown as an S3ServiceError).
   */
  async send(input: RequestInput): Promise<Answer> {
    const { method, body, signal } = input;
    if (signal?.aborted) throw new ProviderError('canceled', 'canceled');
    const path = this.pathOf(input.key);
    const query: [string, string][] = [];
    for (const [k, v] of Object.entries(input.query ?? {})) if (v !== undefined) query.push([k, v]);
    const qs = canonicalQuery(query);
    const now = new Date();
    const signed: Record<string, string> = {
      host: this.host,
      'x-amz-date': amzDate(now),
      'x-amz-content-sha256': UNSIGNED_PAYLOAD,
    };
    for (const [k, v] of Object.entries(input.headers ?? {})) if (v !== undefined) signed[k.toLowerCase()] = String(v);
    const headers: OutgoingHttpHeaders = { ...signed };
    headers.authorization = this.signer.authorization(
      { method, path, query: qs, headers: signed, payloadHash: UNSIGNED_PAYLOAD },
      now,
    );
    if (Buffer.isBuffer(body)) headers['content-length'] = body.length;
    else if (body === undefined && (method === 'PUT' || method === 'POST')) headers['content-length'] = 0;
    const timeoutMs = this.config.timeoutMs ?? 300_000;
    const what = `${method} ${path}`;
    // Object bodies down and bodies in memory up (small objects, parts) go through RingHttp;
    // everything else (listings, streamed uploads, HEAD, POST) through node:http.
    const ringHeaders = headers as Record<string, string | number>;
    const res: Answer =
      method === 'GET' && input.key !== undefined && body === undefined && !qs
        ? await this.objects.get({ path, headers: ringHeaders, signal, timeoutMs, what })
        : method === 'PUT' && input.key !== undefined && Buffer.isBuffer(body)
          ? await this.objects.put({
              path: qs ? `${path}?${qs}` : path,
              body,
              headers: ringHeaders,
              signal,
              timeoutMs,
              what,
            })
          : await this.sendNode(input, path, qs, headers, timeoutMs, what);
    const status = res.statusCode ?? 0;
    if (status >= 200 && status < 300) return res;
    throw await errorOf(res, method);
  }

  private sendNode(
    { method, body, signal }: RequestInput,
    path: string,
    qs: string,
    headers: OutgoingHttpHeaders,
    timeoutMs: number,
    what: string,
  ): Promise<IncomingMessage> {
    return sendHttp({
      secure: this.secure,
      options: {
        hostname: this.hostname,
        port: this.port,
        method,
        path: qs ? `${path}?${qs}` : path,
        headers,
        agent: this.agent,
        signal,
      },
      body,
      timeoutMs,
      what,
      guard: this.config.guard,
    });
  }

  /** Sends a request and reads its (short) answer; a 200 whose body is an <Error> is an error too. */
  private async xml(input: RequestInput): Promise<{ body: string; headers: IncomingHttpHeaders }> {
    const res = await this.send(input);
    const body = await readText(res);
    if (body.includes('<Error>')) throw errorFromBody(body, res.statusCode ?? 200, res.headers);
    return { body, headers: res.headers };
  }

  private async empty(input: RequestInput): Promise<IncomingHttpHeaders> {
    const res = await this.send(input);
    drain(res);
    return res.headers;
  }

  async headObject(key: string, signal?: AbortSignal): Promise<HeadObjectResult> {
    const h = await this.empty({ method: 'HEAD', key, signal });
    const meta: Record<string, string> = {};
    for (const [k, v] of Object.entries(h)) {
      if (k.startsWith('x-amz-meta-') && v !== undefined) meta[k.slice(11)] = Array.isArray(v) ? v.join(',') : v;
    }
    const out: HeadObjectResult = { ContentLength: Number(header(h, 'content-length') ?? 0), Metadata: meta };
    const etag = header(h, 'etag');
    if (etag) out.ETag = etag;
    const lm = header(h, 'last-modified');
    if (lm) out.LastModified = new Date(lm);
    const ct = header(h, 'content-type');
    if (ct) out.ContentType = ct;
    const parts = header(h, 'x-amz-mp-parts-count');
    if (parts) out.PartsCount = Number(parts);
    return out;
  }

  async getObject(
    key: string,
    range: string | undefined,
    signal?: AbortSignal,
  ): Promise<{ body: Answer; contentRange?: string }> {
    const body = await this.send({ method: 'GET', key, headers: { range }, signal });
    const contentRange = header(body.headers, 'content-range');
    return contentRange ? { body, contentRange } : { body };
  }

  async listObjectsV2(
    opts: { prefix: string; delimiter?: string; token?: string; maxKeys?: number },
    signal?: AbortSignal,
  ): Promise<ListObjectsResult> {
    const { body } = await this.xml({
      method: 'GET',
      query: {
        'list-type': '2',
        prefix: opts.prefix,
        delimiter: opts.delimiter,
        'continuation-token': opts.token,
        'max-keys': opts.maxKeys === undefined ? undefined : String(opts.maxKeys),
      },
      signal,
    });
    return parseListObjects(body);
  }

  private metaHeaders(meta: Record<string, string> | undefined): Record<string, string> {
    const h: Record<string, string> = {};
    for (const [k, v] of Object.entries(meta ?? {})) h[`x-amz-meta-${k.toLowerCase()}`] = v;
    return h;
  }

  async putObject(input: PutObjectInput, signal?: AbortSignal): Promise<{ ETag?: string }> {
    const headers: Record<string, string | number | undefined> = {
      'content-type': input.contentType ?? 'application/octet-stream',
      'content-md5': input.contentMD5,
      ...this.metaHeaders(input.metadata),
    };
    if (this.config.checksums === 'WHEN_SUPPORTED' && Buffer.isBuffer(input.body)) {
      const c = Buffer.alloc(4);
      c.writeUInt32BE(crc32(input.body) >>> 0);
      headers['x-amz-checksum-crc32'] = c.toString('base64');
      headers['x-amz-sdk-checksum-algorithm'] = 'CRC32';
    }
    if (!Buffer.isBuffer(input.body)) headers['content-length'] = input.contentLength;
    const h = await this.empty({ method: 'PUT', key: input.key, headers, body: input.body, signal });
    const etag = header(h, 'etag');
    return etag ? { ETag: etag } : {};
  }

  async createMultipartUpload(
    input: { key: string; contentType?: string; metadata?: Record<string, string> },
    signal?: AbortSignal,
  ): Promise<string> {
    const { body } = await this.xml({
      method: 'POST',
      key: input.key,
      query: { uploads: '' },
      headers: { 'content-type': input.contentType ?? 'application/octet-stream', ...this.metaHeaders(input.metadata) },
      signal,
    });
    const id = xmlTag(body, 'UploadId');
    if (!id) throw new ProviderError('server', `no upload id for ${input.key}`);
    return id;
  }

  async uploadPart(
    input: { key: string; uploadId: string; partNumber: number; body: Buffer; contentMD5?: string },
    signal?: AbortSignal,
  ): Promise<{ ETag?: string }> {
    const h = await this.empty({
      method: 'PUT',
      key: input.key,
      query: { partNumber: String(input.partNumber), uploadId: input.uploadId },
      headers: { 'content-md5': input.contentMD5 },
      body: input.body,
      signal,
    });
    const etag = header(h, 'etag');
    return etag ? { ETag: etag } : {};
  }

  async completeMultipartUpload(
    input: { key: string; uploadId: string; parts: { PartNumber: number; ETag: string }[] },
    signal?: AbortSignal,
  ): Promise<{ ETag?: string }> {
    const xml =
      '<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
      input.parts
        .map((p) => `<Part><PartNumber>${p.PartNumber}</PartNumber><ETag>${xmlEscape(p.ETag)}</ETag></Part>`)
        .join('') +
      '</CompleteMultipartUpload>';
    const body = Buffer.from(xml);
    const { body: answer } = await this.xml({
      method: 'POST',
      key: input.key,
      query: { uploadId: input.uploadId },
      headers: { 'content-type': 'application/xml', 'content-md5': createHash('md5').update(body).digest('base64') },
      body,
      signal,
    });
    const etag = xmlTag(answer, 'ETag');
    return etag ? { ETag: etag } : {};
  }

  async abortMultipartUpload(input: { key: string; uploadId: string }, signal?: AbortSignal): Promise<void> {
    await this.empty({ method: 'DELETE', key: input.key, query: { uploadId: input.uploadId }, signal });
  }

  async copyObject(
    input: { key: string; copySource: string; metadataDirective?: 'COPY' | 'REPLACE' },
    signal?: AbortSignal,
  ): Promise<void> {
    await this.xml({
      method: 'PUT',
      key: input.key,
      headers: { 'x-amz-copy-source': input.copySource, 'x-amz-metadata-directive': input.metadataDirective },
      signal,
    });
  }

  async uploadPartCopy(
    input: { key: string; uploadId: string; partNumber: number; copySource: string; range: string },
    signal?: AbortSignal,
  ): Promise<{ ETag?: string }> {
    const { body } = await this.xml({
      method: 'PUT',
      key: input.key,
      query: { partNumber: String(input.partNumber), uploadId: input.uploadId },
      headers: { 'x-amz-copy-source': input.copySource, 'x-amz-copy-source-range': input.range },
      signal,
    });
    const etag = xmlTag(body, 'ETag');
    return etag ? { ETag: etag } : {};
  }

  async deleteObject(key: string, signal?: AbortSignal): Promise<void> {
    await this.empty({ method: 'DELETE', key, signal });
  }

  async deleteObjects(
    keys: string[],
    signal?: AbortSignal,
  ): Promise<{ Errors: { Key?: string; Code?: string; Message?: string }[] }> {
    const xml =
      '<Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Quiet>true</Quiet>' +
      keys.map((k) => `<Object><Key>${xmlEscape(k)}</Key></Object>`).join('') +
      '</Delete>';
    const body = Buffer.from(xml);
    const res = await this.send({
      method: 'POST',
      query: { delete: '' },
      headers: { 'content-type': 'application/xml', 'content-md5': createHash('md5').update(body).digest('base64') },
      body,
      signal,
    });
    const answer = await readText(res);
    const Errors = xmlBlocks(answer, 'Error').map((b) => {
      const e: { Key?: string; Code?: string; Message?: string } = {};
      const k = xmlTag(b, 'Key');
      if (k !== undefined) e.Key = k;
      const c = xmlTag(b, 'Code');
      if (c !== undefined) e.Code = c;
      const m = xmlTag(b, 'Message');
      if (m !== undefined) e.Message = m;
      return e;
    });
    return { Errors };
  }

  destroy(): void {
    this.agent.destroy();
    this.objects.close();
  }
}
