import { createServer, type Server } from 'node:http';
import { DESKTOP_OAUTH_REDIRECT_PATH } from '@skyferry/contract';

/** The loopback redirect's path (RFC 8252 section 7.3); the operator registers the whole address. */
export const OAUTH_REDIRECT_PATH = DESKTOP_OAUTH_REDIRECT_PATH;
/** The parameters a service sends back; nothing else is passed on. */
const RELAYED = ['code', 'state', 'error', 'error_description'];

export interface OAuthRelayOptions {
  /** The port to listen on (fixed, so the address can be registered with the services); 0: any. */
  port: number;
  /**
   * Hands the redirect's query to the window that started the sign-in (which finishes it at the
   * server, holding the sign-in's browser binding). False when no sign-in is waiting.
   */
  deliver(query: URLSearchParams): boolean;
  /** The page the system browser shows afterwards. */
  page?: (delivered: boolean) => string;
}

function defaultPage(delivered: boolean): string {
  const text = delivered
    ? 'Signed in. You can close this tab and go back to Skyferry.'
    : 'No Skyferry sign-in is waiting for this. Start again from Skyferry.';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer"><title>Skyferry</title></head><body><p role="status">${text}</p></body></html>`;
}

/**
 * Sign-in for cloud services runs in the system browser (services refuse embedded browsers), which
 * the service sends back to this loopback address. The relay passes the code and state on to the
 * app's sign-in window; the server exchanges the code there, as it would from its own callback.
 */
export class OAuthRelay {
  private server: Server | null = null;
  private readonly options: OAuthRelayOptions;
  private address: string | null = null;

  constructor(options: OAuthRelayOptions) {
    this.options = options;
  }

  /** Listens on 127.0.0.1; resolves with the redirect address (the chosen port when it is taken). */
  async start(): Promise<string> {
    if (this.address) return this.address;
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (req.method !== 'GET' || url.pathname !== OAUTH_REDIRECT_PATH) {
        res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found');
        return;
      }
      const query = new URLSearchParams();
      for (const key of RELAYED) {
        const value = url.searchParams.get(key);
        if (value !== null) query.set(key, value.slice(0, 8192));
      }
      const delivered = query.has('state') && this.options.deliver(query);
      res
        .writeHead(delivered ? 200 : 409, {
          'content-type': 'text/html; charset=utf-8',
          'cache-control': 'no-store',
          'content-security-policy': "default-src 'none'",
          'referrer-policy': 'no-referrer',
        })
        .end((this.options.page ?? defaultPage)(delivered));
    });
    const listen = (port: number) =>
      new Promise<number>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => {
          server.off('error', reject);
          const addr = server.address();
          resolve(typeof addr === 'object' && addr ? addr.port : port);
        });
      });
    let port: number;
    try {
      port = await listen(this.options.port);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || this.options.port === 0) throw err;
      port = await listen(0);
    }
    this.server = server;
    this.address = `http://127.0.0.1:${port}${OAUTH_REDIRECT_PATH}`;
    return this.address;
  }

  get redirectUri(): string | null {
    return this.address;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    this.address = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
