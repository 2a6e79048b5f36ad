import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { OAuthServer } from '../oauth/server.ts';
import { bearerToken, listen, makeRequest, Router, type EmuRequest, type RunningServer } from './http.ts';

/**
 * What every service emulator shares: one OAuth authorization server that vouches for bearer
 * tokens, a log of the requests it served, and faults a test can inject on demand (a rate-limit
 * answer with Retry-After, a server error, an access token that has just expired). Each service
 * formats these in its own documented error shape.
 */

export type FaultKind = 'rate_limit' | 'server_error' | 'token_expired';

export interface FaultSpec {
  kind: FaultKind;
  /** How many matching requests get the fault (default 1). */
  count?: number;
  /** rate_limit: the Retry-After value in seconds (may be fractional in tests; sent rounded up unless `exact`). */
  retryAfterSeconds?: number;
  /** server_error: the status (default 503). */
  status?: number;
  /** Service-specific flavour, e.g. Drive's `userRateLimitExceeded` vs a 429, Dropbox's `too_many_write_operations`. */
  variant?: string;
  /** Which requests it applies to (default: any authenticated API request). */
  match?: (req: EmuRequest) => boolean;
}

export interface RequestRecord {
  at: number;
  method: string;
  path: string;
  status: number;
  fault?: FaultKind;
}

export interface AuthContext {
  /** The account the token belongs to. */
  user: string;
  clientId: string;
  scope: string;
}

export interface RouteOptions {
  /** No bearer token needed (pre-authenticated upload and download URLs). */
  public?: boolean;
}

export type ServiceHandler = (req: EmuRequest, res: ServerResponse, auth: AuthContext) => Promise<void> | void;

export interface ServiceOptions {
  oauth: OAuthServer;
  /** Added before every answer, to let concurrent requests overlap as they do on the network. */
  latencyMs?: number;
}

export abstract class ServiceEmulator {
  protected readonly oauth: OAuthServer;
  protected readonly router = new Router();
  private readonly publicRoutes = new Set<string>();
  private server: RunningServer | undefined;
  private readonly rules: Array<FaultSpec & { remaining: number }> = [];
  private readonly latencyMs: number;
  /** Every request served, oldest first (tests assert on retries and timing). */
  readonly requests: RequestRecord[] = [];

  constructor(options: ServiceOptions) {
    this.oauth = options.oauth;
    this.latencyMs = options.latencyMs ?? 0;
  }

  get url(): string {
    if (!this.server) throw new Error('emulator not started');
    return this.server.url;
  }

  /** Registers a route; handlers of non-public routes receive the token's account. */
  protected route(method: string, path: string, handler: ServiceHandler, options: RouteOptions = {}): void {
    const key = `${method.toUpperCase()} ${path}`;
    if (options.public) this.publicRoutes.add(key);
    this.router.on(method, path, async (req, res) => {
      const isPublic = this.publicRoutes.has(key);
      const fault = this.takeFault(req, isPublic);
      if (fault) {
        this.record(
          req,
          fault.kind === 'rate_limit' ? 429 : fault.kind === 'token_expired' ? 401 : (fault.status ?? 503),
          fault.kind,
        );
        if (fault.kind === 'rate_limit')
          return this.sendRateLimited(req, res, fault.retryAfterSeconds ?? 1, fault.variant);
        if (fault.kind === 'token_expired') return this.sendUnauthorized(req, res, 'expired');
        return this.sendServerError(req, res, fault.status ?? 503);
      }
      let auth: AuthContext = { user: '', clientId: '', scope: '' };
      if (!isPublic) {
        const token = bearerToken(req);
        const verified = token ? this.oauth.verify(token) : 'missing';
        if (typeof verified === 'string') {
          this.record(req, 401);
          return this.sendUnauthorized(req, res, verified);
        }
        auth = verified;
      }
      res.once('finish', () => this.record(req, res.statusCode));
      await handler(req, res, auth);
    });
  }

  private record(req: EmuRequest, status: number, fault?: FaultKind): void {
    this.requests.push({ at: Date.now(), method: req.method, path: req.path, status, ...(fault ? { fault } : {}) });
  }

  private takeFault(req: EmuRequest, isPublic: boolean): FaultSpec | undefined {
    for (let i = 0; i < this.rules.length; i++) {
      const rule = this.rules[i]!;
      const applies = rule.match ? rule.match(req) : !isPublic;
      if (!applies) continue;
      if (rule.kind === 'token_expired' && isPublic) continue;
      rule.remaining -= 1;
      if (rule.remaining <= 0) this.rules.splice(i, 1);
      return rule;
    }
    return undefined;
  }

  /** Injects a fault for the next matching request(s). */
  inject(spec: FaultSpec): void {
    this.rules.push({ ...spec, remaining: spec.count ?? 1 });
  }

  /** Shorthand: the next `count` API requests are rate limited with Retry-After. */
  rateLimitNext(count = 1, retryAfterSeconds = 1, variant?: string, match?: (req: EmuRequest) => boolean): void {
    this.inject({
      kind: 'rate_limit',
      count,
      retryAfterSeconds,
      ...(variant ? { variant } : {}),
      ...(match ? { match } : {}),
    });
  }

  /** Shorthand: the next authenticated request answers 401 as if its token had expired. */
  expireTokenNext(match?: (req: EmuRequest) => boolean): void {
    this.inject({ kind: 'token_expired', ...(match ? { match } : {}) });
  }

  clearFaults(): void {
    this.rules.length = 0;
  }

  pendingFaults(): number {
    return this.rules.reduce((n, r) => n + r.remaining, 0);
  }

  /** Requests answered with a fault of this kind. */
  faultsServed(kind: FaultKind): RequestRecord[] {
    return this.requests.filter((r) => r.fault === kind);
  }

  protected abstract sendRateLimited(
    req: EmuRequest,
    res: ServerResponse,
    retryAfterSeconds: number,
    variant?: string,
  ): void;
  protected abstract sendUnauthorized(
    req: EmuRequest,
    res: ServerResponse,
    reason: 'expired' | 'invalid' | 'missing',
  ): void;
  protected abstract sendServerError(req: EmuRequest, res: ServerResponse, status: number): void;
  /** Answer for a path no route matches. */
  protected abstract sendNoRoute(req: EmuRequest, res: ServerResponse): void;

  async start(): Promise<this> {
    this.server = await listen(async (raw: IncomingMessage, res: ServerResponse, base: string) => {
      if (this.latencyMs > 0) await sleep(this.latencyMs);
      const method = (raw.method ?? 'GET').toUpperCase();
      const path = decodeURIComponent(new URL(raw.url ?? '/', base).pathname);
      const found = this.router.match(method, path);
      const req = makeRequest(raw, found?.params ?? {}, base);
      if (!found) {
        this.record(req, 404);
        return this.sendNoRoute(req, res);
      }
      await found.handler(req, res);
    });
    return this;
  }

  async close(): Promise<void> {
    await this.server?.close();
    this.server = undefined;
  }
}

/** Retry-After header value: whole seconds as services send them (at least 1 unless the test asked for 0). */
export function retryAfterHeader(seconds: number): string {
  return String(seconds <= 0 ? 0 : Math.max(1, Math.ceil(seconds)));
}
