import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { HEADERS } from '@skyferry/contract';
import type { AppContext } from '../context.ts';
import { errors } from './errors.ts';

/** Who is calling: a signed-in user, or a visitor with a temporary identity (GET /api/token). */
export type Identity =
  { kind: 'user'; userId: string; email: string; sessionId: string } | { kind: 'visitor'; visitorId: string };
export type UserIdentity = Extract<Identity, { kind: 'user' }>;
export type VisitorIdentity = Extract<Identity, { kind: 'visitor' }>;

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the requireUser / requireIdentity / optionalIdentity pre-handlers. */
    identity?: Identity;
    /** The visitor of x-temp-authorization, when valid (set by the same pre-handlers, also for users). */
    visitor?: VisitorIdentity;
  }
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The token of an Authorization-style header: "Bearer <token>" or a bare token. undefined when the
 * header is absent or blank; '' when it is present but malformed (treated as an invalid token).
 */
export function bearerToken(value: string | undefined): string | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  const m = /^(?:bearer\s+)?(\S+)$/i.exec(v);
  return m?.[1] && m[1].length <= 512 ? m[1] : '';
}

async function resolveUser(ctx: AppContext, request: FastifyRequest): Promise<UserIdentity | undefined | 'invalid'> {
  const token = bearerToken(header(request, HEADERS.authorization));
  if (token === undefined) return undefined;
  const owner = token ? await ctx.tokens.authenticate(token, { ip: request.ip }) : undefined;
  if (!owner) return 'invalid';
  return { kind: 'user', userId: owner.userId, email: owner.email, sessionId: owner.sessionId };
}

async function resolveVisitor(ctx: AppContext, request: FastifyRequest): Promise<VisitorIdentity | undefined> {
  const token = bearerToken(header(request, HEADERS.tempAuthorization));
  if (!token) return undefined;
  const visitorId = await ctx.tokens.authenticateVisitor(token);
  return visitorId ? { kind: 'visitor', visitorId } : undefined;
}

/**
 * Pre-handler: a signed-in user is required. A missing, invalid, expired or revoked access token
 * answers code 140013 (HTTP 401); the client refreshes and retries.
 */
export function requireUser(ctx: AppContext): preHandlerAsyncHookHandler {
  return async function requireUserHandler(request: FastifyRequest, _reply: FastifyReply) {
    const user = await resolveUser(ctx, request);
    if (!user || user === 'invalid') throw errors.unauthenticated();
    request.identity = user;
    request.visitor = await resolveVisitor(ctx, request);
  };
}

/**
 * Pre-handler: a user, else a visitor from x-temp-authorization. An Authorization header that is
 * present but not valid is 140013 (no silent fall-back to the visitor), as is having neither.
 */
export function requireIdentity(ctx: AppContext): preHandlerAsyncHookHandler {
  return async function requireIdentityHandler(request: FastifyRequest, _reply: FastifyReply) {
    const user = await resolveUser(ctx, request);
    if (user === 'invalid') throw errors.unauthenticated();
    const visitor = await resolveVisitor(ctx, request);
    request.visitor = visitor;
    request.identity = user ?? visitor;
    if (!request.identity) throw errors.unauthenticated();
  };
}

/** Pre-handler: sets the identity when one is given and valid; never rejects. */
export function optionalIdentity(ctx: AppContext): preHandlerAsyncHookHandler {
  return async function optionalIdentityHandler(request: FastifyRequest, _reply: FastifyReply) {
    const user = await resolveUser(ctx, request);
    const visitor = await resolveVisitor(ctx, request);
    request.visitor = visitor;
    request.identity = user && user !== 'invalid' ? user : visitor;
  };
}

/** The identity set by a pre-handler (throws 140013 when the route forgot one). */
export function identityOf(request: FastifyRequest): Identity {
  if (!request.identity) throw errors.unauthenticated();
  return request.identity;
}

/** The signed-in user (throws 140013 for visitors and anonymous callers). */
export function userOf(request: FastifyRequest): UserIdentity {
  const identity = request.identity;
  if (!identity || identity.kind !== 'user') throw errors.unauthenticated();
  return identity;
}

/**
 * Pre-handler of the support calls: a signed-in user, else a visitor. The spec's feedback dialog
 * sends a visitor's temporary token as a bearer Authorization, so a bearer token that is not an
 * access token counts as a visitor token there (x-temp-authorization works too); neither is 140013.
 */
export function requireSupportIdentity(ctx: AppContext): preHandlerAsyncHookHandler {
  return async function requireSupportIdentityHandler(request: FastifyRequest, _reply: FastifyReply) {
    const user = await resolveUser(ctx, request);
    if (user && user !== 'invalid') {
      request.identity = user;
      return;
    }
    const bearer = bearerToken(header(request, HEADERS.authorization));
    const visitorId = bearer ? await ctx.tokens.authenticateVisitor(bearer) : undefined;
    const visitor = visitorId ? { kind: 'visitor' as const, visitorId } : await resolveVisitor(ctx, request);
    if (!visitor || (user === 'invalid' && !visitorId)) throw errors.unauthenticated();
    request.visitor = visitor;
    request.identity = visitor;
  };
}
