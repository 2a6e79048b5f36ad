import { z } from 'zod';
import { Code } from './codes.ts';

/** Every response body: `{ code, msg, data }`; code 0 is success. */
export interface Envelope<T> {
  code: number;
  msg: string;
  data: T;
}

export function ok<T>(data: T, msg = 'success'): Envelope<T> {
  return { code: Code.OK, msg, data };
}

export function fail(code: number, msg: string, data: unknown = null): Envelope<unknown> {
  return { code, msg, data };
}

/** The envelope schema around a data schema, for validation and OpenAPI. */
export function envelopeOf<T extends z.ZodType>(data: T) {
  return z.object({ code: z.number().int(), msg: z.string(), data });
}

export const errorEnvelope = z.object({
  code: z.number().int().describe('Non-zero: see the error catalogue'),
  msg: z.string().describe("A message in the caller's language"),
  data: z.unknown().nullable(),
});

export function isEnvelope(value: unknown): value is Envelope<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { code?: unknown }).code === 'number' &&
    typeof (value as { msg?: unknown }).msg === 'string' &&
    'data' in value
  );
}
