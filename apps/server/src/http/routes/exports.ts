import {
  envelopeOf,
  exportProgressSchema,
  exportTaskParamSchema,
  ok,
  START_UPLOAD_BODY_LIMIT,
  startUploadBodySchema,
  startUploadDataSchema,
} from '@skyferry/contract';
import type { AppContext } from '../../context.ts';
import type { App } from '../app-types.ts';
import { identityOf, requireIdentity } from '../auth.ts';
import { requestLanguage } from '../language.ts';

const security: Array<Record<string, string[]>> = [{ bearer: [] }, { temp: [] }];
const tags = ['exports'];

/** Exports into a cloud (the spec's embedded-app host calls): start one, poll it every second. */
export default async function exportRoutes(app: App, ctx: AppContext): Promise<void> {
  const auth = requireIdentity(ctx);

  app.post(
    '/api/third-api/start-upload',
    {
      bodyLimit: START_UPLOAD_BODY_LIMIT,
      preHandler: auth,
      schema: {
        tags,
        summary: 'Write a file (base64_data or a download_url) into a folder of one of your clouds, on the server',
        description:
          'Answers `{task_id}` at once; poll `/api/third-api/poll-progress/{taskId}`. A download_url on a loopback, ' +
          'private or reserved network is refused (403003) unless SKYFERRY_ALLOW_PRIVATE_NETWORKS allows it, as for ' +
          'clouds; redirects are followed (at most 5, each checked). Inline data is at most 16 MB; a download at most ' +
          'SKYFERRY_EXPORT_MAX_BYTES (413001). A taken name gets " (1)", " (2)"...',
        security,
        body: startUploadBodySchema,
        response: { 200: envelopeOf(startUploadDataSchema) },
      },
    },
    async (request) => ok(await ctx.exports.start(identityOf(request), request.body)),
  );

  app.get(
    '/api/third-api/poll-progress/:taskId',
    {
      preHandler: auth,
      schema: {
        tags,
        summary: 'An export’s status (0 waiting, 1 success, -2 failure) and percent',
        description: 'Only its owner can poll it (404 for anyone else). On -2, `error` says why.',
        security,
        params: exportTaskParamSchema,
        response: { 200: envelopeOf(exportProgressSchema) },
      },
    },
    async (request) => ok(await ctx.exports.poll(identityOf(request), request.params.taskId, requestLanguage(request))),
  );
}
