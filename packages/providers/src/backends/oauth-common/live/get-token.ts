import { createServer } from 'node:http';
import { createPkce, exchangeCode } from '../token.ts';
import { OAUTH_KINDS, oauthServiceInfo } from '../services.ts';

/**
 * Gets a refresh token for a live run: opens the service's consent page (you open the printed URL
 * in a browser), catches the redirect on http://127.0.0.1:<port>/ and prints the environment lines
 * `npm run test:live` reads. The OAuth client must allow that redirect URI.
 *   SKYFERRY_LIVE_GOOGLE_CLIENT_ID=... SKYFERRY_LIVE_GOOGLE_CLIENT_SECRET=... \
 *     node packages/providers/src/backends/oauth-common/live/get-token.ts google_drive
 */

const kind = process.argv[2] ?? '';
const info = OAUTH_KINDS[kind];
if (!info) {
  process.stderr.write(`usage: get-token.ts <kind>   (one of ${Object.keys(OAUTH_KINDS).join(', ')})\n`);
  process.exit(2);
}
const S = info.service.toUpperCase();
const clientId = process.env[`SKYFERRY_LIVE_${S}_CLIENT_ID`];
const clientSecret = process.env[`SKYFERRY_LIVE_${S}_CLIENT_SECRET`];
if (!clientId || !clientSecret) {
  process.stderr.write(`set SKYFERRY_LIVE_${S}_CLIENT_ID and SKYFERRY_LIVE_${S}_CLIENT_SECRET\n`);
  process.exit(2);
}
const port = Number(process.env.SKYFERRY_LIVE_REDIRECT_PORT ?? 53682);
const redirectUri = `http://127.0.0.1:${port}/`;
const endpoints = oauthServiceInfo(info.service);
const pkce = createPkce();
const state = pkce.verifier.slice(0, 16);
const url = new URL(endpoints.authorizeUrl);
url.searchParams.set('response_type', 'code');
url.searchParams.set('client_id', clientId);
url.searchParams.set('redirect_uri', redirectUri);
if (info.scopes.length) url.searchParams.set('scope', info.scopes.join(' '));
url.searchParams.set('state', state);
url.searchParams.set('code_challenge', pkce.challenge);
url.searchParams.set('code_challenge_method', pkce.method);
for (const [k, v] of Object.entries(endpoints.authorizeParams)) url.searchParams.set(k, v);

const server = createServer((req, res) => {
  const q = new URL(req.url ?? '/', redirectUri).searchParams;
  if (q.get('state') !== state) {
    res.writeHead(400).end('state mismatch');
    return;
  }
  const code = q.get('code');
  if (!code) {
    res.writeHead(400).end(`no code: ${q.get('error') ?? 'unknown error'}`);
    server.close();
    process.exitCode = 1;
    return;
  }
  exchangeCode(endpoints.tokenUrl, { clientId, clientSecret }, { code, redirectUri, codeVerifier: pkce.verifier })
    .then((token) => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('Done: you can close this window.');
      process.stdout.write(`SKYFERRY_LIVE_${kind.toUpperCase()}_TOKEN=${token.refresh_token ?? token.access_token}\n`);
      process.stdout.write(
        `SKYFERRY_LIVE_${S}_CLIENT_ID=${clientId}\nSKYFERRY_LIVE_${S}_CLIENT_SECRET=${clientSecret}\n`,
      );
      server.close();
    })
    .catch((err: unknown) => {
      res.writeHead(500).end(String(err));
      process.stderr.write(`${String(err)}\n`);
      server.close();
      process.exitCode = 1;
    });
});
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`Open this URL in a browser and grant access:\n\n${url.toString()}\n\n`);
});
