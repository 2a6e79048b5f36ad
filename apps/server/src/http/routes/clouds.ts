import { z } from 'zod';
import {
  bindCloudsBodySchema,
  bindCloudsDataSchema,
  cloudIdParamSchema,
  cloudSchema,
  cloudsMeDataSchema,
  connectCloudBodySchema,
  envelopeOf,
  ok,
  reauthorizeCloudBodySchema,
  sortCloudsBodySchema,
  updateCloudBodySchema,
} from '@skyferry/contract';
import type { AppContext } from '../../context.ts';
import type { App } from '../app-types.ts';
import { identityOf, requireIdentity, requireUser, userOf } from '../auth.ts';

const CLOUD_BODY = 64 * 1024;
const security: Array<Record<string, string[]>> = [{ bearer: [] }, { temp: [] }];

export default async function cloudRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/api/v2/clouds/me',
    {
      preHandler: requireIdentity(ctx),
      schema: {
        tags: ['clouds'],
        summary: "The account's clouds and the visitor's temporary clouds",
        description:
          "clouds: the signed-in user's (empty for a visitor); temp_clouds: those of the visitor named by " +
          'x-temp-authorization (also sent while signed in, before binding). Temporary clouds unused for 30 days expire.',
        security,
        response: { 200: envelopeOf(cloudsMeDataSchema) },
      },
    },
    async (request) => {
      const identity = identityOf(request);
      const user = identity.kind === 'user' ? { userId: identity.userId } : undefined;
      return ok(await ctx.clouds.me(user, request.visitor));
    },
  );

  app.post(
    '/api/clouds',
    {
      bodyLimit: CLOUD_BODY,
      preHandler: requireIdentity(ctx),
      schema: {
        tags: ['clouds'],
        summary: 'Connect a cloud (form kinds): the credentials are verified against the service first',
        description:
          'A visitor\'s cloud is temporary. Errors: 400 with the object-storage "cannot be empty" messages; 422001 ' +
          'wrong credentials; 409001 already bound; 403002 limit reached (5 on a free plan when billing is on, 20).',
        security,
        body: connectCloudBodySchema,
        response: { 200: envelopeOf(cloudSchema) },
      },
    },
    async (request) => {
      const { cloud_name, alias, credentials } = request.body;
      const cloud = await ctx.clouds.connect(identityOf(request), { kind: cloud_name, alias, credentials });
      return ok(ctx.clouds.toCloud(cloud));
    },
  );

  app.put(
    '/api/clouds/sort',
    {
      bodyLimit: CLOUD_BODY,
      preHandler: requireIdentity(ctx),
      schema: {
        tags: ['clouds'],
        summary: 'Reorder clouds: sort_val is a JSON array of cloud ids',
        security,
        body: sortCloudsBodySchema,
        response: { 200: envelopeOf(z.null()) },
      },
    },
    async (request) => {
      await ctx.clouds.sort(identityOf(request), request.body.sort_val);
      return ok(null);
    },
  );

  app.post(
    '/api/clouds/bind',
    {
      bodyLimit: CLOUD_BODY,
      preHandler: requireUser(ctx),
      schema: {
        tags: ['clouds'],
        summary: "Bind the visitor's temporary clouds to the account after sign-in",
        description:
          "Signed in, with the visitor's x-temp-authorization. Binds up to 5 of the comma-joined ids (most recently " +
          "used first, within the account's limit, skipping clouds the account already has) and discards the " +
          "visitor's other temporary clouds. Only within 30 minutes of a sign-in that sent `sign_in_nonce`, with " +
          'that nonce again (code 403020 otherwise), so a session this browser did not sign in to cannot take them.',
        security: [{ bearer: [], temp: [] }],
        body: bindCloudsBodySchema,
        response: { 200: envelopeOf(bindCloudsDataSchema) },
      },
    },
    async (request) => {
      const user = userOf(request);
      const signedInHere = await ctx.tokens.signedInHere(user.sessionId, request.body.sign_in_nonce);
      return ok(
        await ctx.clouds.bind({ userId: user.userId }, request.visitor, request.body.relation_id, { signedInHere }),
      );
    },
  );

  app.put(
    '/api/clouds/:id',
    {
      bodyLimit: CLOUD_BODY,
      preHandler: requireIdentity(ctx),
      schema: {
        tags: ['clouds'],
        summary: "Store a cloud's reported space, or rename it (alias)",
        security,
        params: cloudIdParamSchema,
        body: updateCloudBodySchema,
        response: { 200: envelopeOf(cloudSchema) },
      },
    },
    async (request) => {
      const cloud = await ctx.clouds.update(identityOf(request), request.params.id, request.body);
      return ok(ctx.clouds.toCloud(cloud));
    },
  );

  app.put(
    '/api/clouds/:id/credentials',
    {
      bodyLimit: CLOUD_BODY,
      preHandler: requireIdentity(ctx),
      schema: {
        tags: ['clouds'],
        summary: 'Reauthorize a cloud with new credentials (verified); its settings stay',
        security,
        params: cloudIdParamSchema,
        body: reauthorizeCloudBodySchema,
        response: { 200: envelopeOf(cloudSchema) },
      },
    },
    async (request) => {
      const cloud = await ctx.clouds.reauthorize(identityOf(request), request.params.id, request.body.credentials);
      return ok(ctx.clouds.toCloud(cloud));
    },
  );

  app.delete(
    '/api/clouds/:id',
    {
      preHandler: requireIdentity(ctx),
      schema: {
        tags: ['clouds'],
        summary: 'Remove a cloud (its stored credentials are deleted); tasks running with it are canceled (state 4)',
        security,
        params: cloudIdParamSchema,
        response: { 200: envelopeOf(z.null()) },
      },
    },
    async (request) => {
      const identity = identityOf(request);
      await ctx.clouds.remove(identity, request.params.id);
      if (identity.kind === 'user') await ctx.tasks.cancelUsingCloud(identity.userId, request.params.id);
      return ok(null);
    },
  );
}
