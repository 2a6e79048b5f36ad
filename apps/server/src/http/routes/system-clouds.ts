import { envelopeOf, ok, systemCloudsDataSchema } from '@skyferry/contract';
import type { AppContext } from '../../context.ts';
import type { App } from '../app-types.ts';
import { optionalIdentity } from '../auth.ts';
import { requestLanguage } from '../language.ts';

export default async function systemCloudRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/api/system/clouds',
    {
      preHandler: optionalIdentity(ctx),
      schema: {
        tags: ['clouds'],
        summary: 'Every cloud kind: name, capability flags, credential fields, and whether the caller may use it here',
        description:
          'Works without an identity. The local-folder kind is available only to the operator and to users the ' +
          'operator allowed (never to visitors); `roots` then lists the folders the caller may connect (the ' +
          "operator's SKYFERRY_LOCAL_ROOTS, or the user's own folder under each), and `reason` says why not otherwise.",
        security: [{}, { bearer: [] }, { temp: [] }],
        response: { 200: envelopeOf(systemCloudsDataSchema) },
      },
    },
    async (request) => {
      const identity = request.identity;
      return ok(await ctx.clouds.kinds(identity, requestLanguage(request)));
    },
  );
}
