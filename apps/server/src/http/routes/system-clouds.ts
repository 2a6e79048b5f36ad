import { envelopeOf, ok, systemCloudsDataSchema } from '@skyferry/contract';
import type { AppContext } from '../../context.ts';
import type { App } from '../app-types.ts';

export default async function systemCloudRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/api/system/clouds',
    {
      schema: {
        tags: ['clouds'],
        summary: 'Every cloud kind: name, capability flags, credential fields, and whether it is available here',
        response: { 200: envelopeOf(systemCloudsDataSchema) },
      },
    },
    async () => ok(ctx.clouds.kinds()),
  );
}
