import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { canceled, ProviderError, toProviderError } from '../../api/errors.ts';
import { keepErrorListener } from '../../net/listeners.ts';
import { parseRetryAfter, type Pacer } from '../../pacer.ts';
import type { TokenSource } from './token.ts';

/**
 * The HTTP layer of the OAuth backends: every call goes through the account's pacer (rate limit,
 * backoff honouring Retry-After), carries a fresh access token, and after a 401 refreshes the token
 * once and tries again. Bodies are Buffers or strings, so a retried call sends the same bytes.
 * Each backend maps its service's error bodies to ProviderErrors with `mapError`.
 */

export type Body = Buffer | Uint8Array | string | URLSearchParams | undefined;

export interface ApiRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: Body;
  signal?: AbortSignal;
  /** Send the bearer token (default true; upload URLs that carry their own authority say false). */
  auth?: boolean;
  /** Statuses that are answers, not errors (default: 2xx). */
  accept?: (status: number) => boolean;
  redirect?: 'follow' | 'manual' | 'error';
  /** Retry retry-class failures through the pacer (default true). */
  retry?: boolean;
}

export interface ErrorInfo {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
  request: ApiRequest;
}

export type ErrorMapper = (e: ErrorInfo) => ProviderError;

export class ApiClient {
  readonly tokens: TokenSource;
  readonly pacer: Pacer;
  private readonly mapError: ErrorMapper;

  constructor(opts: { tokens: TokenSource; pacer: Pacer; mapError: ErrorMapper }) {
    this.tokens = opts.tokens;
    this.pacer = opts.pacer;
    this.mapError = opts.mapError;
  }

  /** Sends a request; resolves with the response (body unread) or throws a ProviderError. */
  async request(req: ApiRequest): Promise<Response> {
    const once = () => this.attempt(req);
    if (req.retry === false) {
      await this.pacer.acquire(req.signal);
      return once();
    }
    return this.pacer.call(once, req.signal ? { signal: req.signal } : {});
  }

  private async send(req: ApiRequest, token: string | undefined): Promise<Response> {
    const headers: Record<string, string> = { ...req.headers };
    if (token) headers.authorization = `Bearer ${token}`;
    try {
      return await fetch(req.url, {
        method: req.method,
        headers,
        ...(req.body !== undefined ? { body: plainBody(req.body) } : {}),
        ...(req.signal ? { signal: req.signal } : {}),
        redirect: req.redirect ?? 'follow',
      });
    } catch (err) {
      if (req.signal?.aborted) throw canceled();
      // fetch fails with TypeError('fetch failed') whose cause is the socket error.
      const cause = (err as { cause?: { code?: string } } | undefined)?.cause;
      const pe = toProviderError(cause?.code ? cause : err);
      if (pe.code === 'unknown' && err instanceof TypeError) {
        throw new ProviderError('network', `${req.method} ${new URL(req.url).host}: ${pe.message}`, { cause: err });
      }
      throw pe;
    }
  }

  private async attempt(req: ApiRequest): Promise<Response> {
    const auth = req.auth !== false;
    let token = auth ? await this.tokens.accessToken(req.signal) : undefined;
    let res = await this.send(req, token);
    if (res.status === 401 && auth && token) {
      await res.body?.cancel().catch(() => undefined);
      token = await this.tokens.afterUnauthorized(token, req.signal);
      res = await this.send(req, token);
    }
    const accepted = req.accept ? req.accept(res.status) : res.status >= 200 && res.status < 300;
    if (accepted) return res;
    const text = await res.text().catch(() => '');
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    throw this.mapError({ status: res.status, headers: res.headers, text, json, request: req });
  }

  /** Sends and parses a JSON answer. */
  async json<T>(req: ApiRequest): Promise<T> {
    const res = await this.request(req);
    const text = await res.text();
    return (text ? JSON.parse(text) : {}) as T;
  }
}

/**
 * Bytes as a plain Uint8Array view (no copy): undici sends a Buffer or a string body noticeably
 * slower (measured 10-40 ms per request against local servers) than a plain Uint8Array.
 */
function plainBody(body: Exclude<Body, undefined>): Uint8Array | URLSearchParams {
  if (body instanceof URLSearchParams) return body;
  const b = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/** A Node stream over a fetch body; an abort of `signal` ends it with `canceled`. */
export function bodyStream(res: Response, signal?: AbortSignal): Readable {
  if (!res.body) return Readable.from([]);
  const stream = keepErrorListener(Readable.fromWeb(res.body as unknown as WebReadableStream<Uint8Array>));
  if (signal) {
    const onAbort = () => stream.destroy(canceled());
    if (signal.aborted) onAbort();
    else {
      signal.addEventListener('abort', onAbort, { once: true });
      stream.once('close', () => signal.removeEventListener('abort', onAbort));
    }
  }
  return stream;
}

/** The Retry-After of a response, in ms. */
export function retryAfterOf(headers: Headers): number | undefined {
  return parseRetryAfter(headers.get('retry-after'));
}

/** Common status mapping, used by every backend after its own service-specific cases. */
export function genericHttpError(e: ErrorInfo, message: string, serviceCode?: string): ProviderError {
  const code = serviceCode ?? String(e.status);
  const retryAfterMs = retryAfterOf(e.headers);
  const opts = { serviceCode: code, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  if (e.status === 429) return new ProviderError('rate_limited', message, opts);
  if (e.status === 401) return new ProviderError('auth_expired', message, opts);
  if (e.status === 403) return new ProviderError('permission', message, opts);
  if (e.status === 404) return new ProviderError('not_found', message, opts);
  if (e.status === 409) return new ProviderError('exists', message, opts);
  if (e.status === 507) return new ProviderError('quota', message, opts);
  if (e.status === 503 && retryAfterMs !== undefined) return new ProviderError('rate_limited', message, opts);
  if (e.status >= 500) return new ProviderError('server', message, opts);
  return new ProviderError('unknown', message, opts);
}

/** Builds a URL from a base, a path and query parameters (undefined ones left out). */
export function urlOf(
  base: string,
  path: string,
  query: Record<string, string | number | boolean | undefined> = {},
): string {
  const u = new URL(base.replace(/\/+$/, '') + path);
  for (const [k, v] of Object.entries(query)) if (v !== undefined) u.searchParams.set(k, String(v));
  return u.toString();
}

/** A per-key async lock: calls with the same key run one after another. */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = prev.then(() => mine);
    this.tails.set(key, tail);
    await prev;
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
