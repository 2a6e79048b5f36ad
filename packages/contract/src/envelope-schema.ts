import { z } from 'zod';

// Apart from envelope.ts: the web client checks envelopes without loading zod.

/** The envelope schema around a data schema, for validation and OpenAPI. */
export function envelopeOf<T extends z.ZodType>(data: T) {
  return z.object({ code: z.number().int(), msg: z.string(), data });
}

export const errorEnvelope = z.object({
  code: z.number().int().describe('Non-zero: see the error catalogue'),
  msg: z.string().describe("A message in the caller's language"),
  data: z.unknown().nullable(),
});
