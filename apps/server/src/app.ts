import Fastify, { type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { AppContext } from './context.ts';
import type { App } from './http/app-types.ts';
import { frameworkError, installEnvelopeHandlers } from './http/envelope.ts';
import { installHostCheck } from './http/hosts.ts';
import { installMetricsRoute, installObservability, requestIdOf } from './http/observability.ts';
import { installOpenApi } from './http/openapi.ts';
import { ROUTES } from './http/routes/index.ts';
import { installSecurityHeaders } from './http/security.ts';
import { installWebApp } from './http/web-app.ts';
import { loggerOptions } from './logging.ts';
import { internalUrlOf } from './http/internal-url.ts';

export interface BuildOptions {
  /** Override the logger (tests pass a stream to capture or silence logs). */
  logger?: FastifyInstance['log'] | boolean;
  /** Largest JSON body accepted, in bytes. */
  bodyLimit?: number;
}

/** The HTTP application: envelope errors, security headers, OpenAPI, every route, and the web app. */
export async function buildApp(ctx: AppContext, options: BuildOptions = {}): Promise<App> {
  const base = Fastify({
    loggerInstance: typeof options.logger === 'object' ? options.logger : undefined,
    logger:
      typeof options.logger === 'object'
        ? undefined
        : options.logger === false
          ? false
          : loggerOptions(ctx.config.logLevel),
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    // Only the proxies the operator names may set X-Forwarded-For (default: those on this machine).
    trustProxy: ctx.config.trustProxy,
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
    frameworkErrors: frameworkError,
    genReqId: requestIdOf,
  });
  base.setValidatorCompiler(validatorCompiler);
  base.setSerializerCompiler(serializerCompiler);
  const app = base.withTypeProvider<ZodTypeProvider>();
  installEnvelopeHandlers(app);
  installSecurityHeaders(app, () => ctx.ecology.cachedFrameOrigins());
  installObservability(app, ctx.metrics);
  installHostCheck(app, ctx.config);
  await installOpenApi(app, ctx.config.publicUrl);
  for (const register of ROUTES) await register(app, ctx);
  installMetricsRoute(app, ctx.metrics, ctx.config.metricsToken);
  await installWebApp(app, ctx.config.webDist);
  app.addHook('onListen', async () => {
    ctx.files.uploads.listenAt(ctx.config.internalUrl ?? internalUrlOf(app.server.address(), ctx.config.host));
  });
  return app;
}
