import type { IncomingMessage } from 'node:http';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  EMBEDDED_HOST_HEADERS,
  HEADERS,
  baseName,
  appConvertBodySchema,
  appFileInfoSchema,
  appFileParamSchema,
  appFilesDataSchema,
  appIdParamSchema,
  appSaveAsQuerySchema,
  appsDataSchema,
  appsQuerySchema,
  appTokenBodySchema,
  appTokenDataSchema,
  appTokenRevokeBodySchema,
  ecologyAppSchema,
  envelopeOf,
  externalAppBodySchema,
  myAppsDataSchema,
  officeOpenBodySchema,
  officeOpenDataSchema,
  ok,
  operatorAppsDataSchema,
} from '@skyferry/contract';
import { publicBase } from '../../account-pages/origins.ts';
import type { AppContext } from '../../context.ts';
import { officeFrameUrl } from '../../services/ecology/index.ts';
import type { AppTokenOwner } from '../../services/ecology/index.ts';
import type { App } from '../app-types.ts';
import { bearerToken, identityOf, requireIdentity, requireUser, userOf, type Identity } from '../auth.ts';
import { errors } from '../errors.ts';
import { abortOnClose, declaredLength, detachedBody, sendFile } from './files.ts';

const JSON_BODY = 64 * 1024;
const OPERATOR_BODY = 256 * 1024;
const userSecurity: Array<Record<string, string[]>> = [{ bearer: [] }];
const identitySecurity: Array<Record<string, string[]>> = [{ bearer: [] }, { temp: [] }];
const appSecurity: Array<Record<string, string[]>> = [{ appToken: [] }];
/** The calls an embedded app makes with its app token (from any origin: they carry no cookie). */
export const APP_API_PREFIX = '/ecology/v1/app/';

/** What an app's cross-origin calls may send: its token, ranges and conditions, and the embedded-app host client's headers. */
const APP_ALLOWED_HEADERS = [
  'authorization',
  'content-type',
  'range',
  'if-match',
  'if-range',
  HEADERS.language,
  ...Object.values(EMBEDDED_HOST_HEADERS),
].join(', ');

const appTokenQuerySchema = z.object({
  /** The app token, for addresses a page cannot add headers to (<img>, <video>). */
  app_token: z.string().max(200).optional(),
});

function ownerOf(identity: Identity): AppTokenOwner {
  return identity.kind === 'user'
    ? { kind: 'user', userId: identity.userId, sessionId: identity.sessionId }
    : { kind: 'visitor', visitorId: identity.visitorId };
}

/** The app token of a call: Authorization: Bearer sk_app_..., else the app_token query parameter. */
function appTokenOf(request: FastifyRequest): string | undefined {
  const raw = request.headers.authorization;
  const header = bearerToken(Array.isArray(raw) ? raw[0] : raw);
  return header || (request.query as { app_token?: string } | undefined)?.app_token;
}

function rawBody(request: FastifyRequest): IncomingMessage {
  const body = request.body as IncomingMessage | undefined;
  if (!body || typeof (body as { pipe?: unknown }).pipe !== 'function')
    throw errors.badRequest('invalid_request', { detail: 'no body' });
  return body;
}

/**
 * The embedded-app host client says json on every call (spec section 7), the usage call's empty
 * body included: an empty body is no body, not a JSON syntax error.
 */
async function emptyJsonIsNoBody(request: FastifyRequest): Promise<void> {
  const length = request.headers['content-length'];
  if ((length === undefined || length === '0') && request.headers['transfer-encoding'] === undefined)
    delete request.headers['content-type'];
}

