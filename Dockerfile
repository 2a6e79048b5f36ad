# Skyferry's image: the API process by default, the worker with `apps/server/src/worker.ts` as the
# command. Multi-stage: the web app is built (and pre-compressed) in one stage, the production
# packages installed in another, and the last holds only what runs, as a user that is not root.
#
#   podman build -t skyferry .          (or docker build)
#   podman build --build-arg BASE=localhost/node-base:24 .   (any base with Node 24 on PATH)
ARG BASE=docker.io/library/node:24-bookworm-slim

# The package manifests alone: the installs below are cached until one of them changes.
FROM ${BASE} AS manifests
WORKDIR /src
ENV ELECTRON_SKIP_BINARY_DOWNLOAD=1 CI=1 npm_config_fund=false npm_config_audit=false
COPY package.json package-lock.json .npmrc ./
# npm ci first checks the Node version (the preinstall script).
COPY scripts/check-node.cjs scripts/
COPY packages/contract/package.json packages/contract/
COPY packages/db/package.json packages/db/
COPY packages/providers/package.json packages/providers/
COPY packages/engine/package.json packages/engine/
COPY packages/queue/package.json packages/queue/
COPY packages/testing/package.json packages/testing/
COPY apps/cli/package.json apps/cli/
COPY apps/server/package.json apps/server/
COPY apps/web/package.json apps/web/
COPY apps/desktop/package.json apps/desktop/
COPY e2e/package.json e2e/

FROM manifests AS build
RUN npm ci --workspace @skyferry/web --workspace @skyferry/contract --include-workspace-root
COPY tsconfig.base.json ./
COPY packages/contract packages/contract
COPY apps/web apps/web
# Vite writes each text asset with its .br and .gz beside it: the server never compresses at request time.
RUN npm run build -w @skyferry/web

FROM manifests AS deps
# Only what the server runs: its own packages and the workspace packages it imports, no dev dependencies.
RUN npm ci --omit=dev \
      --workspace @skyferry/server --workspace @skyferry/contract --workspace @skyferry/db \
      --workspace @skyferry/providers --workspace @skyferry/engine --workspace @skyferry/queue \
  && npm cache clean --force

FROM ${BASE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    SKYFERRY_DATA_DIR=/data \
    SKYFERRY_WEB_DIST=/app/apps/web/dist \
    SKYFERRY_LOCAL_ROOTS=
WORKDIR /app
COPY --from=deps /src/node_modules node_modules
COPY package.json ./
COPY packages/contract packages/contract
COPY packages/db packages/db
COPY packages/providers packages/providers
COPY packages/engine packages/engine
COPY packages/queue packages/queue
COPY apps/server apps/server
COPY --from=build /src/apps/web/dist apps/web/dist
# The data folder (outbox, upload spool) belongs to the unprivileged user; everything else is read-only to it.
RUN mkdir -p /data && chown 10001:10001 /data && chmod 0700 /data
USER 10001:10001
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node"]
CMD ["apps/server/src/main.ts"]
