import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Code, message, ok, type Envelope } from '@skyferry/contract';
import type { App } from '../src/http/app-types.ts';
import { ApiError, errors } from '../src/http/errors.ts';
import { createTestContext, type TestContext } from './support/context.ts';

/**
 * The HTTP foundation every route builds on, on both databases: health, the OpenAPI document and
 * reference page, envelope errors in the caller's language with the right status and never a stack
 * trace, security headers, and the web app with its history-mode fallback.
 */

interface Reply {
  statusCode: number;
  body: string;
  headers: Record<string, string | string[] | number | undefined>;
}

const json = <T = unknown>(res: Reply) => JSON.parse(res.body) as Envelope<T>;

/** Nothing that looks like a stack frame, a source file or an internal error name. */
function expectNoStack(body: string): void {
  expect(body).not.toMatch(/\n\s+at\s/);
  expect(body).not.toMatch(/\bat\s+\S+\s+\(.*:\d+:\d+\)/);
  expect(body).not.toMatch(/\.ts:\d+|\.js:\d+|node:internal|node_modules/);
  expect(body).not.toMatch(/"stack"|FST_ERR|SyntaxError|TypeError/);
}

function expectErrorEnvelope(res: Reply, status: number, code: number): Envelope<unknown> {
  expect(res.statusCode).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
  const body = json(res);
  expect(Object.keys(body).sort()).toEqual(['code', 'data', 'msg', 'request_id']);
  // The id the answer's X-Request-Id header and the server's log lines carry.
  expect((body as { request_id?: unknown }).request_id).toBe(res.headers['x-request-id']);
  expect(body.code).toBe(code);
  expect(body.code).not.toBe(0);
  expect(typeof body.msg).toBe('string');
  expect(body.msg.length).toBeGreaterThan(0);
  expectNoStack(res.body);
  return body;
}

function expectSecurityHeaders(res: Reply): void {
  const csp = String(res.headers['content-security-policy'] ?? '');
  expect(csp).toMatch(/frame-ancestors\s+[^;]+/);
  expect(csp).toContain("default-src 'self'");
  expect(csp).toContain("object-src 'none'");
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.headers['referrer-policy']).toBe('strict-origin-when-cross-origin');
}