export default async function ecologyRoutes(app: App, ctx: AppContext): Promise<void> {
  const eco = ctx.ecology;

  app.get(
    '/ecology/v1/apps',
    {
      schema: {
        tags: ['apps'],
        summary: 'The app registry: the first-party apps, then those the operator registered',
        description: 'No authentication needed. Office-type apps (state 2) only with show_office=1.',
        querystring: appsQuerySchema,
        response: { 200: envelopeOf(appsDataSchema) },
      },
    },
    async (request) => ok({ items: await eco.list(request.query.show_office === '1') }),
  );

  app.get(
    '/ecology/v1/apps/me',
    {
      preHandler: requireUser(ctx),
      schema: {
        tags: ['apps'],
        summary: 'The apps the signed-in user opened, most recently used first (140013 for visitors)',
        security: userSecurity,
        response: { 200: envelopeOf(myAppsDataSchema) },
      },
    },
    async (request) => ok(await eco.mine(userOf(request).userId)),
  );

  app.get(
    '/ecology/v1/apps/:appId',
    {
      schema: {
        tags: ['apps'],
        summary: 'One app of the registry (the detail page); 404 for an id nobody registered',
        params: appIdParamSchema,
        response: { 200: envelopeOf(ecologyAppSchema) },
      },
    },
    async (request) => ok(await eco.get(request.params.appId)),
  );

  app.put(
    '/ecology/v1/apps/usage/:appId',
    {
      onRequest: emptyJsonIsNoBody,
      preHandler: requireUser(ctx),
      schema: {
        tags: ['apps'],
        summary: 'The signed-in user opened the app (no payload); feeds GET /ecology/v1/apps/me',
        security: userSecurity,
        params: appIdParamSchema,
        response: { 200: envelopeOf(z.null()) },
      },
    },
    async (request) => {
      await eco.recordUse(userOf(request).userId, request.params.appId);
      return ok(null);
    },
  );

  app.post(
    '/ecology/v1/app-tokens',
    {
      bodyLimit: 512 * 1024,
      preHandler: requireIdentity(ctx),
      schema: {
        tags: ['apps'],
        summary: 'A token for an embedded app, reaching only the files given (of the caller’s own clouds)',
        description:
          'The host asks for it when it opens a file with an app and hands it to the app instead of the account ' +
          'token. It reads the files (and writes them, for an app that edits or converts) through ' +
          '/ecology/v1/app/*, nothing else; it ends with logout, on POST /ecology/v1/app-tokens/revoke, or after 12 hours. ' +
          '400 when a file’s type is not one the app accepts; 404 for a cloud that is not the caller’s.',
        security: identitySecurity,
        body: appTokenBodySchema,
        response: { 200: envelopeOf(appTokenDataSchema) },
      },
    },
    async (request) => {
      const b = request.body;
      return ok(await eco.issueToken(ownerOf(identityOf(request)), b.app_id, b.files));
    },
  );

  app.post(
    '/ecology/v1/office/open',
    {
      bodyLimit: 64 * 1024,
      preHandler: requireIdentity(ctx),
      schema: {
        tags: ['apps'],
        summary: 'Open one file with an operator’s office-type app (state 2) through the WOPI host',
        description:
          'Data: url (the app’s address, then the office name and the encoded WOPI access token as a path, WOPISrc in ' +
          'the query), office {name, token}, wopi_src, access_token_ttl and file_name (for the POST to the office ' +
          'service when the app closes). 400 when the app is not an office app or takes no file of that type; 404 ' +
          'for a file that is not the caller’s.',
        security: identitySecurity,
        body: officeOpenBodySchema,
        response: { 200: envelopeOf(officeOpenDataSchema) },
      },
    },
    async (request) => {
      const b = request.body;
      const { app: office, url, edits } = await eco.officeFunction(b.app_id, b.path);
      const wopiBase = `${publicBase(ctx.config, request)}/wopi`;
      const session = await ctx.wopi.openSession(
        identityOf(request),
        { cloud_id: b.cloud_id },
        b.path,
        edits ? 'edit' : 'view',
        wopiBase,
        { appId: office.app_id, url },
      );
      const name = office.office?.name ?? office.name;
      return ok({
        url: officeFrameUrl(url, name, session.access_token, session.wopi_src),
        office: { name, token: session.access_token },
        wopi_src: session.wopi_src,
        access_token_ttl: session.access_token_ttl,
        file_name: baseName(b.path),
      });
    },
  );

  app.post(
    '/ecology/v1/app-tokens/revoke',
    {
      bodyLimit: JSON_BODY,
      preHandler: requireIdentity(ctx),
      schema: {
        tags: ['apps'],
        summary: 'Ends an app token at once (the host closed the app); someone else’s token is left alone',
        security: identitySecurity,
        body: appTokenRevokeBodySchema,
        response: { 200: envelopeOf(z.null()) },
      },
    },
    async (request) => {
      await eco.revokeToken(ownerOf(identityOf(request)), request.body.token);
      return ok(null);
    },
  );

  // The operator's registrations.
  app.get(
    '/api/operator/apps',
    {
      preHandler: requireUser(ctx),
      schema: {
        tags: ['operator'],
        summary: 'The external apps the operator registered (403005 for anyone else)',
        security: userSecurity,
        response: { 200: envelopeOf(operatorAppsDataSchema) },
      },
    },
    async (request) => ok({ items: await eco.listExternal(userOf(request)) }),
  );

  app.post(
    '/api/operator/apps',
    {
      bodyLimit: OPERATOR_BODY,
      preHandler: requireUser(ctx),
      schema: {
        tags: ['operator'],
        summary: 'Register an external app: name, icon, address, the file types and functions it accepts',
        description:
          'Operators only (403005 otherwise). The origin of `url` is the only one whose window messages the host ' +
          'accepts from the app, and is added to the pages’ frame-src; every function must be on it (400).',
        security: userSecurity,
        body: externalAppBodySchema,
        response: { 200: envelopeOf(ecologyAppSchema) },
      },
    },
    async (request) => ok(await eco.register(userOf(request), request.body)),
  );

  app.put(
    '/api/operator/apps/:appId',
    {
      bodyLimit: OPERATOR_BODY,
      preHandler: requireUser(ctx),
      schema: {
        tags: ['operator'],
        summary: 'Change an external app (the same fields as registering it)',
        security: userSecurity,
        params: appIdParamSchema,
        body: externalAppBodySchema,
        response: { 200: envelopeOf(ecologyAppSchema) },
      },
    },
    async (request) => ok(await eco.update(userOf(request), request.params.appId, request.body)),
  );

  app.delete(
    '/api/operator/apps/:appId',
    {
      preHandler: requireUser(ctx),
      schema: {
        tags: ['operator'],
        summary: 'Remove an external app; its tokens stop working at once',
        security: userSecurity,
        params: appIdParamSchema,
        response: { 200: envelopeOf(z.null()) },
      },
    },
    async (request) => {
      await eco.remove(userOf(request), request.params.appId);
      return ok(null);
    },
  );

  // What embedded apps call with their app token.
  await app.register(async (scoped) => {
    const api = scoped as unknown as App;
    // Text too arrives as a stream (an editor saves text/markdown, text/plain...).
    api.removeContentTypeParser('text/plain');
    api.addContentTypeParser('application/octet-stream', (_request, payload, done) => done(null, payload));
    api.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    registerAppFileRoutes(api, ctx);
  });
}

