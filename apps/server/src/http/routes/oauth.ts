import {
  envelopeOf,
  isLoopbackRedirectUri,
  message,
  OAUTH_CHANNEL,
  OAUTH_MESSAGE_TYPE,
  oauthCallbackQuerySchema,
  oauthStartBodySchema,
  oauthStartDataSchema,
  ok,
  type OAuthResultMessage,
} from '@skyferry/contract';
import type { FastifyRequest } from 'fastify';
import { allowedClientOrigin, publicBase, selfOrigin } from '../../account-pages/origins.ts';
import { escapeHtml } from '../../account-pages/render.ts';
import type { AppContext } from '../../context.ts';
import { OAuthFlowService } from '../../services/oauth.ts';
import type { App } from '../app-types.ts';
import { identityOf, requireIdentity } from '../auth.ts';
import { errors } from '../errors.ts';
import { requestLanguage } from '../language.ts';

const COOKIE = 'sf_oauth';
const COOKIE_PATH = '/api/clouds/oauth';
const security: Array<Record<string, string[]>> = [{ bearer: [] }, { temp: [] }];

/** The callback page's script: posts the result to the opener at the exact origin, then closes. */
const RESULT_SCRIPT = `(function () {
  var el = document.getElementById('oauth-result');
  if (!el) return;
  var origin = el.getAttribute('data-origin') || '';
  var result;
  try { result = JSON.parse(el.getAttribute('data-result') || 'null'); } catch (e) { return; }
  var sent = false;
  try {
    if (window.opener && origin) { window.opener.postMessage(result, origin); sent = true; }
  } catch (e) { /* opener gone or cross-origin isolation */ }
  try {
    if (origin === window.location.origin && typeof BroadcastChannel === 'function') {
      var channel = new BroadcastChannel(${JSON.stringify(OAUTH_CHANNEL)});
      channel.postMessage(result);
      channel.close();
      sent = true;
    }
  } catch (e) { /* no BroadcastChannel */ }
  if (sent) setTimeout(function () { window.close(); }, 100);
})();
`;

function cookieOf(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return decodeURIComponent(part.slice(i + 1).trim());
  }
  return undefined;
}

/** True when the call comes from a page of the server's own origin (it can then hold our cookie). */
function fromOwnOrigin(ctx: AppContext, request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  const own = [selfOrigin(request), new URL(publicBase(ctx.config, request)).origin];
  if (typeof origin === 'string') return own.includes(origin);
  return request.headers['sec-fetch-site'] === 'same-origin';
}

function resultPage(result: OAuthResultMessage, origin: string | undefined, text: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Skyferry</title>
</head>
<body>
<main id="oauth-result" data-origin="${escapeHtml(origin ?? '')}" data-result="${escapeHtml(JSON.stringify(result))}">
<p role="status">${escapeHtml(text)}</p>
</main>
<script src="/api/clouds/oauth/result.js" defer></script>
</body>
</html>`;
}

export default async function oauthRoutes(app: App, ctx: AppContext): Promise<void> {
  const flows = new OAuthFlowService({ config: ctx.config, clouds: ctx.clouds, secrets: ctx.secrets, log: ctx.log });

  app.post(
    '/api/clouds/oauth/start',
    {
      bodyLimit: 16 * 1024,
      preHandler: requireIdentity(ctx),
      schema: {
        tags: ['clouds'],
        summary: 'Start connecting (or reauthorizing) an OAuth cloud: answers the URL to open in a pop-up',
        description:
          'Authorization code with PKCE. The service redirects the pop-up to /api/clouds/oauth/callback, which ' +
          `connects the cloud and posts a "${OAUTH_MESSAGE_TYPE}" message to the opener at the exact origin. ` +
          'A visitor connects a temporary cloud. cloud_id reauthorizes an existing cloud (same account only). ' +
          'The desktop client passes its loopback redirect_uri (RFC 8252): the sign-in runs in the system browser ' +
          'and the client loads the callback with the query it received.',
        security,
        body: oauthStartBodySchema,
        response: { 200: envelopeOf(oauthStartDataSchema) },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const origin = allowedClientOrigin(ctx.config, request, body.origin);
      if (!origin) throw errors.badRequest('field_invalid', { field: 'origin' });
      if (body.redirect_uri !== undefined && !isLoopbackRedirectUri(body.redirect_uri)) {
        throw errors.badRequest('field_invalid', { field: 'redirect_uri' });
      }
      const redirectUri = body.redirect_uri ?? `${publicBase(ctx.config, request)}/api/clouds/oauth/callback`;
      const started = await flows.start(
        identityOf(request),
        {
          kind: body.cloud_name,
          ...(body.alias ? { alias: body.alias } : {}),
          ...(body.cloud_id ? { cloudId: body.cloud_id } : {}),
        },
        { redirectUri, origin, bindBrowser: fromOwnOrigin(ctx, request) },
      );
      if (started.nonce) {
        const secure = redirectUri.startsWith('https:') ? '; Secure' : '';
        reply.header(
          'set-cookie',
          `${COOKIE}=${started.nonce}; Path=${COOKIE_PATH}; HttpOnly; SameSite=Lax; Max-Age=600${secure}`,
        );
      }
      return ok({ authorize_url: started.authorizeUrl, state: started.state, expires_at: started.expiresAt });
    },
  );

  app.get(
    '/api/clouds/oauth/callback',
    {
      // The pop-up arrives here from the service's pages: a Cross-Origin-Opener-Policy other than
      // unsafe-none would put it in a new browsing context group and cut it off from its opener.
      // (Route hooks run after the app's, so this wins over the default security header.)
      onSend: async (_request, reply, payload) => {
        reply.header('cross-origin-opener-policy', 'unsafe-none');
        return payload;
      },
      schema: {
        tags: ['clouds'],
        summary:
          "The OAuth redirect URI: finishes the connection and answers a page that reports to the pop-up's opener",
        querystring: oauthCallbackQuerySchema,
      },
    },
    async (request, reply) => {
      const outcome = await flows.callback(request.query, cookieOf(request, COOKIE));
      const lang = requestLanguage(request);
      let result: OAuthResultMessage;
      let text: string;
      if (outcome.ok && outcome.cloud) {
        result = {
          type: OAUTH_MESSAGE_TYPE,
          state: outcome.state,
          ok: true,
          cloud: ctx.clouds.toCloud(outcome.cloud),
          ...(outcome.reauthorized ? { reauthorized: true } : {}),
        };
        text = message(lang, 'success');
      } else {
        const err = outcome.error ?? errors.badRequest('oauth_state_invalid');
        text = message(lang, err.key, err.params);
        result = { type: OAUTH_MESSAGE_TYPE, state: outcome.state, ok: false, code: err.code, msg: text };
      }
      return reply
        .header('set-cookie', `${COOKIE}=; Path=${COOKIE_PATH}; HttpOnly; SameSite=Lax; Max-Age=0`)
        .header('cache-control', 'no-store')
        .type('text/html; charset=utf-8')
        .send(resultPage(result, outcome.origin, text));
    },
  );

  app.get('/api/clouds/oauth/result.js', { schema: { hide: true } }, async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=300').type('text/javascript; charset=utf-8').send(RESULT_SCRIPT),
  );
}
