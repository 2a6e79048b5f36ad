import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { apiNotFound } from './envelope.ts';

/** Paths the server owns; everything else is a client route of the single-page app. */
const SERVER_PREFIXES = ['/api/', '/account/', '/ecology/v1/', '/v1/', '/healthz'];

/** Files the build names by their content's hash: they never change, so browsers keep them a year. */
export const IMMUTABLE_CACHE = 'public, max-age=31536000, immutable';

/**
 * Serves the built web app with a history-mode fallback: unknown GET paths get index.html;
 * unknown API paths get the envelope with 404. The build writes `.br` and `.gz` beside each text
 * file (apps/web/vite.plugins.ts); the one the browser accepts (Accept-Encoding, brotli first) is
 * sent with `Content-Encoding`, its own length and ETag, and `Vary: Accept-Encoding`, so nothing
 * is compressed at request time.
 */
export async function installWebApp(app: FastifyInstance, webDist: string): Promise<void> {
  const indexFile = join(webDist, 'index.html');
  const hasBuild = existsSync(indexFile);
  if (hasBuild) {
    await app.register(fastifyStatic, {
      root: webDist,
      wildcard: false,
      index: false,
      cacheControl: false,
      preCompressed: true,
      // Pre-compressed variants are chosen by the server; a .br or .gz asked for by name is not a page of the app.
      allowedPath: (pathName) => !/\.(br|gz)$/.test(pathName),
      setHeaders(res, path) {
        // Hashed assets never change; index.html and the other files always revalidate.
        res.header('cache-control', /[\\/]assets[\\/]/.test(path) ? IMMUTABLE_CACHE : 'no-cache');
      },
    });
  }
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    if (SERVER_PREFIXES.some((p) => path === p.replace(/\/$/, '') || path.startsWith(p)) || request.method !== 'GET') {
      return apiNotFound(request, reply);
    }
    // A missing file (a stale hashed asset, favicon.png...) is a 404, not the app's HTML page.
    if (/\.[A-Za-z0-9]+$/.test(path.slice(path.lastIndexOf('/') + 1))) {
      return reply.status(404).type('text/plain; charset=utf-8').send('Not found');
    }
    if (!hasBuild) {
      return reply
        .status(503)
        .type('text/plain; charset=utf-8')
        .send('The web app is not built. Run `npm run build` (npm start does it for you).');
    }
    // Through the static plugin: the compressed variant, ETag and 304 as for any other file
    // (a not-found handler's reply starts as 404).
    return reply.code(200).sendFile('index.html');
  });
}