function registerAppFileRoutes(app: App, ctx: AppContext): void {
  const eco = ctx.ecology;
  const appCall = async (request: FastifyRequest) => eco.resolve(appTokenOf(request));

  // Apps run in frames of other origins (first-party ones in an opaque sandbox): they may call
  // these from anywhere, with the app token, never with cookies.
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.url.startsWith(APP_API_PREFIX)) {
      reply.header('access-control-allow-origin', '*');
      reply.header('access-control-expose-headers', 'content-range, content-length, accept-ranges, etag');
    }
    return payload;
  });
  app.options(`${APP_API_PREFIX}*`, { schema: { hide: true } }, async (_request, reply) => {
    reply.header('access-control-allow-methods', 'GET, PUT, POST');
    reply.header('access-control-allow-headers', APP_ALLOWED_HEADERS);
    reply.header('access-control-max-age', '600');
    return reply.status(204).send();
  });

  app.get(
    `${APP_API_PREFIX}files`,
    {
      schema: {
        tags: ['apps'],
        summary: 'The files the caller’s app token reaches (140013 for any other credential)',
        security: appSecurity,
        querystring: appTokenQuerySchema,
        response: { 200: envelopeOf(appFilesDataSchema) },
      },
    },
    async (request) => {
      const c = await appCall(request);
      return ok({ app_id: c.appId, files: eco.fileList(c) });
    },
  );

  app.get(
    `${APP_API_PREFIX}files/:fileId`,
    {
      schema: {
        tags: ['apps'],
        summary: 'A file of the app token as it is now: size, time, type and the ETag a save sends back',
        security: appSecurity,
        params: appFileParamSchema,
        querystring: appTokenQuerySchema,
        response: { 200: envelopeOf(appFileInfoSchema) },
      },
    },
    async (request) => ok(await eco.info(await appCall(request), request.params.fileId)),
  );

  app.get(
    `${APP_API_PREFIX}files/:fileId/content`,
    {
      schema: {
        tags: ['apps'],
        summary: 'The bytes of a file of the app token, streamed (HTTP ranges: players seek without a full download)',
        security: appSecurity,
        params: appFileParamSchema,
        querystring: appTokenQuerySchema,
      },
    },
    async (request, reply) => {
      const c = await appCall(request);
      const dl = await eco.download(c, request.params.fileId, abortOnClose(request, reply));
      if (dl.kind !== 'file') {
        dl.release();
        throw errors.pathNotExist();
      }
      reply.header(
        'content-security-policy',
        "sandbox; default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'",
      );
      // Not stored: a player that drops a range must not have the browser's cache read on to the end.
      reply.header('cache-control', 'no-store');
      return sendFile(request, reply, dl, true);
    },
  );

  app.get(
    `${APP_API_PREFIX}files/:fileId/picture`,
    {
      schema: {
        tags: ['apps'],
        summary:
          'A picture of the app token that browsers cannot decode (HEIC/HEIF) as a JPEG, upright, at most 4096 px',
        security: appSecurity,
        params: appFileParamSchema,
        querystring: appTokenQuerySchema,
      },
    },
    async (request, reply) => {
      const jpeg = await eco.picture(await appCall(request), request.params.fileId, abortOnClose(request, reply));
      reply.header('content-type', 'image/jpeg');
      reply.header('content-security-policy', "sandbox; default-src 'none'");
      reply.header('cache-control', 'no-store');
      return reply.send(jpeg);
    },
  );

  app.put(
    `${APP_API_PREFIX}files/:fileId/content`,
    {
      schema: {
        tags: ['apps'],
        summary:
          'Save a file of the app token (raw body); If-Match: its ETag refuses a file changed meanwhile (409006)',
        security: appSecurity,
        params: appFileParamSchema,
        querystring: appTokenQuerySchema,
        response: { 200: envelopeOf(appFileInfoSchema) },
      },
    },
    async (request, reply) => {
      const c = await appCall(request);
      const body = rawBody(request);
      const ifMatch = request.headers['if-match'];
      try {
        return ok(
          await eco.save(c, request.params.fileId, detachedBody(body), {
            size: declaredLength(request) ?? -1,
            ifMatch: typeof ifMatch === 'string' ? ifMatch : undefined,
            signal: abortOnClose(request, reply),
          }),
        );
      } catch (err) {
        if (!body.complete) reply.header('connection', 'close');
        throw err;
      }
    },
  );

  app.post(
    `${APP_API_PREFIX}files/:fileId/save-as`,
    {
      schema: {
        tags: ['apps'],
        summary: 'Save the raw body as a new file named `name` beside a file of the app token (409002 when taken)',
        security: appSecurity,
        params: appFileParamSchema,
        querystring: appSaveAsQuerySchema.extend(appTokenQuerySchema.shape),
        response: { 200: envelopeOf(appFileInfoSchema) },
      },
    },
    async (request, reply) => {
      const c = await appCall(request);
      const body = rawBody(request);
      try {
        return ok(
          await eco.saveAs(c, request.params.fileId, request.query.name, detachedBody(body), {
            size: declaredLength(request) ?? -1,
            signal: abortOnClose(request, reply),
          }),
        );
      } catch (err) {
        if (!body.complete) reply.header('connection', 'close');
        throw err;
      }
    },
  );

  app.post(
    `${APP_API_PREFIX}files/:fileId/convert`,
    {
      bodyLimit: JSON_BODY,
      schema: {
        tags: ['apps'],
        summary: 'A resized or re-encoded copy (JPEG, PNG, WebP, AVIF) of a picture of the app token, beside it',
        security: appSecurity,
        params: appFileParamSchema,
        querystring: appTokenQuerySchema,
        body: appConvertBodySchema,
        response: { 200: envelopeOf(appFileInfoSchema) },
      },
    },
    async (request, reply) =>
      ok(await eco.convert(await appCall(request), request.params.fileId, request.body, abortOnClose(request, reply))),
  );
}
