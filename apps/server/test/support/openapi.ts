import type { App } from '../../src/http/app-types.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** A JSON schema as the OpenAPI document gives it (the parts the sweeps read). */
export interface OpenApiSchema {
  type?: string;
  enum?: unknown[];
  minimum?: number;
  properties?: Record<string, OpenApiSchema>;
  required?: string[];
  items?: OpenApiSchema;
  anyOf?: OpenApiSchema[];
  oneOf?: OpenApiSchema[];
}

export interface OpenApiOperation {
  requestBody?: { content?: Record<string, { schema?: OpenApiSchema } | undefined> };
  parameters?: Array<{ in: string; name: string; schema?: OpenApiSchema }>;
}

/** Every call the server documents in GET /api/openapi.json. */
export async function documentedOperations(
  app: App,
): Promise<Array<{ method: HttpMethod; path: string; op: OpenApiOperation }>> {
  const doc = JSON.parse((await app.inject({ method: 'GET', url: '/api/openapi.json' })).body) as {
    paths: Record<string, Record<string, OpenApiOperation>>;
  };
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => ['get', 'post', 'put', 'delete'].includes(method))
      .map(([method, op]) => ({ method: method.toUpperCase() as HttpMethod, path, op })),
  );
}
