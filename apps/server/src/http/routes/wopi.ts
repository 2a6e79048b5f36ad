import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  Code,
  envelopeOf,
  ok,
  wopiFileParamSchema,
  wopiSessionBodySchema,
  wopiSessionDataSchema,
  wopiTokenQuerySchema,
  type MessageKey,
} from '@skyferry/contract';
import { publicBase } from '../../account-pages/origins.ts';
import type { AppContext } from '../../context.ts';
import { WopiError, type WopiClaims } from '../../services/wopi/index.ts';
import type { App } from '../app-types.ts';
import { identityOf, requireIdentity } from '../auth.ts';
import { ApiError } from '../errors.ts';
import { declaredLength, detachedBody } from './files.ts';

const tags = ['wopi'];
const WOPI_TAG_NOTE =
  'A WOPI call (Microsoft’s WOPI protocol) the office server makes, authorised by the `access_token` of ' +
  'POST /api/wopi/sessions (one file, one user, expiring). 401 for a token that is not valid for this file, 404 ' +
  'when no office server is configured or the file is gone.';

/** Envelope codes and messages of WOPI's statuses (the office server reads the status; people read the message). */
const STATUS: Record<number, [number, MessageKey]> = {
  400: [Code.BAD_REQUEST, 'invalid_request'],
  401: [Code.UNAUTHENTICATED, 'unauthenticated'],
  404: [Code.NOT_FOUND, 'not_found'],
  409: [Code.CONFLICT, 'wopi_lock_mismatch'],
  412: [Code.PAYLOAD_TOO_LARGE, 'body_too_large'],
  413: [Code.PAYLOAD_TOO_LARGE, 'body_too_large'],
  501: [Code.BAD_REQUEST, 'invalid_request'],
};

/** A WOPI failure as the envelope with WOPI's status; a lock mismatch carries X-WOPI-Lock. */
function wopiFailure(reply: FastifyReply, err: unknown): never {
  if (!(err instanceof WopiError)) {
    // A cloud's own failure keeps its answer, except that another user's (or a missing) cloud is 404.
    if (err instanceof ApiError && err.status === 403) throw new ApiError(Code.NOT_FOUND, 'not_found');
    throw err;
  }
  if (err.lock !== undefined) {
    reply.header('X-WOPI-Lock', err.lock);
    reply.header('X-WOPI-LockFailureReason', err.message);
  }
  const [code, key] = STATUS[err.status] ?? [Code.INTERNAL, 'server_error'];
  throw new ApiError(code, key, { detail: err.message }, null, err.status);
}

function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * The WOPI host (services/wopi): POST /api/wopi/sessions for the app host, and the WOPI calls at
 * /wopi/files/{file_id} for the office server. Bodies are never parsed here: PutFile streams.
 */