/** Test-only routes added to the built app before it is ready: they exercise the error handling. */
function addTestRoutes(app: App): void {
  app.post(
    '/api/test/echo',
    { schema: { body: z.object({ name: z.string().min(1), count: z.number().int() }) } },
    async (request) => ok(request.body),
  );
  app.get('/api/test/crash', async () => {
    throw new Error('kaboom: password=hunter2 at /srv/secret/file.ts:12:3');
  });
  app.get('/api/test/type-error', async () => {
    const value = JSON.parse('null') as { deep: { field: string } };
    return ok(value.deep.field);
  });
  app.get('/api/test/api-error', async () => {
    throw errors.notFound('task_not_found');
  });
  app.get('/api/test/confirm', async () => {
    throw new ApiError(Code.CONFIRM_DELETIONS, 'confirm_deletions', { count: 3, total: 5 }, { count: 3, total: 5 });
  });
  app.get('/api/test/log-secrets', async (request) => {
    request.log.info(
      { token: 'tok-SECRET-1', user: { password: 'pw-SECRET-2', access_token: 'at-SECRET-3' } },
      'logging secrets',
    );
    return ok(null);
  });
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`HTTP foundation [${dialect}]`, () => {
    let t: TestContext;
    let app: App;

    beforeAll(async () => {
      t = await createTestContext({ dialect });
      app = await t.buildApp();
      addTestRoutes(app);
      await app.ready();
    });
    afterAll(async () => {
      await t?.cleanup();
    });

    describe('/healthz', () => {
      it('answers the success envelope with the database in use', async () => {
        const res = await app.inject({ method: 'GET', url: '/healthz' });
        expect(res.statusCode).toBe(200);
        expect(json(res)).toEqual({ code: 0, msg: 'success', data: { status: 'ok', database: dialect } });
        expectSecurityHeaders(res);
      });
    });

    describe('OpenAPI', () => {
      it('publishes a valid OpenAPI 3.1 document listing /healthz', async () => {
        const res = await app.inject({ method: 'GET', url: '/api/openapi.json' });
        expect(res.statusCode).toBe(200);
        expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
        const doc = JSON.parse(res.body) as {
          openapi: string;
          info: { title: string; version: string; description: string };
          paths: Record<string, Record<string, unknown>>;
        };
        expect(doc.openapi).toMatch(/^3\.1\./);
        expect(doc.info.title).toBe('Skyferry API');
        expect(doc.info.version).toBe('1.7.8');
        expect(doc.info.description).toContain(String(Code.LICENSE_EXPIRED));
        expect(doc.paths['/healthz']?.get).toBeDefined();
        expect(doc.paths['/api/openapi.json']).toBeUndefined();
        const validator = new Validator();
        const result = await validator.validate(doc as unknown as Record<string, unknown>);
        expect(result.errors ?? []).toEqual([]);
        expect(result.valid).toBe(true);
        expect(validator.version).toBe('3.1');
      });

      it('serves the reference page at /api/docs with its own assets', async () => {
        let res = await app.inject({ method: 'GET', url: '/api/docs' });
        if (res.statusCode >= 300 && res.statusCode < 400) {
          res = await app.inject({ method: 'GET', url: String(res.headers.location) });
        }
        expect(res.statusCode).toBe(200);
        expect(String(res.headers['content-type'])).toMatch(/^text\/html/);
        expect(res.body.toLowerCase()).toContain('swagger');
        expect(res.headers['x-content-type-options']).toBe('nosniff');
        const script = /src="\.?\/?([^"]*swagger-ui-bundle\.js)"/.exec(res.body)?.[1];
        expect(script).toBeDefined();
        const asset = await app.inject({
          method: 'GET',
          url: `/api/docs/${script?.replace(/^.*?static\//, 'static/')}`,
        });
        expect(asset.statusCode).toBe(200);
        expect(String(asset.headers['content-type'])).toMatch(/javascript/);
      });
    });

    describe('unknown API paths', () => {
      it('answer 404 with the envelope in the requested language', async () => {
        const res = await app.inject({
          method: 'GET',
          url: '/api/no/such/call?token=abc',
          headers: { 'x-language': 'de' },
        });
        const body = expectErrorEnvelope(res, 404, Code.NOT_FOUND);
        expect(body.msg).toBe(message('de', 'route_not_found', { method: 'GET', path: '/api/no/such/call' }));
        expect(body.msg).not.toBe(message('en', 'route_not_found', { method: 'GET', path: '/api/no/such/call' }));
        expect(body.data).toBeNull();
        expectSecurityHeaders(res);
        expect(res.headers['cache-control']).toBe('no-store');
      });

      it('follow Accept-Language when there is no language header', async () => {
        const res = await app.inject({
          method: 'DELETE',
          url: '/api/nothing',
          headers: { 'accept-language': 'ja-JP, en;q=0.5' },
        });
        const body = expectErrorEnvelope(res, 404, Code.NOT_FOUND);
        expect(body.msg).toBe(message('ja', 'route_not_found', { method: 'DELETE', path: '/api/nothing' }));
      });

      it('speak English for a language we do not have', async () => {
        const res = await app.inject({ method: 'GET', url: '/api/nothing', headers: { 'x-language': 'tlh' } });
        expect(json(res).msg).toBe(message('en', 'route_not_found', { method: 'GET', path: '/api/nothing' }));
      });

      it.each(['/api', '/api/', '/healthz/extra', '/v1/support/nothing', '/ecology/v1/nothing'])(
        'GET %s is an API 404, not the web app',
        async (url) => {
          const res = await app.inject({ method: 'GET', url });
          expectErrorEnvelope(res, 404, Code.NOT_FOUND);
        },
      );

      it('answer a path parameter over the router limit with the 414 envelope, not Fastify’s own error', async () => {
        const res = await app.inject({
          method: 'GET',
          url: `/api/tasks/${'x'.repeat(600)}`,
          headers: { 'x-language': 'de' },
        });
        const body = expectErrorEnvelope(res, 414, Code.BAD_REQUEST);
        expect(body.msg).toBe(message('de', 'invalid_request', { detail: 'path too long' }));
        expect(res.body).not.toContain('xxxxxxxx');
        expectSecurityHeaders(res);
      });

      it('answer a path that is not valid percent-encoding with the 400 envelope', async () => {
        const res = await app.inject({ method: 'DELETE', url: '/api/clouds/%E0%A4%A' });
        const body = expectErrorEnvelope(res, 400, Code.BAD_REQUEST);
        expect(body.msg).toBe(message('en', 'invalid_request', { detail: 'malformed URL' }));
        expectSecurityHeaders(res);
      });

      it('answer any method on a non-API path with the 404 envelope', async () => {
        const res = await app.inject({ method: 'POST', url: '/transfer', payload: {} });
        expectErrorEnvelope(res, 404, Code.NOT_FOUND);
      });
    });

    describe('request bodies', () => {
      it('passes a valid JSON body to the route', async () => {
        const res = await app.inject({ method: 'POST', url: '/api/test/echo', payload: { name: 'a', count: 2 } });
        expect(res.statusCode).toBe(200);
        expect(json(res)).toEqual({ code: 0, msg: 'success', data: { name: 'a', count: 2 } });
      });

      it('answers malformed JSON with a 400 envelope', async () => {
        const res = await app.inject({
          method: 'POST',
          url: '/api/test/echo',
          headers: { 'content-type': 'application/json', 'x-language': 'fr' },
          payload: '{"name": "a", "count": ',
        });
        const body = expectErrorEnvelope(res, 400, Code.BAD_REQUEST);
        expect(body.msg).toBe(message('fr', 'invalid_json'));
      });

      it('answers an empty JSON body with a 400 envelope', async () => {
        const res = await app.inject({
          method: 'POST',
          url: '/api/test/echo',
          headers: { 'content-type': 'application/json' },
          payload: '',
        });
        const body = expectErrorEnvelope(res, 400, Code.BAD_REQUEST);
        expect(body.msg).toBe(message('en', 'invalid_json'));
      });

      it('answers a body over the limit with a 413 envelope', async () => {
        const payload = JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 1), count: 1 });
        const res = await app.inject({
          method: 'POST',
          url: '/api/test/echo',
          headers: { 'content-type': 'application/json', 'x-language': 'es' },
          payload,
        });
        const body = expectErrorEnvelope(res, 413, Code.PAYLOAD_TOO_LARGE);
        expect(body.msg).toBe(message('es', 'body_too_large'));
      });

      it('answers a schema violation with a 400 envelope naming the fields', async () => {
        const res = await app.inject({
          method: 'POST',
          url: '/api/test/echo',
          headers: { 'x-language': 'en' },
          payload: { name: '', count: 1.5 },
        });
        const body = expectErrorEnvelope(res, 400, Code.BAD_REQUEST);
        expect(body.msg.startsWith('The request is invalid: ')).toBe(true);
        expect(body.msg).toContain('body.name');
        expect(body.msg).toContain('body.count');
      });

      it('answers an unsupported content type with a 4xx envelope', async () => {
        const res = await app.inject({
          method: 'POST',
          url: '/api/test/echo',
          headers: { 'content-type': 'application/xml' },
          payload: '<a/>',
        });
        expect(res.statusCode).toBeGreaterThanOrEqual(400);
        expect(res.statusCode).toBeLessThan(500);
        expect(json(res).code).not.toBe(0);
        expectNoStack(res.body);
      });
    });

    describe('errors thrown by routes', () => {
      it('turn an ApiError into its code, status and translated message', async () => {
        const res = await app.inject({ method: 'GET', url: '/api/test/api-error', headers: { 'x-language': 'ko' } });
        const body = expectErrorEnvelope(res, 404, Code.NOT_FOUND);
        expect(body.msg).toBe(message('ko', 'task_not_found'));
      });

      it('carry the data a confirmation needs', async () => {
        const res = await app.inject({ method: 'GET', url: '/api/test/confirm', headers: { 'x-language': 'nl' } });
        const body = expectErrorEnvelope(res, 409, Code.CONFIRM_DELETIONS);
        expect(body.msg).toBe(message('nl', 'confirm_deletions', { count: 3, total: 5 }));
        expect(body.data).toEqual({ count: 3, total: 5 });
      });

      it('hide an unexpected error behind a 500 envelope, logging it', async () => {
        const res = await app.inject({ method: 'GET', url: '/api/test/crash', headers: { 'x-language': 'it' } });
        const body = expectErrorEnvelope(res, 500, Code.INTERNAL);
        expect(body.msg).toBe(message('it', 'server_error'));
        expect(res.body).not.toContain('kaboom');
        expect(res.body).not.toContain('hunter2');
        expect(t.logs()).toContain('kaboom');
        expectSecurityHeaders(res);
      });

      it('hide a TypeError the same way', async () => {
        const res = await app.inject({ method: 'GET', url: '/api/test/type-error' });
        const body = expectErrorEnvelope(res, 500, Code.INTERNAL);
        expect(body.msg).toBe(message('en', 'server_error'));
        expect(res.body).not.toMatch(/deep|Cannot read|properties/i);
      });
    });

    describe('logs', () => {
      it('keep query strings and authorization headers out', async () => {
        await app.inject({
          method: 'GET',
          url: '/api/nothing?access_token=query-SECRET',
          headers: { authorization: 'Bearer header-SECRET', 'x-temp-authorization': 'temp-SECRET' },
        });
        expect(t.logs()).toContain('/api/nothing');
        expect(t.logs()).not.toContain('query-SECRET');
        expect(t.logs()).not.toContain('header-SECRET');
        expect(t.logs()).not.toContain('temp-SECRET');
      });

      it('redact secret fields a route logs', async () => {
        await app.inject({ method: 'GET', url: '/api/test/log-secrets' });
        expect(t.logs()).toContain('logging secrets');
        expect(t.logs()).not.toMatch(/SECRET-[123]/);
        expect(t.logs()).toContain('[redacted]');
      });
    });

    describe('without a built web app', () => {
      it('explains how to build it instead of a blank page', async () => {
        const res = await app.inject({ method: 'GET', url: '/transfer' });
        expect(res.statusCode).toBe(503);
        expect(res.body).toContain('npm run build');
        expectNoStack(res.body);
        expectSecurityHeaders(res);
      });
    });
  });

  describe(`web app serving [${dialect}]`, () => {
    const INDEX = '<!doctype html><html><head><title>Skyferry</title></head><body><div id="root"></div></body></html>';
    let dist: string;
    let t: TestContext;
    let app: App;

    beforeAll(async () => {
      dist = mkdtempSync(join(tmpdir(), 'skyferry-dist-'));
      mkdirSync(join(dist, 'assets'));
      writeFileSync(join(dist, 'index.html'), INDEX);
      writeFileSync(join(dist, 'assets', 'index-abc123.js'), 'console.log("app");');
      writeFileSync(join(dist, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
      t = await createTestContext({ dialect, env: { SKYFERRY_WEB_DIST: dist } });
      app = await t.buildApp();
      await app.ready();
    });
    afterAll(async () => {
      await t?.cleanup();
      rmSync(dist, { recursive: true, force: true });
    });

    it.each([
      '/',
      '/transfer',
      '/sync',
      '/manage/explorer?cloud_index=2&is_open=1&_=1719000000000',
      '/slim/explore',
      '/ecology/app?app_id=12-x&function_id=3',
      '/callback-login',
      '/error?src=boom',
      '/some/unknown/client/route',
    ])('serves index.html for %s', async (url) => {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(200);
      expect(String(res.headers['content-type'])).toMatch(/^text\/html/);
      expect(res.body).toBe(INDEX);
      expect(res.headers['cache-control']).toBe('no-cache');
      expectSecurityHeaders(res);
    });

    it('serves built assets with long caching', async () => {
      const res = await app.inject({ method: 'GET', url: '/assets/index-abc123.js' });
      expect(res.statusCode).toBe(200);
      expect(String(res.headers['content-type'])).toMatch(/javascript/);
      expect(res.body).toBe('console.log("app");');
      expect(res.headers['cache-control']).toContain('immutable');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    });

    it('serves other files of the build', async () => {
      const res = await app.inject({ method: 'GET', url: '/favicon.svg' });
      expect(res.statusCode).toBe(200);
      expect(String(res.headers['content-type'])).toMatch(/image\/svg\+xml/);
    });

    it('answers a missing asset with 404, not the HTML page', async () => {
      const res = await app.inject({ method: 'GET', url: '/assets/index-old999.js' });
      expect(res.statusCode).toBe(404);
      expect(res.body).not.toBe(INDEX);
    });

    it('keeps API paths out of the fallback', async () => {
      const res = await app.inject({ method: 'GET', url: '/api/unknown', headers: { 'x-language': 'ar' } });
      const body = expectErrorEnvelope(res, 404, Code.NOT_FOUND);
      expect(body.msg).toBe(message('ar', 'route_not_found', { method: 'GET', path: '/api/unknown' }));
    });

    it('does not serve files outside the build', async () => {
      for (const url of ['/../package.json', '/assets/../../secret', '/%2e%2e/%2e%2e/etc/passwd']) {
        const res = await app.inject({ method: 'GET', url });
        expect(res.body, url).not.toContain('"name"');
        expect(res.body, url).not.toContain('root:');
      }
    });
  });
}
