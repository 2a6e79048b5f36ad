import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { Code, fail, message, type Language } from '@skyferry/contract';
import { ProviderError } from '@skyferry/providers';
import { mapFileError } from '../services/files/errors.ts';
import { ApiError } from './errors.ts';
import { requestLanguage } from './language.ts';
import { applySecurityHeaders } from './security.ts';

function send(reply: FastifyReply, status: number, code: number, msg: string, data: unknown = null) {
  // The request id (also in X-Request-Id and the server's log lines) lets a user's report be found.
  return reply
    .status(status)
    .type('application/json; charset=utf-8')
    .send({ ...fail(code, msg, data), request_id: reply.request.id });
}

/** A readable summary of zod issues: "body.email: Invalid email address; querystring.page: ...". */
function describeValidation(error: FastifyError & { validation?: unknown; validationContext?: string }): string {
  if (hasZodFastifySchemaValidationErrors(error)) {
    return error.validation
      .map((issue) => {
        const where = [
          error.validationContext,
          ...(issue.instancePath ? issue.instancePath.split('/').filter(Boolean) : []),
        ]
          .filter(Boolean)
          .join('.');
        return `${where}: ${issue.message}`;
      })
      .join('; ');
  }
  return error.message;
}

/** Every error leaves as the envelope with the right code and HTTP status, never a stack trace. */
export function installEnvelopeHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const lang: Language = requestLanguage(request);
    if (error instanceof ApiError) {
      return send(reply, error.status, error.code, message(lang, error.key, error.params), error.data);
    }
    if (ProviderError.is(error)) {
      // A cloud's failure no service mapped where it happened still gets the catalogue's answer.
      const mapped = mapFileError(error).error;
      request.log.warn({ err: error }, 'cloud failure mapped by the error handler');
      return send(reply, mapped.status, mapped.code, message(lang, mapped.key, mapped.params), mapped.data);
    }
    if (error.validation) {
      return send(
        reply,
        400,
        Code.BAD_REQUEST,
        message(lang, 'invalid_request', { detail: describeValidation(error) }),
      );
    }
    switch (error.code) {
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return send(reply, 400, Code.BAD_REQUEST, message(lang, 'invalid_json'));
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return send(reply, 413, Code.PAYLOAD_TOO_LARGE, message(lang, 'body_too_large'));
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return send(reply, 400, Code.BAD_REQUEST, message(lang, 'invalid_request', { detail: error.message }));
      default:
        break;
    }
    if (error instanceof SyntaxError) {
      return send(reply, 400, Code.BAD_REQUEST, message(lang, 'invalid_json'));
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      const code = status === 404 ? Code.NOT_FOUND : status === 429 ? Code.RATE_LIMITED : Code.BAD_REQUEST;
      return send(
        reply,
        status,
        code,
        message(lang, code === Code.RATE_LIMITED ? 'too_many_requests' : 'invalid_request', { detail: error.message }),
      );
    }
    request.log.error({ err: error }, 'unhandled error');
    return send(reply, 500, Code.INTERNAL, message(lang, 'server_error'));
  });
}

/**
 * Errors Fastify raises before routing (Fastify's `frameworkErrors`): a path that is not valid
 * percent-encoding, or a path parameter over the router's length limit. They too leave as the
 * envelope (with the security headers), without echoing the path.
 */
export function frameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const lang = requestLanguage(request);
  // Fastify answers these outside the app's hooks: the headers are set here.
  applySecurityHeaders(reply, request.raw.url ?? '');
  reply.header('x-request-id', request.id);
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      return send(reply, 400, Code.BAD_REQUEST, message(lang, 'invalid_request', { detail: 'malformed URL' }));
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return send(reply, 414, Code.BAD_REQUEST, message(lang, 'invalid_request', { detail: 'path too long' }));
    default:
      request.log.error({ err: error }, 'unhandled error');
      return send(reply, 500, Code.INTERNAL, message(lang, 'server_error'));
  }
}

/** The envelope for an unknown API path. */
export function apiNotFound(request: FastifyRequest, reply: FastifyReply) {
  const lang = requestLanguage(request);
  return send(
    reply,
    404,
    Code.NOT_FOUND,
    message(lang, 'route_not_found', { method: request.method, path: request.url.split('?')[0] ?? '' }),
  );
}
