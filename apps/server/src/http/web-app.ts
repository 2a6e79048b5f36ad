import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  SHELL_COOKIES,
  SHELL_MANIFEST,
  languageFromHeader,
  shellFile,
  toLanguage,
  type ShellAccount,
  type ShellManifest,
} from '@skyferry/contract';
import { apiNotFound } from './envelope.ts';

/** Paths the server owns; everything else is a client route of the single-page app. */
const SERVER_PREFIXES = ['/api/', '/account/', '/ecology/v1/', '/v1/', '/healthz'];

/** Files the build names by their content's hash: they never change, so browsers keep them a year. */
export const IMMUTABLE_CACHE = 'public, max-age=31536000, immutable';

/** A cookie's value from the request's Cookie header (undefined when absent). */
function cookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie ?? '';
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

interface ShellRoute {
  pattern: RegExp;
  menu: string;
}

/**
 * The routes the build prerendered the app shell for (apps/web/scripts/prerender-shell.ts), as
 * patterns (`/tasks/:id`) with the menu entry each highlights; none when the build has no shell.
 */
function shellRoutes(webDist: string): ShellRoute[] {
  const manifest = join(webDist, SHELL_MANIFEST);
  if (!existsSync(manifest)) return [];
  const { routes } = JSON.parse(readFileSync(manifest, 'utf8')) as ShellManifest;
  return routes.map(({ path, menu }) => ({
    pattern: new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z_]+/g, '[^/]+')}/?$`),
    menu,
  }));
}

/**
 * The prerendered page for a route of the sidebar layout: in the language the app last used (its
 * cookie), else the browser's (Accept-Language); a signed-in user's header or a visitor's.
 */
function shellPage(request: FastifyRequest, route: ShellRoute): string {
  const lang =
    toLanguage(cookie(request, SHELL_COOKIES.language)) ?? languageFromHeader(request.headers['accept-language']);
  const account: ShellAccount = cookie(request, SHELL_COOKIES.account) === 'member' ? 'member' : 'visitor';
  return shellFile(lang, account, route.menu);
}

/**
 * Serves the built web app with a history-mode fallback: unknown GET paths get index.html;
 * unknown API paths get the envelope with 404. The build writes `.br` and `.gz` beside each text
 * file (apps/web/vite.plugins.ts); the one the browser accepts (Accept-Encoding, brotli first) is
 * sent with `Content-Encoding`, its own length and ETag, and `Vary: Accept-Encoding`, so nothing
 * is compressed at request time. The sidebar layout's routes get the page with the app shell
 * already in it (its header and menu, prerendered by the build in each language).
 */
export async function installWebApp(app: FastifyInstance, webDist: string): Promise<void> {
  const indexFile = join(webDist, 'index.html');
  const hasBuild = existsSync(indexFile);
  const shells = hasBuild ? shellRoutes(webDist) : [];
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
    const shell = shells.find((route) => route.pattern.test(path));
    if (shell) {
      reply.header('vary', 'accept-language, cookie');
      return reply.code(200).sendFile(shellPage(request, shell));
    }
    return reply.code(200).sendFile('index.html');
  });
}
