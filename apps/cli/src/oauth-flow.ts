/**
 * `skyferry remotes add <name> <oauth kind>` without a token: the OAuth authorization-code flow for
 * an installed app (RFC 8252) with PKCE (RFC 7636). A server on 127.0.0.1 receives the redirect;
 * the address to open is printed (and opened in the browser unless --no-browser: then open it on
 * any machine, and paste the address the browser ends on when it cannot reach this one).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { createInterface } from 'node:readline';
import { CLOUD_KIND_INFO, type CloudKind } from '@skyferry/contract';
import {
  OAUTH_KINDS,
  createPkce,
  exchangeCode,
  oauthClientOf,
  oauthServiceInfo,
  type OAuthClientCredentials,
} from '@skyferry/providers';
import { UsageError } from './errors.ts';
import type { CliIo } from './io.ts';

export interface FlowOptions {
  kind: CloudKind;
  /** The client given with the remote (client_id, client_secret), else the configured one. */
  client?: OAuthClientCredentials;
  /** Endpoint overrides (rclone's auth_url and token_url). */
  authUrl?: string;
  tokenUrl?: string;
  openBrowser: boolean;
}

/** The grant as a remote keeps it. */
export interface FlowResult {
  access_token: string;
  refresh_token?: string;
  expiry?: string;
}

const PAGE = (text: string) =>
  `<!doctype html><meta charset="utf-8"><title>Skyferry</title><p>${text.replace(/</g, '&lt;')}</p>`;

function openInBrowser(url: string): void {
  const command = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  try {
    const child = spawn(command, [url], { stdio: 'ignore', detached: true });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // No browser here: the printed address is the way.
  }
}

/** Runs the flow; answers the tokens. */
export async function authorize(o: FlowOptions, io: CliIo): Promise<FlowResult> {
  const spec = OAUTH_KINDS[o.kind];
  if (!spec) throw new UsageError(`${o.kind} is not an OAuth kind`);
  const client = o.client ?? oauthClientOf(spec.service);
  const name = CLOUD_KIND_INFO[o.kind].displayName;
  if (!client) {
    const env = spec.service.toUpperCase();
    throw new UsageError(
      `${name} needs an OAuth client: set ${env}_CLIENT_ID and ${env}_CLIENT_SECRET, or give client_id= and client_secret=` +
        ' (or import a remote with its token: skyferry remotes import-rclone)',
    );
  }
  const info = oauthServiceInfo(spec.service);
  const pkce = createPkce();
  const state = randomBytes(16).toString('base64url');
  let server: Server | undefined;
  let lines: ReturnType<typeof createInterface> | undefined;
  try {
    const got = new Promise<URL>((resolve, reject) => {
      server = createServer((req, res) => {
        const url = new URL(req.url ?? '/', 'http://127.0.0.1');
        if (url.searchParams.get('state') !== state) {
          res
            .writeHead(400, { 'content-type': 'text/html; charset=utf-8' })
            .end(PAGE('Not the sign-in Skyferry is waiting for.'));
          return;
        }
        const ok = url.searchParams.has('code');
        res
          .writeHead(ok ? 200 : 400, { 'content-type': 'text/html; charset=utf-8' })
          .end(PAGE(ok ? 'Skyferry is connected: you may close this page.' : 'The sign-in did not finish.'));
        resolve(url);
      });
      server.on('error', reject);
      server.listen(0, '127.0.0.1');
      io.signal?.addEventListener('abort', () => reject(new UsageError('canceled')), { once: true });
      // Without a browser here, the address the browser ended on may be pasted instead.
      if (!o.openBrowser && io.stdin) {
        lines = createInterface({ input: io.stdin });
        lines.on('line', (line) => {
          try {
            const pasted = new URL(line.trim());
            if (pasted.searchParams.get('state') === state) resolve(pasted);
          } catch {
            // not an address: keep waiting
          }
        });
      }
    });
    await new Promise<void>((resolve) => (server as Server).once('listening', () => resolve()));
    const port = ((server as Server).address() as { port: number }).port;
    const redirectUri = `http://127.0.0.1:${port}/`;
    const url = new URL(o.authUrl ?? info.authorizeUrl);
    const params: Record<string, string> = {
      ...info.authorizeParams,
      client_id: client.clientId,
      redirect_uri: redirectUri,
      response_type: 'code',
      state,
      code_challenge: pkce.challenge,
      code_challenge_method: pkce.method,
      ...(spec.scopes.length ? { scope: spec.scopes.join(' ') } : {}),
    };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    io.stderr.write(
      `To connect ${name}, open this address in a browser and allow Skyferry:\n${url.toString()}\n` +
        (o.openBrowser
          ? ''
          : 'On another machine, the browser ends on an address it cannot open: paste that address here.\n'),
    );
    if (o.openBrowser) openInBrowser(url.toString());
    const back = await got;
    const code = back.searchParams.get('code');
    if (!code) {
      const why = back.searchParams.get('error_description') ?? back.searchParams.get('error') ?? 'no code';
      throw new UsageError(`${name} did not allow the connection: ${why}`);
    }
    const token = await exchangeCode(
      o.tokenUrl ?? info.tokenUrl,
      client,
      { code, redirectUri, codeVerifier: pkce.verifier },
      io.signal,
    );
    return {
      access_token: token.access_token,
      ...(token.refresh_token ? { refresh_token: token.refresh_token } : {}),
      ...(token.expiry ? { expiry: String(token.expiry) } : {}),
    };
  } finally {
    lines?.close();
    server?.close();
  }
}
