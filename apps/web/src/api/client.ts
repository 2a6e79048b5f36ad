import {
  Code,
  EMBEDDED_HOST,
  EMBEDDED_HOST_HEADERS,
  FRONT_END_VERSION,
  HEADERS,
  PLATFORM,
  PRODUCT_ID,
  TIMEOUTS,
  isEnvelope,
  type Language,
} from '@skyferry/contract';

/** Who is calling: read at each request so a login or refresh takes effect at once. */
export interface ClientIdentity {
  tokenType?: string;
  accessToken?: string;
  tempToken?: string;
  uid?: string;
  email?: string;
}

/** What the client says itself when a call fails without a message from the server (spec section 8). */
export interface ClientMessages {
  /** No answer at all (offline, refused): MSG-12. */
  network: string;
  /** No answer within the timeout. */
  timeout: string;
  /** An error answer without a message (ERR-12), or an answer that is no envelope. */
  unknown: string;
}

const ENGLISH_MESSAGES: ClientMessages = {
  network: 'The network is unstable, please try again later.',
  timeout: 'Server did not respond, please try again later.',
  unknown: 'An unknown error occurred',
};

export interface ClientEnvironment {
  identity(): ClientIdentity;
  language(): Language;
  runtime(): 'web' | 'app-win' | 'app-mac';
  /** The client runs in debug: every call carries the temporary-debug header. */
  debug?: () => boolean;
  /** The failure messages in the user's language (English when absent). */
  messages?: () => ClientMessages;
  /**
   * Called when a signed-in call is answered 140013 (the access token expired early): refresh the
   * tokens and resolve true to retry the call once.
   */
  onUnauthenticated?: () => Promise<boolean>;
}

/** A response whose envelope code is not 0: the code, the server's message (already translated), and data. */
export class ApiRequestError extends Error {
  readonly code: number;
  readonly status: number;
  readonly data: unknown;
  constructor(code: number, msg: string, status: number, data: unknown) {
    super(msg);
    this.name = 'ApiRequestError';
    this.code = code;
    this.status = status;
    this.data = data;
  }
  get isUnauthenticated(): boolean {
    return this.code === Code.UNAUTHENTICATED;
  }
}

/** The request never got an answer: offline, refused, or timed out. */
export class NetworkError extends Error {
  readonly timedOut: boolean;
  constructor(message: string, timedOut: boolean) {
    super(message);
    this.name = 'NetworkError';
    this.timedOut = timedOut;
  }
}

const UUID_KEY = 'skyferry.uuid';
function deviceUuid(): string {
  try {
    let id = localStorage.getItem(UUID_KEY);
    if (!id) {
      id = crypto.randomUUID();
      localStorage.setItem(UUID_KEY, id);
    }
    return id;
  } catch {
    return 'no-storage';
  }
}

let env: ClientEnvironment = {
  identity: () => ({}),
  language: () => 'en',
  runtime: () => 'web',
};

export function configureClient(next: ClientEnvironment): void {
  env = next;
}

/** One of the client's own failure messages, in the user's language. */
export function clientMessage(key: keyof ClientMessages): string {
  return env.messages?.()[key] || ENGLISH_MESSAGES[key];
}

/** The failure of a request that got no answer (timed out, or no connection). */
export function networkError(timedOut: boolean): NetworkError {
  return new NetworkError(clientMessage(timedOut ? 'timeout' : 'network'), timedOut);
}

/**
 * Unwraps an answer's envelope: `data` and `msg` when code is 0, else ApiRequestError with the
 * server's message, or "An unknown error occurred" when it sent none.
 */
export async function readEnvelope<T>(response: Response): Promise<{ data: T; msg: string }> {
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    throw new ApiRequestError(Code.INTERNAL, clientMessage('timeout'), response.status, null);
  }
  if (!isEnvelope(body)) throw new ApiRequestError(Code.INTERNAL, clientMessage('unknown'), response.status, null);
  if (body.code !== Code.OK) {
    throw new ApiRequestError(body.code, body.msg || clientMessage('unknown'), response.status, body.data);
  }
  return { data: body.data as T, msg: body.msg };
}

