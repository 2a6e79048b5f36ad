import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { apiNotFound } from './envelope.ts';

/** Paths the server owns; everything else is a client route of the single-page app. */
const SERVER_PREFIXES = ['/api/', '/account/', '/ecology/v1/', '/v1/', '/healthz'];

/**
 * Serves the built web app with a history-mode fallback: unknown GET paths get index.html;
 * unknown API paths get the envelope with 404.
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
      setHeaders(res, path) {
        // Hashed assets never change; index.html always revalidates.
        res.header('cache-control', path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
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
    // Read each time in development would be wasteful; index.html is small and cached by the OS.
    return reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(readFileSync(indexFile));
  });
}
