import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Code, EMBEDDED_HOST_HEADERS, FRONT_END_VERSION, HEADERS, TIMEOUTS } from '@skyferry/contract';
import {
  ApiRequestError,
  NetworkError,
  api,
  configureClient,
  requestHeaders,
  type ClientEnvironment,
  type ClientIdentity,
} from './client.ts';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function environment(identity: ClientIdentity = {}, extra: Partial<ClientEnvironment> = {}): ClientEnvironment {
  return { identity: () => identity, language: () => 'en', runtime: () => 'web', ...extra };
}

function envelopeResponse(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

/** A fetch that answers with `respond` and records each call's URL and init. */
function stubFetch(respond: (url: URL, init: RequestInit) => Promise<Response> | Response) {
  const calls: Array<{ url: URL; init: RequestInit }> = [];
  const fetchMock = vi.fn(async (input: URL | RequestInfo, init: RequestInit = {}) => {
    const url = new URL(String(input));
    calls.push({ url, init });
    return respond(url, init);
  });
  vi.stubGlobal('fetch', fetchMock);
  return { calls, fetchMock };
}

/** A fetch that never answers on its own and rejects as browsers do when its signal aborts. */
function hangingFetch() {
  return stubFetch(
    (_url, init) =>
      new Promise<Response>((_resolve, reject) => {
        init.signal?.addEventListener('abort', () =>
          reject(init.signal?.reason ?? new DOMException('aborted', 'AbortError')),
        );
      }),
  );
}

function headersOf(init: RequestInit): Record<string, string> {
  return Object.fromEntries(new Headers(init.headers).entries());
}

beforeEach(() => {
  localStorage.clear();
  configureClient(environment());
});
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe('request headers (spec section 7)', () => {
  it('sends authorization as "<token type> <token>" and every identity header', () => {
    configureClient(
      environment(
        { tokenType: 'Bearer', accessToken: 'acc-123', tempToken: 'tmp-456', uid: 'u-1', email: 'ann@example.com' },
        { language: () => 'de' },
      ),
    );
    const headers = requestHeaders();
    expect(headers[HEADERS.authorization]).toBe('Bearer acc-123');
    expect(headers[HEADERS.tempAuthorization]).toBe('tmp-456');
    expect(headers[HEADERS.uid]).toBe('u-1');
    expect(headers[HEADERS.email]).toBe('ann@example.com');
    expect(headers[HEADERS.language]).toBe('de');
  });

  it('uses the token type it was given, Bearer when none', () => {
    configureClient(environment({ tokenType: 'JWT', accessToken: 'abc' }));
    expect(requestHeaders()[HEADERS.authorization]).toBe('JWT abc');
    configureClient(environment({ accessToken: 'abc' }));
    expect(requestHeaders()[HEADERS.authorization]).toBe('Bearer abc');
  });

  it('leaves out identity headers it has no value for', () => {
    const headers = requestHeaders();
    for (const name of [
      HEADERS.authorization,
      HEADERS.tempAuthorization,
      HEADERS.uid,
      HEADERS.email,
      HEADERS.tempDebug,
    ]) {
      expect(headers, name).not.toHaveProperty(name);
    }
  });

  it('sends the time zone, timestamp and version 1.7.8', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2025-06-01T12:00:00Z'));
    const headers = requestHeaders();
    expect(headers[HEADERS.timezone]).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone);
    expect(() => new Intl.DateTimeFormat('en', { timeZone: headers[HEADERS.timezone] })).not.toThrow();
    expect(headers[HEADERS.timestamp]).toBe(String(Date.parse('2025-06-01T12:00:00Z')));
    expect(headers[HEADERS.version]).toBe(FRONT_END_VERSION);
    expect(headers[HEADERS.version]).toBe('1.7.8');
  });

  it.each([
    ['web', '0', '9482'],
    ['app-win', '3', '7920'],
    ['app-mac', '4', '8175'],
  ] as const)('sends platform and pid for the %s runtime', (runtime, platform, pid) => {
    configureClient(environment({}, { runtime: () => runtime }));
    const headers = requestHeaders();
    expect(headers[HEADERS.platform]).toBe(platform);
    expect(headers[HEADERS.pid]).toBe(pid);
  });

  it('sends the temporary-debug flag only when debugging', () => {
    configureClient(environment({}, { debug: () => true }));
    expect(requestHeaders()[HEADERS.tempDebug]).toBe('1');
    configureClient(environment({}, { debug: () => false }));
    expect(requestHeaders()).not.toHaveProperty(HEADERS.tempDebug);
  });

  it('sends a device uuid, generated once and kept in local storage', () => {
    const first = requestHeaders()[HEADERS.uuid];
    expect(first).toMatch(UUID_RE);
    expect(requestHeaders()[HEADERS.uuid]).toBe(first);
    expect(Object.values({ ...localStorage })).toContain(first);
  });

  it('keeps using a uuid already in local storage, and makes a new one after storage is cleared', () => {
    const first = requestHeaders()[HEADERS.uuid];
    const key = Object.keys({ ...localStorage }).find((k) => localStorage.getItem(k) === first);
    expect(key).toBeDefined();
    localStorage.setItem(key as string, 'kept-uuid');
    expect(requestHeaders()[HEADERS.uuid]).toBe('kept-uuid');
    localStorage.clear();
    const fresh = requestHeaders()[HEADERS.uuid];
    expect(fresh).toMatch(UUID_RE);
    expect(fresh).not.toBe(first);
  });

  it('reads the identity at each request, so a login takes effect at once', () => {
    let identity: ClientIdentity = {};
    configureClient({ identity: () => identity, language: () => 'en', runtime: () => 'web' });
    expect(requestHeaders()).not.toHaveProperty(HEADERS.authorization);
    identity = { accessToken: 'new' };
    expect(requestHeaders()[HEADERS.authorization]).toBe('Bearer new');
  });
});

