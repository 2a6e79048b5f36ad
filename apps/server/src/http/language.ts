import type { FastifyRequest } from 'fastify';
import { HEADERS, languageFromHeader, toLanguage, type Language } from '@skyferry/contract';

/** The caller's language: the client's language header, then Accept-Language, then English. */
export function requestLanguage(request: FastifyRequest): Language {
  const explicit = request.headers[HEADERS.language];
  const fromExplicit = toLanguage(Array.isArray(explicit) ? explicit[0] : explicit);
  if (fromExplicit) return fromExplicit;
  return languageFromHeader(request.headers['accept-language']);
}