/** The headers every main call sends (spec section 7). */
export function requestHeaders(): Record<string, string> {
  const id = env.identity();
  const runtime = env.runtime();
  const platform = runtime === 'app-win' ? PLATFORM.windows : runtime === 'app-mac' ? PLATFORM.mac : PLATFORM.web;
  const pid = runtime === 'app-win' ? PRODUCT_ID.windows : runtime === 'app-mac' ? PRODUCT_ID.mac : PRODUCT_ID.web;
  const headers: Record<string, string> = {
    [HEADERS.language]: env.language(),
    [HEADERS.timezone]: Intl.DateTimeFormat().resolvedOptions().timeZone,
    [HEADERS.platform]: String(platform),
    [HEADERS.pid]: String(pid),
    [HEADERS.timestamp]: String(Date.now()),
    [HEADERS.version]: FRONT_END_VERSION,
    [HEADERS.uuid]: deviceUuid(),
  };
  if (id.accessToken) headers[HEADERS.authorization] = `${id.tokenType ?? 'Bearer'} ${id.accessToken}`;
  if (id.tempToken) headers[HEADERS.tempAuthorization] = id.tempToken;
  if (id.uid) headers[HEADERS.uid] = id.uid;
  if (id.email) headers[HEADERS.email] = id.email;
  if (env.debug?.()) headers[HEADERS.tempDebug] = '1';
  return headers;
}

/**
 * The headers of the embedded-app host client (spec section 7): the caller's authorization
 * (token type and token; a visitor's temporary token), client type 1, the device's serial, the app
 * key, product id 1, product version 1.0.0 and language en-us.
 */
export function embeddedHostHeaders(): Record<string, string> {
  const id = env.identity();
  const headers: Record<string, string> = {
    [EMBEDDED_HOST_HEADERS.clientType]: String(EMBEDDED_HOST.clientType),
    [EMBEDDED_HOST_HEADERS.clientSerial]: deviceUuid(),
    [EMBEDDED_HOST_HEADERS.appKey]: EMBEDDED_HOST.appKey,
    [EMBEDDED_HOST_HEADERS.productId]: String(EMBEDDED_HOST.productId),
    [EMBEDDED_HOST_HEADERS.productVersion]: EMBEDDED_HOST.productVersion,
    [HEADERS.language]: EMBEDDED_HOST.language,
  };
  if (id.accessToken) headers[HEADERS.authorization] = `${id.tokenType ?? 'Bearer'} ${id.accessToken}`;
  if (id.tempToken) headers[HEADERS.tempAuthorization] = id.tempToken;
  return headers;
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  /** 'embedded-host': the embedded-app host client's headers and no cookies (spec section 7). */
  client?: 'main' | 'embedded-host';
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined>;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/**
 * Calls the API and unwraps the envelope: resolves with `data` when code is 0, rejects with
 * ApiRequestError otherwise, or NetworkError when no answer came (60 s timeout, POST by default).
 */
export async function api<T>(path: string, options: RequestOptions = {}): Promise<T> {
  return (await apiWithMessage<T>(path, options)).data;
}

/** Like `api`, but also resolves with the envelope's `msg` (some calls carry a message to show). */
export async function apiWithMessage<T>(path: string, options: RequestOptions = {}): Promise<{ data: T; msg: string }> {
  const hadToken = Boolean(env.identity().accessToken);
  try {
    return await request<T>(path, options);
  } catch (err) {
    if (!(err instanceof ApiRequestError) || !err.isUnauthenticated || !hadToken || !env.onUnauthenticated) throw err;
    if (!(await env.onUnauthenticated())) throw err;
    return request<T>(path, options);
  }
}

async function request<T>(path: string, options: RequestOptions): Promise<{ data: T; msg: string }> {
  const method = options.method ?? 'POST';
  const url = new URL(path, window.location.origin);
  for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
  const controller = new AbortController();
  const timeout = setTimeout(
    () => controller.abort(new DOMException('timeout', 'TimeoutError')),
    options.timeoutMs ?? TIMEOUTS.mainRequest,
  );
  const onAbort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const host = options.client === 'embedded-host';
  const headers = host ? embeddedHostHeaders() : requestHeaders();
  if (options.body !== undefined || host) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: controller.signal,
      credentials: host ? 'omit' : 'same-origin',
    });
  } catch (err) {
    if (options.signal?.aborted) throw err;
    throw networkError(controller.signal.aborted);
  } finally {
    clearTimeout(timeout);
    options.signal?.removeEventListener('abort', onAbort);
  }
  return readEnvelope<T>(response);
}
