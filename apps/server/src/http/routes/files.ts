import type { IncomingMessage } from 'node:http';
import { PassThrough, type Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  Code,
  cloudInfoBodySchema,
  cloudInfoDataSchema,
  createUploadBodySchema,
  deleteFilesBodySchema,
  deleteFilesDataSchema,
  downloadFileQuerySchema,
  downloadLinkBodySchema,
  downloadLinkDataSchema,
  envelopeOf,
  fileItemSchema,
  listFilesBodySchema,
  listFilesDataSchema,
  message,
  mkdirBodySchema,
  mkdirDataSchema,
  ok,
  renameBodySchema,
  uploadFileQuerySchema,
  uploadIdParamSchema,
  uploadPartDataSchema,
  uploadPartQuerySchema,
  uploadSessionSchema,
  addToAlbumBodySchema,
  addToAlbumDataSchema,
  albumItemsBodySchema,
  albumSchema,
  createAlbumBodySchema,
  listAlbumsBodySchema,
  listAlbumsDataSchema,
  thumbnailQuerySchema,
  searchFilesBodySchema,
  searchFilesDataSchema,
  trashDeleteDataSchema,
  trashEmptyBodySchema,
  trashItemsBodySchema,
  trashListBodySchema,
  trashListDataSchema,
  trashRestoreDataSchema,
} from '@skyferry/contract';
import type { AppContext } from '../../context.ts';
import { entryEtag, isSafeInline, parseRange, toFileItem, type Download } from '../../services/files/index.ts';
import type { App } from '../app-types.ts';
import { identityOf, requireIdentity } from '../auth.ts';
import { PASSED_ON_HEADER, passOn } from '../forward.ts';
import { errors } from '../errors.ts';
import { requestLanguage } from '../language.ts';

const security: Array<Record<string, string[]>> = [{ bearer: [] }, { temp: [] }];
const JSON_BODY = 1024 * 1024;

/** `attachment; filename="..."; filename*=UTF-8''...` with an ASCII fallback. */
export function contentDisposition(kind: 'attachment' | 'inline', name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/** Aborts when the client goes away before the answer is complete. */
export function abortOnClose(request: FastifyRequest, reply: FastifyReply): AbortSignal {
  const ac = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) ac.abort(new Error('client closed the connection'));
  });
  request.raw.on('aborted', () => ac.abort(new Error('client aborted the request')));
  return ac.signal;
}

/**
 * The request's body as a stream of its own for the provider. Backends destroy the stream they
 * write from when they fail (a refused file type, a full cloud), and destroying the request itself
 * would close the connection before the error answer is sent. A client that goes away still ends it.
 */
export function detachedBody(body: IncomingMessage): Readable {
  const out = new PassThrough();
  body.once('error', (err) => out.destroy(err));
  // The backend finds a failure on the destroyed stream, also one that came before it listened.
  out.on('error', () => undefined);
  body.once('close', () => {
    if (!body.complete) out.destroy(new Error('client aborted the request'));
  });
  body.pipe(out);
  return out;
}

export function declaredLength(request: FastifyRequest): number | undefined {
  const raw = request.headers['content-length'];
  if (raw === undefined) return undefined;
  const n = Number(raw);
  return Number.isInteger(n) && n >= 0 ? n : undefined;
}

/**
 * Streams one file of a download: 200 or 206 with Accept-Ranges, ETag and Content-Range (If-Range
 * honoured), 416 when the range is out of the file; only the bytes asked for are read from the cloud.
 */