export default async function wopiRoutes(app: App, ctx: AppContext): Promise<void> {
  const wopi = ctx.wopi;

  app.post(
    '/api/wopi/sessions',
    {
      bodyLimit: 64 * 1024,
      preHandler: requireIdentity(ctx),
      schema: {
        tags,
        summary: 'An access token for one file of one of your clouds, for the office server (WOPI)',
        description:
          'Data: file_id, access_token, access_token_ttl (ms since the epoch), wopi_src (WOPISrc) and office_url. ' +
          '404 when no office server is configured (SKYFERRY_WOPI_CLIENT_URL) or the file is not yours.',
        security: [{ bearer: [] }, { temp: [] }],
        body: wopiSessionBodySchema,
        response: { 200: envelopeOf(wopiSessionDataSchema) },
      },
    },
    async (request) => {
      const b = request.body;
      const base = `${publicBase(ctx.config, request)}/wopi`;
      return ok(await wopi.openSession(identityOf(request), b, b.path, b.mode, base));
    },
  );

  await app.register(async (scoped) => {
    const api = scoped as unknown as App;
    // WOPI bodies are the document's bytes whatever their type: none is parsed, PutFile streams.
    api.removeAllContentTypeParsers();
    api.addContentTypeParser('*', (_request, payload, done) => done(null, payload));

    const authorize = (
      request: FastifyRequest<{ Params: { file_id: string }; Querystring: { access_token?: string } }>,
    ) => wopi.authorize(request.params.file_id, request.query.access_token);

    api.get(
      '/wopi/files/:file_id',
      {
        schema: {
          tags,
          summary: 'WOPI CheckFileInfo',
          description: WOPI_TAG_NOTE,
          params: wopiFileParamSchema,
          querystring: wopiTokenQuerySchema,
          response: { 200: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])) },
        },
      },
      async (request, reply) => {
        try {
          return await wopi.checkFileInfo(await authorize(request));
        } catch (err) {
          return wopiFailure(reply, err);
        }
      },
    );

    api.get(
      '/wopi/files/:file_id/contents',
      {
        schema: {
          tags,
          summary: 'WOPI GetFile',
          description: `${WOPI_TAG_NOTE} 412 when the file is larger than X-WOPI-MaxExpectedSize.`,
          params: wopiFileParamSchema,
          querystring: wopiTokenQuerySchema,
        },
      },
      async (request, reply) => {
        let claims: WopiClaims;
        try {
          claims = await authorize(request);
          const rawMax = header(request, 'x-wopi-maxexpectedsize');
          const max = rawMax !== undefined && /^\d{1,15}$/.test(rawMax) ? Number(rawMax) : undefined;
          const ac = new AbortController();
          reply.raw.on('close', () => reply.raw.writableFinished || ac.abort());
          const file = await wopi.getFile(claims, max, ac.signal);
          file.stream.once('close', file.release);
          reply.header('content-type', 'application/octet-stream');
          reply.header('content-length', String(file.size));
          reply.header('X-WOPI-ItemVersion', file.version);
          reply.header('cache-control', 'no-store');
          return reply.send(file.stream);
        } catch (err) {
          return wopiFailure(reply, err);
        }
      },
    );

    api.post(
      '/wopi/files/:file_id/contents',
      {
        bodyLimit: Number.MAX_SAFE_INTEGER,
        schema: {
          tags,
          summary: 'WOPI PutFile (X-WOPI-Override: PUT)',
          description: `${WOPI_TAG_NOTE} The caller must hold the lock (X-WOPI-Lock), or the file must be empty and unlocked; otherwise 409 with the current lock in X-WOPI-Lock.`,
          params: wopiFileParamSchema,
          querystring: wopiTokenQuerySchema,
        },
      },
      async (request, reply) => {
        const body = request.body as IncomingMessage | undefined;
        try {
          const claims = await authorize(request);
          if ((header(request, 'x-wopi-override') ?? '').toUpperCase() !== 'PUT') {
            throw new WopiError(400, 'X-WOPI-Override must be PUT');
          }
          const size = declaredLength(request);
          // The document's size must be known before it is written (providers write a known length).
          if (size === undefined && request.headers['transfer-encoding']) {
            throw new WopiError(400, 'Content-Length is required');
          }
          const stream = body && typeof body.pipe === 'function' ? detachedBody(body) : emptyBody();
          const result = await wopi.putFile(claims, header(request, 'x-wopi-lock'), stream, size ?? 0);
          reply.header('X-WOPI-ItemVersion', result.version);
          return {};
        } catch (err) {
          body?.resume?.();
          return wopiFailure(reply, err);
        }
      },
    );

    api.post(
      '/wopi/files/:file_id',
      {
        bodyLimit: 1024 * 1024,
        schema: {
          tags,
          summary: 'WOPI Lock, GetLock, RefreshLock, Unlock, UnlockAndRelock and DeleteFile (by X-WOPI-Override)',
          description: `${WOPI_TAG_NOTE} A lock mismatch is 409 with the current lock in X-WOPI-Lock ('' when none); other overrides are 501.`,
          params: wopiFileParamSchema,
          querystring: wopiTokenQuerySchema,
        },
      },
      async (request, reply) => {
        (request.body as IncomingMessage | undefined)?.resume?.();
        try {
          const claims = await authorize(request);
          const lock = header(request, 'x-wopi-lock');
          const override = (header(request, 'x-wopi-override') ?? '').toUpperCase();
          switch (override) {
            case 'LOCK': {
              const r = await wopi.lock(claims, lock, header(request, 'x-wopi-oldlock'));
              reply.header('X-WOPI-ItemVersion', r.version);
              return {};
            }
            case 'GET_LOCK':
              reply.header('X-WOPI-Lock', await wopi.getLock(claims));
              return {};
            case 'REFRESH_LOCK':
              await wopi.refreshLock(claims, lock);
              return {};
            case 'UNLOCK': {
              const r = await wopi.unlock(claims, lock);
              reply.header('X-WOPI-ItemVersion', r.version);
              return {};
            }
            case 'DELETE':
              await wopi.deleteFile(claims);
              return {};
            default:
              throw new WopiError(501, `X-WOPI-Override ${override || '(none)'} is not supported`);
          }
        } catch (err) {
          return wopiFailure(reply, err);
        }
      },
    );
  });
}

function emptyBody() {
  // A PutFile without a body writes an empty document.
  return Readable.from([]);
}
