import { z } from 'zod';
import { envelopeOf, ok } from '@skyferry/contract';
import type { AppContext } from '../../context.ts';
import type { App } from '../app-types.ts';

export default async function systemRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['system'],
        summary: 'Liveness and database readiness',
        response: { 200: envelopeOf(z.object({ status: z.literal('ok'), database: z.enum(['sqlite', 'postgres']) })) },
      },
    },
    async () => {
      await ctx.health();
      return ok({ status: 'ok' as const, database: ctx.db.dialect });
    },
  );
}