export async function sendFile(
  request: FastifyRequest,
  reply: FastifyReply,
  dl: Extract<Download, { kind: 'file' }>,
  wantInline: boolean,
): Promise<FastifyReply> {
  const { entry } = dl;
  const size = entry.size;
  const mtime = entry.modTime?.getTime() ?? 0;
  const etag = entryEtag(entry);
  const inline = wantInline && isSafeInline(dl.contentType);
  reply.header('content-type', dl.contentType);
  reply.header('accept-ranges', 'bytes');
  reply.header('etag', etag);
  if (mtime > 0) reply.header('last-modified', new Date(mtime).toUTCString());
  reply.header('content-disposition', contentDisposition(inline ? 'inline' : 'attachment', entry.name));
  const ifRange = request.headers['if-range'];
  const rangeHeader =
    ifRange && ifRange !== etag && ifRange !== (mtime > 0 ? new Date(mtime).toUTCString() : '')
      ? undefined
      : request.headers.range;
  const range = parseRange(rangeHeader, size);
  if (range === 'unsatisfiable') {
    dl.release();
    reply.header('content-range', `bytes */${size}`);
    return reply
      .status(416)
      .type('application/json; charset=utf-8')
      .send({
        code: Code.BAD_REQUEST,
        msg: message(requestLanguage(request), 'invalid_request', { detail: 'range not satisfiable' }),
        data: null,
      });
  }
  let stream;
  try {
    stream = await dl.open(range ?? undefined);
  } catch (err) {
    dl.release();
    throw err;
  }
  stream.once('close', () => dl.release());
  if (range) {
    reply.status(206);
    reply.header('content-range', `bytes ${range.start}-${range.end}/${size}`);
    reply.header('content-length', String(range.end - range.start + 1));
  } else {
    reply.header('content-length', String(size));
  }
  return reply.send(stream);
}

export default async function fileRoutes(app: App, ctx: AppContext): Promise<void> {
  // Raw bodies (uploads) stream through untouched: no size limit, no buffering.
  await app.register(async (scoped) => {
    const api = scoped as unknown as App;
    api.addContentTypeParser('application/octet-stream', (_request, payload, done) => done(null, payload));
    api.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    registerFileRoutes(api, ctx);
  });
}