describe('api()', () => {
  it('POSTs by default to the same origin, with the headers, and resolves with data', async () => {
    configureClient(environment({ accessToken: 'tok', tempToken: 'tmp' }, { language: () => 'ja' }));
    const { calls } = stubFetch(() => envelopeResponse({ code: 0, msg: 'success', data: { items: [1, 2] } }));
    await expect(api('/api/tasks/list', { body: { page: 1, page_size: 100, completed: 0 } })).resolves.toEqual({
      items: [1, 2],
    });
    expect(calls).toHaveLength(1);
    const [{ url, init }] = calls as [{ url: URL; init: RequestInit }];
    expect(url.origin).toBe(window.location.origin);
    expect(url.pathname).toBe('/api/tasks/list');
    expect(init.method).toBe('POST');
    expect(init.credentials).toBe('same-origin');
    expect(init.body).toBe(JSON.stringify({ page: 1, page_size: 100, completed: 0 }));
    const headers = headersOf(init);
    expect(headers['content-type']).toBe('application/json');
    expect(headers.authorization).toBe('Bearer tok');
    expect(headers['x-temp-authorization']).toBe('tmp');
    expect(headers['x-language']).toBe('ja');
    expect(headers['x-version']).toBe('1.7.8');
    expect(headers['x-platform']).toBe('0');
    expect(headers['x-pid']).toBe('9482');
    expect(headers['x-uuid']).toMatch(UUID_RE);
  });

  it('sends no body and no content type when there is no payload, and adds the query', async () => {
    const { calls } = stubFetch(() => envelopeResponse({ code: 0, msg: 'success', data: null }));
    await api('/api/cleanup/empty-folders', {
      method: 'GET',
      query: { page_size: 20, cloud_id: 'c 1', skip: undefined, deep: true },
    });
    const [{ url, init }] = calls as [{ url: URL; init: RequestInit }];
    expect(init.method).toBe('GET');
    expect(init.body).toBeUndefined();
    expect(headersOf(init)).not.toHaveProperty('content-type');
    expect(Object.fromEntries(url.searchParams)).toEqual({ page_size: '20', cloud_id: 'c 1', deep: 'true' });
  });

  it('rejects a non-zero envelope with ApiRequestError carrying code, msg, status and data', async () => {
    stubFetch(() =>
      envelopeResponse(
        {
          code: Code.TRAFFIC_INSUFFICIENT,
          msg: 'Not enough traffic available, need 2.00 GB in total',
          data: { need: 2 },
        },
        402,
      ),
    );
    const error = await api('/api/tasks', { body: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiRequestError);
    const e = error as ApiRequestError;
    expect(e.code).toBe(4001001);
    expect(e.message).toBe('Not enough traffic available, need 2.00 GB in total');
    expect(e.status).toBe(402);
    expect(e.data).toEqual({ need: 2 });
    expect(e.isUnauthenticated).toBe(false);
  });

  it('marks 140013 as unauthenticated', async () => {
    stubFetch(() => envelopeResponse({ code: Code.UNAUTHENTICATED, msg: 'Please log in first.', data: null }, 401));
    const error = (await api('/api/users/me', { method: 'GET' }).catch((e: unknown) => e)) as ApiRequestError;
    expect(error).toBeInstanceOf(ApiRequestError);
    expect(error.code).toBe(140013);
    expect(error.isUnauthenticated).toBe(true);
  });

  it('rejects the envelope of a 404 with its code, so polling can stop', async () => {
    stubFetch(() => envelopeResponse({ code: 404, msg: 'The task does not exist.', data: null }, 404));
    await expect(api('/api/cloud-manager/poll-progress/t1', { method: 'GET' })).rejects.toMatchObject({
      name: 'ApiRequestError',
      code: 404,
      status: 404,
    });
  });

  it('turns a body that is not JSON (a proxy error page) into a server error', async () => {
    stubFetch(
      () => new Response('<html>Bad Gateway</html>', { status: 502, headers: { 'content-type': 'text/html' } }),
    );
    const error = (await api('/api/v2/init', { method: 'GET' }).catch((e: unknown) => e)) as ApiRequestError;
    expect(error).toBeInstanceOf(ApiRequestError);
    expect(error.code).toBe(Code.INTERNAL);
    expect(error.status).toBe(502);
    expect(error.message).toBe('Server did not respond, please try again later.');
  });

  it('turns JSON that is not an envelope into an unknown error', async () => {
    stubFetch(() => envelopeResponse({ hello: 'world' }));
    await expect(api('/api/v2/init', { method: 'GET' })).rejects.toMatchObject({
      name: 'ApiRequestError',
      code: Code.INTERNAL,
      message: 'An unknown error occurred',
    });
  });

  it('rejects with NetworkError saying the network is unstable when the request fails (MSG-12)', async () => {
    stubFetch(() => Promise.reject(new TypeError('Failed to fetch')));
    const error = (await api('/api/v2/init', { method: 'GET' }).catch((e: unknown) => e)) as NetworkError;
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.timedOut).toBe(false);
    expect(error.message).toBe('The network is unstable, please try again later.');
  });

  it('answers a 400 without a message with "An unknown error occurred" (ERR-12), a 400 with one with it', async () => {
    stubFetch(() => envelopeResponse({ code: Code.BAD_REQUEST, msg: '', data: null }, 400));
    await expect(api('/api/tasks', { body: {} })).rejects.toMatchObject({
      code: Code.BAD_REQUEST,
      message: 'An unknown error occurred',
    });
    stubFetch(() => envelopeResponse({ code: Code.BAD_REQUEST, msg: 'The name is too long.', data: null }, 400));
    await expect(api('/api/tasks', { body: {} })).rejects.toMatchObject({ message: 'The name is too long.' });
  });

  it('says its own failure messages in the language the environment gives', async () => {
    configureClient(
      environment(
        {},
        { messages: () => ({ network: 'Réseau instable', timeout: 'Pas de réponse', unknown: 'Erreur inconnue' }) },
      ),
    );
    stubFetch(() => Promise.reject(new TypeError('Failed to fetch')));
    await expect(api('/api/v2/init', { method: 'GET' })).rejects.toMatchObject({ message: 'Réseau instable' });
    stubFetch(() => envelopeResponse({ code: Code.BAD_REQUEST, msg: '', data: null }, 400));
    await expect(api('/api/v2/init', { method: 'GET' })).rejects.toMatchObject({ message: 'Erreur inconnue' });
  });

  it('gives up after 60 s with NetworkError(timedOut)', async () => {
    vi.useFakeTimers();
    const { fetchMock } = hangingFetch();
    let settled: unknown = 'pending';
    const call = api('/api/v2/clouds/me', { method: 'GET' }).then(
      () => (settled = 'resolved'),
      (e: unknown) => (settled = e),
    );
    expect(TIMEOUTS.mainRequest).toBe(60_000);
    await vi.advanceTimersByTimeAsync(59_999);
    expect(settled).toBe('pending');
    await vi.advanceTimersByTimeAsync(1);
    await call;
    expect(fetchMock).toHaveBeenCalledTimes(1);
    expect(settled).toBeInstanceOf(NetworkError);
    expect((settled as NetworkError).timedOut).toBe(true);
    expect((settled as NetworkError).message).toBe('Server did not respond, please try again later.');
  });

  it('honours a shorter timeout for one call', async () => {
    vi.useFakeTimers();
    hangingFetch();
    const call = api('/api/x', { method: 'GET', timeoutMs: 5_000 }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(5_000);
    const error = (await call) as NetworkError;
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.timedOut).toBe(true);
  });

  it('passes on the caller cancelling, rather than calling it a network error', async () => {
    hangingFetch();
    const controller = new AbortController();
    const call = api('/api/x', { method: 'GET', signal: controller.signal }).catch((e: unknown) => e);
    controller.abort(new DOMException('user left', 'AbortError'));
    const error = await call;
    expect(error).not.toBeInstanceOf(NetworkError);
    expect((error as DOMException).name).toBe('AbortError');
  });

  it('leaves no timer running after an answer', async () => {
    vi.useFakeTimers();
    stubFetch(() => envelopeResponse({ code: 0, msg: 'success', data: 1 }));
    await expect(api('/api/x', { method: 'GET' })).resolves.toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('the embedded-app host client (spec section 7)', () => {
  it('sends the host headers, json, the caller’s authorization and no cookies', async () => {
    configureClient(environment({ tokenType: 'Bearer', accessToken: 'acc-1' }, { language: () => 'de' }));
    const { calls } = stubFetch(() => envelopeResponse({ code: 0, msg: '', data: { items: [] } }));
    const data = await api('/ecology/v1/apps', { method: 'GET', client: 'embedded-host' });
    expect(data).toEqual({ items: [] });
    const call = calls[0] as { init: RequestInit };
    const headers = headersOf(call.init);
    expect(headers).toMatchObject({
      authorization: 'Bearer acc-1',
      [EMBEDDED_HOST_HEADERS.clientType]: '1',
      [EMBEDDED_HOST_HEADERS.appKey]: 'skyferry-web',
      [EMBEDDED_HOST_HEADERS.productId]: '1',
      [EMBEDDED_HOST_HEADERS.productVersion]: '1.0.0',
      [HEADERS.language]: 'en-us',
      'content-type': 'application/json',
    });
    expect(headers[EMBEDDED_HOST_HEADERS.clientSerial]).toMatch(UUID_RE);
    // The main client's own headers are not mixed in.
    expect(headers).not.toHaveProperty(HEADERS.pid);
    expect(call.init.credentials).toBe('omit');
  });

  it('gives up after 30 s', async () => {
    vi.useFakeTimers();
    const { fetchMock } = hangingFetch();
    const done = api('/ecology/v1/apps', {
      method: 'GET',
      client: 'embedded-host',
      timeoutMs: TIMEOUTS.embeddedHostRequest,
    }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(29_999);
    expect(fetchMock).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await done).toBeInstanceOf(NetworkError);
  });
});
