import {
  envelopeOf,
  localGrantBodySchema,
  ok,
  operatorUserParamSchema,
  operatorUserSchema,
  operatorUsersDataSchema,
  operatorUsersQuerySchema,
} from '@skyferry/contract';
import type { AppContext } from '../../context.ts';
import type { App } from '../app-types.ts';
import { requireUser, userOf } from '../auth.ts';

const security: Array<Record<string, string[]>> = [{ bearer: [] }];

export default async function operatorRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/api/operator/users',
    {
      preHandler: requireUser(ctx),
      schema: {
        tags: ['operator'],
        summary: "The server's accounts, oldest first, with whether each may use local folders",
        description:
          'Operators only (the first account of the install and SKYFERRY_ADMIN_EMAILS): 403005 for any other ' +
          'account, 140013 for visitors. `roots` are the folders the local-folder kind may use now.',
        security,
        querystring: operatorUsersQuerySchema,
        response: { 200: envelopeOf(operatorUsersDataSchema) },
      },
    },
    async (request) => {
      const { page, page_size } = request.query;
      return ok(await ctx.operator.listUsers(userOf(request), page, page_size));
    },
  );

  app.put(
    '/api/operator/users/:uid/local-folder',
    {
      bodyLimit: 4 * 1024,
      preHandler: requireUser(ctx),
      schema: {
        tags: ['operator'],
        summary: 'Allow a user to use local folders, in a folder of their own under each root, or take it back',
        description:
          'Operators only (403005 otherwise). `granted: true` gives the user `<root>/<folder_name>` under every ' +
          'allowed root (the name they had, else their user id, when none is given), created now (a folder of ' +
          'that name that exists is given as it is); they can ' +
          "connect nothing outside it. `granted: false` takes it back: the folders and files stay, the user's " +
          'local clouds answer 403004 from then on. 404 for an unknown user, 409006 when another user has the ' +
          'name, 400 for a name that is not `LOCAL_FOLDER_NAME_PATTERN`.',
        security,
        params: operatorUserParamSchema,
        body: localGrantBodySchema,
        response: { 200: envelopeOf(operatorUserSchema) },
      },
    },
    async (request) => {
      const { granted, folder_name } = request.body;
      return ok(
        await ctx.operator.setLocalGrant(userOf(request), request.params.uid, { granted, folderName: folder_name }),
      );
    },
  );
}
