import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { SIGN_IN_NONCE_PATTERN, toLanguage } from '@skyferry/contract';
import { allowedClientOrigin, allowedOrigins } from '../../account-pages/origins.ts';
import { renderAccountPage, type AccountPage, type PageOptions } from '../../account-pages/render.ts';
import type { AppContext } from '../../context.ts';
import type { App } from '../app-types.ts';
import { CONTENT_SECURITY_POLICY } from '../security.ts';
import { requestLanguage } from '../language.ts';

const ASSETS_DIR = join(import.meta.dirname, '../../account-pages/assets');
const ASSETS: Record<string, { body: Buffer; type: string }> = {
  'account.js': { body: readFileSync(join(ASSETS_DIR, 'account.js')), type: 'text/javascript; charset=utf-8' },
  'account.css': { body: readFileSync(join(ASSETS_DIR, 'account.css')), type: 'text/css; charset=utf-8' },
};
const ASSET_VERSION = createHash('sha256')
  .update(
    Object.values(ASSETS)
      .map((a) => a.body.toString())
      .join('\n'),
  )
  .digest('hex')
  .slice(0, 12);

const pageQuerySchema = z.object({
  origin: z.string().max(300).optional(),
  lang: z.string().max(20).optional(),
  cookies: z.string().max(5).optional(),
  /** The client's sign-in nonce: sent with the sign-in and handed back with its result. */
  nonce: z.string().max(200).optional(),
  /** A mailed link's token (the reset and e-mail confirmation pages). */
  token: z.string().max(200).optional(),
});

/** A mailed link's token as Skyferry makes them (`sk_pr_` reset, `sk_ec_` e-mail change, 32 random bytes). */
const LINK_TOKEN = /^sk_(pr|ec)_[A-Za-z0-9_-]{20,100}$/;

/**
 * The account pages the client frames (init's sign_in_url and friends): plain server-rendered
 * HTML plus one small script. They may be framed only by allowed origins.
 */
export default async function accountPageRoutes(app: App, ctx: AppContext): Promise<void> {
  const pages: AccountPage[] = ['signin', 'signup', 'signout', 'forgot', 'reset', 'confirm-email'];
  for (const page of pages) {
    app.get(`/account/${page}`, { schema: { hide: true, querystring: pageQuerySchema } }, async (request, reply) => {
      const q = request.query;
      const lang = toLanguage(q.lang) ?? requestLanguage(request);
      const origin = allowedClientOrigin(ctx.config, request, q.origin);
      const ancestors = allowedOrigins(ctx.config, request).join(' ');
      const csp = CONTENT_SECURITY_POLICY.replace("frame-ancestors 'self'", `frame-ancestors 'self' ${ancestors}`);
      let link: PageOptions['link'];
      if (page === 'reset' || page === 'confirm-email') {
        const token = q.token !== undefined && LINK_TOKEN.test(q.token) ? q.token : undefined;
        // Only looked at, not used: the page's button uses it (a mail scanner opening the link changes nothing).
        const found = token
          ? await ctx.accountSettings.peekLink(token, page === 'reset' ? 'password_reset' : 'email_change')
          : undefined;
        link = token === undefined ? undefined : found ? { token, email: found.email, valid: true } : { valid: false };
      }
      return (
        reply
          .header('content-security-policy', csp)
          .header('cache-control', 'no-store')
          // The address of a mailed link's page holds its token: never sent on as a referrer.
          .header('referrer-policy', 'no-referrer')
          .type('text/html; charset=utf-8')
          .send(
            renderAccountPage({
              page,
              lang,
              origin,
              noCookies: q.cookies === '0',
              requestedOrigin: q.origin,
              // Anything but a well-formed nonce is dropped, never reflected.
              nonce: q.nonce !== undefined && SIGN_IN_NONCE_PATTERN.test(q.nonce) ? q.nonce : undefined,
              link,
              assetVersion: ASSET_VERSION,
            }),
          )
      );
    });
  }

  app.get(
    '/account/assets/:file',
    { schema: { hide: true, params: z.object({ file: z.string().max(64) }) } },
    async (request, reply) => {
      const asset = ASSETS[request.params.file];
      if (!asset) return reply.callNotFound();
      return reply.header('cache-control', 'public, max-age=3600').type(asset.type).send(asset.body);
    },
  );
}
