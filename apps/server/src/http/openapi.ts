import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import { CODE_MEANINGS, FRONT_END_VERSION } from '@skyferry/contract';

/** The OpenAPI document at /api/openapi.json and an interactive reference at /api/docs. */
export async function installOpenApi(app: FastifyInstance, publicUrl: string): Promise<void> {
  const codes = Object.entries(CODE_MEANINGS)
    .map(([code, meaning]) => `| ${code} | ${meaning} |`)
    .join('\n');
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Skyferry API',
        version: FRONT_END_VERSION,
        description:
          'Every response is the envelope `{ code, msg, data }`; code 0 is success and `msg` is in the ' +
          "caller's language (`X-Language` or `Accept-Language`).\n\n| code | meaning |\n|---|---|\n" +
          codes,
      },
      servers: [{ url: publicUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'Access token from sign-in or refresh' },
          temp: {
            type: 'apiKey',
            in: 'header',
            name: 'X-Temp-Authorization',
            description: 'Visitor token from GET /api/token',
          },
          appToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'An app token from POST /ecology/v1/app-tokens (or the app_token query parameter)',
          },
        },
      },
    },
    transform: jsonSchemaTransform,
  });
  app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await app.register(swaggerUi, {
    routePrefix: '/api/docs',
    uiConfig: { url: '/api/openapi.json', docExpansion: 'list', deepLinking: true },
    staticCSP: true,
  });
}