function registerFileRoutes(app: App, ctx: AppContext): void {
  const files = ctx.files;
  const auth = requireIdentity(ctx);
  /**
   * Passes a call about an upload session to the API process holding it, when that is another;
   * true when answered so. A process that cannot be reached has lost the session (upload_lost).
   */
  const heldElsewhere = async (
    request: FastifyRequest<{ Params: { upload_id: string } }>,
    reply: FastifyReply,
    body?: IncomingMessage,
  ): Promise<boolean> => {
    const id = request.params.upload_id;
    const passedOn = request.headers[PASSED_ON_HEADER] !== undefined;
    const where = await files.uploads.locate(files.uploadOwner(identityOf(request)), id, passedOn);
    if ('here' in where) return false;
    try {
      await passOn(where.at, request, reply, body);
    } catch (err) {
      request.log.warn({ err, upload: id, at: where.at }, 'upload session: its process cannot be reached');
      throw await files.uploads.lost(id);
    }
    return true;
  };

  app.post(
    '/api/cloud-manager/list',
    {
      bodyLimit: JSON_BODY,
      preHandler: auth,
      schema: {
        tags: ['files'],
        summary: 'One page of a folder (cached per cloud and folder for a few seconds; refresh bypasses)',
        security,
        body: listFilesBodySchema,
        response: { 200: envelopeOf(listFilesDataSchema) },
      },
    },
    async (request) => {
      const b = request.body;
      return ok(
        await files.list(identityOf(request), b, b.path, {
          pageToken: b.page_token,
          pageSize: b.page_size,
          refresh: b.refresh,
          background: b.background,
        }),
      );
    },
  );

  app.post(
    '/api/cloud-manager/mkdir',
    {
      bodyLimit: JSON_BODY,
      preHandler: auth,
      schema: {
        tags: ['files'],
        summary: 'Create a folder; not_allow_conflict reuses an existing one. Data: the folder id',
        security,
        body: mkdirBodySchema,
        response: { 200: envelopeOf(mkdirDataSchema) },
      },
    },
    async (request) => {
      const b = request.body;
      return ok(await files.mkdir(identityOf(request), b, b.path, b.folder_name, b.not_allow_conflict === true));
    },
  );

  app.post(
    '/api/cloud-manager/rename',
    {
      bodyLimit: JSON_BODY,
      preHandler: auth,
      schema: {
        tags: ['files'],
        summary: 'Rename a file or folder in place',
        security,
        body: renameBodySchema,
        response: { 200: envelopeOf(fileItemSchema) },
      },
    },
    async (request) => {
      const b = request.body;
      return ok(await files.rename(identityOf(request), b, b.path, b.new_name));
    },
  );

  app.post(
    '/api/cloud-manager/delete',
    {
      bodyLimit: JSON_BODY,
      preHandler: auth,
      schema: {
        tags: ['files'],
        summary: 'Delete files and folders (to the cloud’s trash where it has one, unless permanent)',
        security,
        body: deleteFilesBodySchema,
        response: { 200: envelopeOf(deleteFilesDataSchema) },
      },
    },
    async (request) => {
      const b = request.body;
      const lang = requestLanguage(request);
      const result = await files.delete(identityOf(request), b, b.files, b.permanent === true);
      return ok({
        deleted: result.deleted,
        trashed: result.trashed,
        failed: result.failed.map((f) => ({
          path: f.path,
          code: f.error.code,
          msg: message(lang, f.error.key, f.error.params),
        })),
      });
    },
  );

  app.post(
    '/api/cloud-manager/trash/list',
    {
      bodyLimit: JSON_BODY,
      preHandler: auth,
      schema: {
        tags: ['files'],
        summary: 'One page of the cloud’s trash (supported false where it has none Skyferry can read)',
        security,
        body: trashListBodySchema,
        response: { 200: envelopeOf(trashListDataSchema) },
      },
    },
    async (request) => ok(await files.listTrash(identityOf(request), request.body, request.body.page_token ?? null)),
  );

  for (const action of ['restore', 'delete'] as const) {
    app.post(
      `/api/cloud-manager/trash/${action}`,
      {
        bodyLimit: JSON_BODY,
        preHandler: auth,
        schema: {
          tags: ['files'],
          summary:
            action === 'restore'
              ? 'Put trashed items back where they were (beside them as "name (restored)" when taken)'
              : 'Delete trashed items for good',
          security,
          body: trashItemsBodySchema,
          response: { 200: envelopeOf(action === 'restore' ? trashRestoreDataSchema : trashDeleteDataSchema) },
        },
      },
      async (request) => {
        const lang = requestLanguage(request);
        const r = await files.fromTrash(identityOf(request), request.body, request.body.ids, action === 'delete');
        const failed = r.failed.map((f) => ({
          id: f.id,
          code: f.error.code,
          msg: message(lang, f.error.key, f.error.params),
        }));
        if (action === 'delete') return ok({ deleted: r.done.map((d) => d.id), failed });
        return ok({ restored: r.done.flatMap((d) => (d.entry ? [toFileItem(d.entry)] : [])), failed });
      },
    );
  }

  app.post(
    '/api/cloud-manager/trash/empty',
    {
      bodyLimit: JSON_BODY,
      preHandler: auth,
      schema: {
        tags: ['files'],
        summary: 'Delete everything in the cloud’s trash for good',
        security,
        body: trashEmptyBodySchema,
        response: { 200: envelopeOf(z.null()) },
      },
    },
    async (request) => {
      await files.emptyTrash(identityOf(request), request.body);
      return ok(null);
    },
  );

  app.post(
    '/api/cloud-manager/search',
    {
      bodyLimit: JSON_BODY,
      preHandler: auth,
      schema: {
        tags: ['files'],
        summary:
          'Files and folders below a folder whose name holds the query: the service’s search, else a walk in steps (pass page_token back)',
        security,
        body: searchFilesBodySchema,
        response: { 200: envelopeOf(searchFilesDataSchema) },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const signal = abortOnClose(request, reply);
      return ok(await files.search(identityOf(request), b, b.path, b.query, b.page_token ?? null, signal));
    },
  );

  app.post(
    '/api/cloud-manager/info',
    {
      bodyLimit: JSON_BODY,
      preHandler: auth,
      schema: {
        tags: ['files'],
        summary: 'The cloud’s space as the service reports it now (space_amount, space_used); also stored on the cloud',
        security,
        body: cloudInfoBodySchema,
        response: { 200: envelopeOf(cloudInfoDataSchema) },
      },
    },
    async (request) => ok(await files.info(identityOf(request), request.body, { background: request.body.background })),
  );

  app.put(
    '/api/cloud-manager/files',
    {
      preHandler: auth,
      schema: {
        tags: ['files'],
        summary: 'Plain upload: the raw body streams to the cloud at path (replacing a file unless overwrite=0)',
        security,
        querystring: uploadFileQuerySchema,
        response: { 200: envelopeOf(fileItemSchema) },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const body = request.body as IncomingMessage | undefined;
      if (!body || typeof (body as { pipe?: unknown }).pipe !== 'function')
        throw errors.badRequest('invalid_request', { detail: 'no body' });
      const signal = abortOnClose(request, reply);
      try {
        const item = await files.upload(identityOf(request), q.cloud_id, q.path, detachedBody(body), {
          size: declaredLength(request) ?? -1,
          overwrite: q.overwrite !== '0',
          modTime: q.modified ? new Date(q.modified) : undefined,
          signal,
        });
        return ok(item);
      } catch (err) {
        // The rest of a body nobody reads would hold the connection (and a server's shutdown) open.
        if (!body.complete) reply.header('connection', 'close');
        throw err;
      }
    },
  );

  app.get(
    '/api/cloud-manager/files',
    {
      preHandler: async (request, reply) => {
        const q = request.query as { link?: string };
        if (!q.link) await auth.call(app, request, reply);
      },
      schema: {
        tags: ['files'],
        summary: 'Download a file (streamed, HTTP ranges) or a folder as one zip; or what a signed link names',
        description:
          'With headers: cloud_id and path. Without (a browser navigation): link from POST /api/cloud-manager/download-link. ' +
          'Files answer 200 or 206 with Accept-Ranges, ETag and Content-Range (416 when out of range); folders and several ' +
          'files answer application/zip with an exact Content-Length.',
        security,
        querystring: downloadFileQuerySchema,
      },
    },
    async (request, reply) => {
      const q = request.query;
      let identity;
      let cloudId: string;
      let paths: string[];
      let name: string | undefined;
      if (q.link) {
        const claims = files.resolveLink(q.link);
        identity = claims.identity;
        cloudId = claims.cloudId;
        paths = claims.paths;
        name = claims.name;
      } else {
        if (!q.cloud_id || !q.path) throw errors.badRequest('field_required', { field: 'cloud_id, path' });
        identity = identityOf(request);
        cloudId = q.cloud_id;
        paths = [q.path];
      }
      const signal = abortOnClose(request, reply);
      const dl = await files.download(identity, cloudId, paths, name, signal);
      // The page that started this download learns that it began, and its size in bytes (a zip's
      // exact length); errors answer the envelope instead.
      if (q.notify) {
        const bytes = dl.kind === 'zip' ? dl.length : dl.entry.size;
        reply.header('set-cookie', `sf-dl-${q.notify}=${bytes}; Path=/; Max-Age=300; SameSite=Strict`);
      }
      reply.header(
        'content-security-policy',
        "sandbox; default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'",
      );
      reply.header('cache-control', 'private, no-cache');
      if (dl.kind === 'zip') {
        dl.stream.once('close', () => dl.release());
        reply.header('content-type', 'application/zip');
        reply.header('content-length', String(dl.length));
        reply.header('accept-ranges', 'none');
        reply.header('content-disposition', contentDisposition('attachment', dl.name));
        return reply.send(dl.stream);
      }
      return sendFile(request, reply, dl, q.disposition === 'inline');
    },
  );

  app.post(
    '/api/cloud-manager/download-link',
    {
      bodyLimit: JSON_BODY,
      preHandler: auth,
      schema: {
        tags: ['files'],
        summary:
          'A signed URL (5 minutes) a browser can navigate to: one file, or a folder or several paths as one zip',
        security,
        body: downloadLinkBodySchema,
        response: { 200: envelopeOf(downloadLinkDataSchema) },
      },
    },
    async (request) => {
      const b = request.body;
      return ok(await files.createLink(identityOf(request), b, b.paths, b.name));
    },
  );

  app.post(
    '/api/cloud-manager/uploads',
    {
      bodyLimit: JSON_BODY,
      preHandler: auth,
      schema: {
        tags: ['files'],
        summary: 'Open a resumable upload (4 MB parts; see PUT /api/cloud-manager/uploads/{upload_id})',
        security,
        body: createUploadBodySchema,
        response: { 200: envelopeOf(uploadSessionSchema) },
      },
    },
    async (request) => {
      const b = request.body;
      return ok(
        await files.createUpload(identityOf(request), b, b.path, b.size, {
          overwrite: b.overwrite !== false,
          modTime: b.modified ? new Date(b.modified) : undefined,
        }),
      );
    },
  );

  app.get(
    '/api/cloud-manager/uploads/:upload_id',
    {
      preHandler: auth,
      schema: {
        tags: ['files'],
        summary: 'Where a resumable upload stands (offset: where the next part starts)',
        security,
        params: uploadIdParamSchema,
        response: { 200: envelopeOf(uploadSessionSchema) },
      },
    },
    async (request, reply) => {
      if (await heldElsewhere(request, reply)) return reply;
      return ok(files.uploads.status(files.uploadOwner(identityOf(request)), request.params.upload_id));
    },
  );

  app.put(
    '/api/cloud-manager/uploads/:upload_id',
    {
      preHandler: auth,
      schema: {
        tags: ['files'],
        summary: 'Send one part (raw body) starting at offset; a part is taken whole or not at all',
        description:
          'A gap answers 409006 with data {offset} (where to resume); a part already taken is accepted again.',
        security,
        params: uploadIdParamSchema,
        querystring: uploadPartQuerySchema,
        response: { 200: envelopeOf(uploadPartDataSchema) },
      },
    },
    async (request, reply) => {
      const body = request.body as IncomingMessage | undefined;
      if (!body || typeof (body as { pipe?: unknown }).pipe !== 'function')
        throw errors.badRequest('invalid_request', { detail: 'no body' });
      if (await heldElsewhere(request, reply, body)) return reply;
      return ok(
        await files.uploads.writePart(
          files.uploadOwner(identityOf(request)),
          request.params.upload_id,
          request.query.offset,
          body,
          declaredLength(request),
        ),
      );
    },
  );

  app.post(
    '/api/cloud-manager/uploads/:upload_id/complete',
    {
      preHandler: auth,
      schema: {
        tags: ['files'],
        summary: 'Publish a resumable upload once every byte arrived; answers the new entry',
        security,
        params: uploadIdParamSchema,
        response: { 200: envelopeOf(fileItemSchema) },
      },
    },
    async (request, reply) => {
      if (await heldElsewhere(request, reply)) return reply;
      return ok(await files.completeUpload(identityOf(request), request.params.upload_id));
    },
  );

  app.delete(
    '/api/cloud-manager/uploads/:upload_id',
    {
      preHandler: auth,
      schema: {
        tags: ['files'],
        summary: 'Abandon a resumable upload (the cloud discards what it received)',
        security,
        params: uploadIdParamSchema,
        response: { 200: envelopeOf(z.null()) },
      },
    },
    async (request, reply) => {
      if (await heldElsewhere(request, reply)) return reply;
      files.uploads.abort(files.uploadOwner(identityOf(request)), request.params.upload_id);
      return ok(null);
    },
  );

  app.get(
    '/api/cloud-manager/thumbnail',
    {
      preHandler: async (request, reply) => {
        const q = request.query as { link?: string };
        if (!q.link) await auth.call(app, request, reply);
      },
      schema: {
        tags: ['files'],
        summary: 'A thumbnail of an image for the photos grid (WebP made and cached by the server)',
        description:
          'cloud_id and path with headers, or link (a download link of the image); size 128, 256 (default) or 512 is ' +
          'the longest side in pixels (never enlarged). An image the server cannot decode is answered as it is. ' +
          'With an ETag (304 for If-None-Match) and a private cache lifetime of 5 minutes.',
        security,
        querystring: thumbnailQuerySchema,
      },
    },
    async (request, reply) => {
      const q = request.query;
      let identity;
      let cloudId: string;
      let path: string;
      if (q.link) {
        const claims = files.resolveLink(q.link);
        if (claims.paths.length !== 1) throw errors.notFound();
        identity = claims.identity;
        cloudId = claims.cloudId;
        path = claims.paths[0] as string;
      } else {
        if (!q.cloud_id || !q.path) throw errors.badRequest('field_required', { field: 'cloud_id, path' });
        identity = identityOf(request);
        cloudId = q.cloud_id;
        path = q.path;
      }
      const thumb = await files.thumbnail(identity, cloudId, path, q.size, abortOnClose(request, reply));
      reply.header('etag', thumb.etag);
      reply.header('cache-control', 'private, max-age=300');
      reply.header('content-security-policy', "sandbox; default-src 'none'");
      if (request.headers['if-none-match'] === thumb.etag) {
        if (!Buffer.isBuffer(thumb.body)) thumb.body.destroy();
        return reply.status(304).send();
      }
      reply.header('content-type', isSafeInline(thumb.type) ? thumb.type : 'application/octet-stream');
      return reply.send(thumb.body);
    },
  );

  app.post(
    '/api/cloud-manager/albums/list',
    {
      bodyLimit: JSON_BODY,
      preHandler: auth,
      schema: {
        tags: ['files'],
        summary: 'The albums of a photos cloud (403003 when its backend has none)',
        security,
        body: listAlbumsBodySchema,
        response: { 200: envelopeOf(listAlbumsDataSchema) },
      },
    },
    async (request) => ok({ albums: await files.listAlbums(identityOf(request), request.body) }),
  );

  app.post(
    '/api/cloud-manager/albums/create',
    {
      bodyLimit: JSON_BODY,
      preHandler: auth,
      schema: {
        tags: ['files'],
        summary: 'Create an album in a photos cloud',
        security,
        body: createAlbumBodySchema,
        response: { 200: envelopeOf(albumSchema) },
      },
    },
    async (request) => ok(await files.createAlbum(identityOf(request), request.body, request.body.title)),
  );

  app.post(
    '/api/cloud-manager/albums/add',
    {
      bodyLimit: JSON_BODY,
      preHandler: auth,
      schema: {
        tags: ['files'],
        summary: 'Add photos (paths) to an album ("add to album")',
        security,
        body: addToAlbumBodySchema,
        response: { 200: envelopeOf(addToAlbumDataSchema) },
      },
    },
    async (request) => {
      const b = request.body;
      return ok({ added: await files.addToAlbum(identityOf(request), b, b.album_id, b.files) });
    },
  );

  app.post(
    '/api/cloud-manager/albums/items',
    {
      bodyLimit: JSON_BODY,
      preHandler: auth,
      schema: {
        tags: ['files'],
        summary: 'One page of the photos in an album',
        security,
        body: albumItemsBodySchema,
        response: { 200: envelopeOf(listFilesDataSchema) },
      },
    },
    async (request) => {
      const b = request.body;
      return ok(await files.albumItems(identityOf(request), b, b.album_id, b.page_token));
    },
  );
}
