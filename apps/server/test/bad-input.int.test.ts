import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type SignedUpUser, type TestApp, type TestVisitor } from './support/app.ts';
import { documentedOperations } from './support/openapi.ts';

interface BadCase {
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string | ((ids: { cloud: string }) => string);
  as?: 'user' | 'visitor' | 'none';
  /** An object is sent as JSON; a string is sent raw (with `type` as content type, JSON by default). */
  body?: unknown;
  type?: string;
  status: number;
  /** Text the message must contain (a field name, say). */
  mentions?: string;
}

const long = (n: number) => 'x'.repeat(n);

const CASES: BadCase[] = [
  // Account calls.
  {
    name: 'signup without fields',
    method: 'POST',
    url: '/api/account/signup',
    body: {},
    status: 400,
    mentions: 'email',
  },
  {
    name: 'signup with wrong types',
    method: 'POST',
    url: '/api/account/signup',
    body: { email: 5, password: true },
    status: 400,
    mentions: 'email',
  },
  {
    name: 'signup with an over-long e-mail',
    method: 'POST',
    url: '/api/account/signup',
    body: { email: `${long(300)}@example.com`, password: 'long enough 1' },
    status: 400,
    mentions: 'email',
  },
  {
    name: 'signup with an over-long password',
    method: 'POST',
    url: '/api/account/signup',
    body: { email: 'a@example.com', password: long(300) },
    status: 400,
    mentions: 'password',
  },
  {
    name: 'signup with malformed JSON',
    method: 'POST',
    url: '/api/account/signup',
    body: '{"email": "a@example.com",',
    status: 400,
    mentions: 'JSON',
  },
  { name: 'signup with an empty JSON body', method: 'POST', url: '/api/account/signup', body: '', status: 400 },
  { name: 'signup with a JSON array', method: 'POST', url: '/api/account/signup', body: '[1,2]', status: 400 },
  { name: 'signup with JSON null', method: 'POST', url: '/api/account/signup', body: 'null', status: 400 },
  {
    name: 'signup as plain text',
    method: 'POST',
    url: '/api/account/signup',
    body: 'email=a',
    type: 'text/plain',
    status: 400,
  },
  {
    name: 'signup over the body limit',
    method: 'POST',
    url: '/api/account/signup',
    body: JSON.stringify({ email: 'a@example.com', password: long(20_000) }),
    status: 413,
  },
  {
    name: 'login without a password',
    method: 'POST',
    url: '/api/account/login',
    body: { email: 'a@example.com' },
    status: 400,
    mentions: 'password',
  },
  {
    name: 'login with an empty password',
    method: 'POST',
    url: '/api/account/login',
    body: { email: 'a@example.com', password: '' },
    status: 400,
  },
  {
    name: 'login with a number as e-mail',
    method: 'POST',
    url: '/api/account/login',
    body: { email: 12, password: 'x' },
    status: 400,
    mentions: 'email',
  },
  {
    name: 'authorizations without grant_type',
    method: 'POST',
    url: '/api/v2/authorizations',
    body: { refresh_token: 'sk_rt_x' },
    status: 400,
  },
  {
    name: 'authorizations with an unknown grant',
    method: 'POST',
    url: '/api/v2/authorizations',
    body: { grant_type: 'password', username: 'a', password: 'b' },
    status: 400,
  },
  {
    name: 'authorizations with an over-long token',
    method: 'POST',
    url: '/api/v2/authorizations',
    body: { grant_type: 'refresh_token', refresh_token: long(600) },
    status: 400,
    mentions: 'refresh_token',
  },
  {
    name: 'authorizations with a numeric token',
    method: 'POST',
    url: '/api/v2/authorizations',
    body: { grant_type: 'auto_login', auto_login_token: 42 },
    status: 400,
  },
  {
    name: 'logout with an over-long token',
    method: 'POST',
    url: '/api/account/logout',
    body: { refresh_token: long(1000) },
    status: 400,
  },
  {
    name: 'notify-email without remind_me',
    method: 'POST',
    url: '/api/users/notify-email',
    as: 'user',
    body: { notify_email: 'a@example.com' },
    status: 400,
    mentions: 'remind_me',
  },
  {
    name: 'notify-email with remind_me 2',
    method: 'POST',
    url: '/api/users/notify-email',
    as: 'user',
    body: { notify_email: 'a@example.com', remind_me: 2 },
    status: 400,
  },
  {
    name: 'notify-email over-long',
    method: 'POST',
    url: '/api/users/notify-email',
    as: 'user',
    body: { notify_email: long(400), remind_me: 1 },
    status: 400,
  },
  { name: 'init with an over-long origin', method: 'GET', url: `/api/v2/init?origin=${long(400)}`, status: 400 },
  // Clouds.
  {
    name: 'connect without credentials',
    method: 'POST',
    url: '/api/clouds',
    as: 'user',
    body: { cloud_name: 'local' },
    status: 400,
    mentions: 'credentials',
  },
  {
    name: 'connect with credentials as a string',
    method: 'POST',
    url: '/api/clouds',
    as: 'user',
    body: { cloud_name: 'local', credentials: 'path=/' },
    status: 400,
  },
  {
    name: 'connect with a nested credential',
    method: 'POST',
    url: '/api/clouds',
    as: 'user',
    body: { cloud_name: 'local', credentials: { path: { a: 1 } } },
    status: 400,
  },
  {
    name: 'connect with an over-long kind',
    method: 'POST',
    url: '/api/clouds',
    as: 'user',
    body: { cloud_name: long(100), credentials: {} },
    status: 400,
  },
  {
    name: 'connect with an over-long alias',
    method: 'POST',
    url: '/api/clouds',
    as: 'user',
    body: { cloud_name: 'local', alias: long(101), credentials: { path: '/' } },
    status: 400,
    mentions: 'alias',
  },
  {
    name: 'connect with an over-long credential',
    method: 'POST',
    url: '/api/clouds',
    as: 'user',
    body: { cloud_name: 'webdav', credentials: { url: 'http://a', password: long(20_000) } },
    status: 400,
  },
  {
    name: 'connect with too many credential fields',
    method: 'POST',
    url: '/api/clouds',
    as: 'user',
    body: {
      cloud_name: 'local',
      credentials: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f${i}`, 'v'])),
    },
    status: 400,
  },
  {
    name: 'connect with a port out of range',
    method: 'POST',
    url: '/api/clouds',
    as: 'user',
    body: { cloud_name: 'sftp', credentials: { host: 'h', username: 'u', port: 70_000 } },
    status: 400,
  },
  {
    name: 'connect over the body limit',
    method: 'POST',
    url: '/api/clouds',
    as: 'visitor',
    body: JSON.stringify({ cloud_name: 'local', credentials: { path: long(70_000) } }),
    status: 413,
  },
  {
    name: 'update with a negative space',
    method: 'PUT',
    url: (i) => `/api/clouds/${i.cloud}`,
    as: 'user',
    body: { space: -1 },
    status: 400,
    mentions: 'space',
  },
  {
    name: 'update with a string space',
    method: 'PUT',
    url: (i) => `/api/clouds/${i.cloud}`,
    as: 'user',
    body: { used_space: 'lots' },
    status: 400,
  },
  {
    name: 'update with an over-long alias',
    method: 'PUT',
    url: (i) => `/api/clouds/${i.cloud}`,
    as: 'user',
    body: { alias: long(101) },
    status: 400,
  },
  {
    name: 'update with an over-long id',
    method: 'PUT',
    url: `/api/clouds/${long(100)}`,
    as: 'user',
    body: { alias: 'a' },
    status: 400,
  },
  {
    name: 'update with malformed JSON',
    method: 'PUT',
    url: (i) => `/api/clouds/${i.cloud}`,
    as: 'user',
    body: '{alias: a}',
    status: 400,
  },
  {
    name: 'sort with a number',
    method: 'PUT',
    url: '/api/clouds/sort',
    as: 'user',
    body: { sort_val: 5 },
    status: 400,
  },
  {
    name: 'sort with a JSON object',
    method: 'PUT',
    url: '/api/clouds/sort',
    as: 'user',
    body: { sort_val: '{"a":1}' },
    status: 400,
    mentions: 'sort_val',
  },
  {
    name: 'sort with objects in the array',
    method: 'PUT',
    url: '/api/clouds/sort',
    as: 'user',
    body: { sort_val: '[{"id":1}]' },
    status: 400,
  },
  {
    name: 'sort with an over-long value',
    method: 'PUT',
    url: '/api/clouds/sort',
    as: 'user',
    body: { sort_val: long(30_000) },
    status: 400,
  },
  {
    name: 'bind with a number',
    method: 'POST',
    url: '/api/clouds/bind',
    as: 'user',
    body: { relation_id: 7 },
    status: 400,
  },
  {
    name: 'bind with an over-long list',
    method: 'POST',
    url: '/api/clouds/bind',
    as: 'user',
    body: { relation_id: long(6000) },
    status: 400,
  },
  {
    name: 'an OAuth sign-in for a cloud whose alias holds a control character',
    method: 'POST',
    url: '/api/clouds/oauth/start',
    as: 'user',
    body: { cloud_name: 'google_drive', alias: 'Work\u0000Drive' },
    status: 400,
    mentions: 'alias',
  },
  {
    name: 'reauthorize without credentials',
    method: 'PUT',
    url: (i) => `/api/clouds/${i.cloud}/credentials`,
    as: 'user',
    body: {},
    status: 400,
  },
  {
    name: 'account page with an over-long language',
    method: 'GET',
    url: `/account/signin?lang=${long(50)}`,
    status: 400,
  },
];

describe('bad input gets the envelope with a clear message and a 4xx status, never a 500', () => {
  let t: TestApp;
  let user: SignedUpUser;
  let visitor: TestVisitor;
  const ids = { cloud: '' };

  beforeAll(async () => {
    t = await startTestApp();
    user = await t.signUp();
    visitor = await t.visitor();
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/clouds',
      headers: user.headers,
      payload: { cloud_name: 'local', credentials: { path: t.makeLocalFolder() } },
    });
    ids.cloud = (JSON.parse(res.body) as { data: { id: string } }).data.id;
  });
  afterAll(async () => {
    await t?.close();
  });

  for (const c of CASES) {
    it(c.name, async () => {
      const headers: Record<string, string> =
        c.as === 'user' ? { ...user.headers } : c.as === 'visitor' ? { ...visitor.headers } : {};
      let payload: string | undefined;
      if (typeof c.body === 'string') {
        payload = c.body;
        headers['content-type'] = c.type ?? 'application/json';
      } else if (c.body !== undefined) {
        payload = JSON.stringify(c.body);
        headers['content-type'] = 'application/json';
      }
      const res = await t.app.inject({
        method: c.method,
        url: typeof c.url === 'function' ? c.url(ids) : c.url,
        headers,
        ...(payload === undefined ? {} : { payload }),
      });
      expect(res.statusCode).toBe(c.status);
      expect(res.headers['content-type']).toContain('application/json');
      const body = JSON.parse(res.body) as { code: number; msg: string; data: unknown };
      expect(body.code).not.toBe(0);
      expect(body.msg.length).toBeGreaterThan(5);
      expect(body).toHaveProperty('data');
      if (c.mentions) expect(body.msg).toContain(c.mentions);
    });
  }

  it('left nothing behind: the log has no unhandled error', () => {
    expect(t.logs()).not.toContain('unhandled error');
  });
});

/**
 * The same promise for every call the server documents, including those added after the account
 * calls (tasks, clean-up, files, uploads, OAuth): the walk reads the OpenAPI document, so a new call
 * is covered as soon as it exists. Each JSON body gets malformed JSON, the wrong JSON types and a body
 * over the largest limit; each query parameter gets an over-long value and a repeated one. The calls
 * are sent by the user who owns the cloud whose id fills the paths, by an anonymous visitor, and by
 * a second user (both on the first user's ids).
 */
const SENDERS = ['its owner', 'a visitor', 'a second user'];

describe.each(SENDERS)('every documented call, sent by %s: a 4xx envelope, never a 500', (as) => {
  let t: TestApp;
  let user: SignedUpUser;
  let cloudId = '';
  let operations: Awaited<ReturnType<typeof documentedOperations>> = [];
  /** The sender's credentials (an object the sweeps copy). */
  const sender = { headers: {} as Record<string, string> };

  beforeAll(async () => {
    // With an office server configured, so the WOPI calls are on (and checked here) rather than 404.
    t = await startTestApp({ env: { SKYFERRY_WOPI_CLIENT_URL: 'https://office.example.test' } });
    user = await t.signUp();
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/clouds',
      headers: user.headers,
      payload: { cloud_name: 'local', credentials: { path: t.makeLocalFolder() } },
    });
    cloudId = (JSON.parse(res.body) as { data: { id: string } }).data.id;
    if (as === 'its owner') sender.headers = user.headers;
    else sender.headers = as === 'a visitor' ? (await t.visitor()).headers : (await t.signUp()).headers;
    operations = await documentedOperations(t.app);
  });
  afterAll(async () => {
    await t?.close();
  });

  /** The path with the first user's cloud id in every parameter (so only the bad part can fail for its owner). */
  const urlOf = (path: string) => path.replace(/\{[^}]+\}/g, cloudId);

  /** Empty when the answer is a 4xx envelope (with `status` if given); otherwise what is wrong. */
  function problem(res: { statusCode: number; body: string; headers: Record<string, unknown> }, status?: number) {
    if (res.statusCode >= 500 || res.statusCode < 400) return `HTTP ${res.statusCode}: ${res.body.slice(0, 200)}`;
    if (status !== undefined && res.statusCode !== status) return `HTTP ${res.statusCode}, expected ${status}`;
    if (!String(res.headers['content-type']).includes('application/json')) return `not JSON: ${res.body.slice(0, 80)}`;
    const body = JSON.parse(res.body) as { code?: number; msg?: string };
    if (!body.code || typeof body.msg !== 'string' || body.msg.length < 5) return `not an error envelope: ${res.body}`;
    return '';
  }

  it('walks the whole API (the account, cloud, file, task and clean-up calls are all documented)', () => {
    const names = operations.map((o) => `${o.method} ${o.path}`);
    for (const expected of [
      'POST /api/account/signup',
      'PUT /api/clouds/{id}',
      'POST /api/cloud-manager/list',
      'POST /api/cloud-manager/uploads',
      'POST /api/tasks',
      'POST /api/cleanup/run',
      'POST /api/clouds/oauth/start',
    ]) {
      expect(names).toContain(expected);
    }
    expect(operations.filter((o) => o.op.requestBody?.content?.['application/json']).length).toBeGreaterThan(20);
  });

  /** Calls whose whole body is optional (null or unknown fields mean "no body"). */
  const OPTIONAL_BODY = new Set(['POST /api/account/logout']);
  /** Calls whose body may be larger than 1 MB (a ticket carries its attachments, an export its file): any 4xx for the padded one. */
  const LARGE_BODY = new Set([
    'POST /v1/support/tickets',
    // An export carries its file inline (16 MB in base64).
    'POST /api/third-api/start-upload',
  ]);
  /** `optionalOk`: a call of OPTIONAL_BODY may take this as "no body" and succeed. */
  const BODIES: Array<{ name: string; payload: string; status?: number; optionalOk?: boolean }> = [
    { name: 'malformed JSON', payload: '{"cloud_id": "x", ' },
    // Logout takes an empty body as "no body" (issue 44): logging out must always work.
    { name: 'an empty JSON body', payload: '', optionalOk: true },
    { name: 'a JSON array', payload: '[1, 2]' },
    { name: 'a JSON string', payload: '"hello"' },
    { name: 'JSON null', payload: 'null', optionalOk: true },
    {
      name: 'fields of the wrong types',
      payload: JSON.stringify({ cloud_id: 5, path: [], page: 'one', task_id: {} }),
      optionalOk: true,
    },
    { name: 'a body over the limit', payload: JSON.stringify({ pad: 'x'.repeat(1024 * 1024 + 1) }), status: 413 },
  ];

  for (const bad of BODIES) {
    it(`answers ${bad.name} on every JSON call with a 4xx envelope`, async () => {
      const failures: string[] = [];
      for (const { method, path, op } of operations) {
        if (!op.requestBody?.content?.['application/json']) continue;
        const res = await t.app.inject({
          method,
          url: urlOf(path),
          headers: { ...sender.headers, 'content-type': 'application/json' },
          payload: bad.payload,
        });
        if (bad.optionalOk && OPTIONAL_BODY.has(`${method} ${path}`) && res.statusCode === 200) continue;
        const wrong = problem(res, LARGE_BODY.has(`${method} ${path}`) ? undefined : bad.status);
        if (wrong) failures.push(`${method} ${path}: ${wrong}`);
      }
      expect(failures).toEqual([]);
    });
  }

  it('answers over-long and repeated query parameters on every call with a 4xx envelope or a normal answer', async () => {
    const failures: string[] = [];
    for (const { method, path, op } of operations) {
      const query = (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
      for (const name of query) {
        for (const value of [
          `${name}=${'x'.repeat(10_000)}`,
          `${name}=a&${name}=b`,
          `${name}=%00%ff`,
          `${name}[a]=1`,
        ]) {
          const res = await t.app.inject({ method, url: `${urlOf(path)}?${value}`, headers: sender.headers });
          if (res.statusCode >= 500) failures.push(`${method} ${path}?${value.slice(0, 40)}: HTTP ${res.statusCode}`);
          else if (res.statusCode >= 400 && problem(res)) failures.push(`${method} ${path}: ${problem(res)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('answers over-long path parameters on every call with a 4xx envelope', async () => {
    const failures: string[] = [];
    for (const { method, path } of operations) {
      if (!path.includes('{')) continue;
      for (const id of ['x'.repeat(300), 'x'.repeat(600), '%00', '..%2F..%2Fetc', '%E0%A4%A']) {
        const res = await t.app.inject({
          method,
          url: path.replace(/\{[^}]+\}/g, id),
          headers: { ...sender.headers, 'content-type': 'application/json' },
          ...(method === 'GET' ? {} : { payload: '{}' }),
        });
        const wrong = problem(res);
        if (wrong) failures.push(`${method} ${path} (${id.slice(0, 12)}): ${wrong}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('left no unhandled error in the log', () => {
    expect(t.logs()).not.toContain('unhandled error');
  });
});
