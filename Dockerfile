# syntax=docker/dockerfile:1
#
# The identity service on Bun, as a non-root user, with its data on a volume.
#
#   docker build -t identity-service .
#   docker run --init -p 3000:3000 -v identity-data:/data \
#     -e MASTER_KEY="k1:$(openssl rand -base64 32)" -e PUBLIC_BASE_URL=http://localhost:3000 identity-service
#
# Keep the MASTER_KEY you generated: every secret in the volume is sealed with it. compose.yaml runs two
# replicas on Postgres and NATS JetStream; docs/operating.md says how to run the CLI, back up and upgrade.

ARG NODE_IMAGE=node:22-bookworm-slim

# Dependencies in their own stage, so a change to the source does not reinstall them.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
# The workspaces (examples/*) come along: npm ci resolves every workspace the lockfile lists.
COPY package.json package-lock.json .npmrc ./
COPY examples/ ./examples/
# `npm start` (bun entry/bun.ts) needs no dev dependency. Bun is a production dependency: its postinstall
# puts the platform's binary at node_modules/bun/bin/bun.exe, checked here so a broken install fails the
# build rather than the first start. SCARF_ANALYTICS=false keeps swagger-ui-dist's install from reporting.
RUN SCARF_ANALYTICS=false npm ci --omit=dev --no-audit --no-fund \
  && node_modules/.bin/bun --version

FROM ${NODE_IMAGE}
# production: MASTER_KEY and PUBLIC_BASE_URL are required, and no development organization is made.
# MIMALLOC_PURGE_DELAY: Bun's allocator keeps freed memory 10 s, not 10 ms, before it gives it back to
# the system: under load, unmapping pages and faulting them in again cost a token grant a quarter of its
# CPU (BENCHMARKS.md). Memory still goes back once a burst is over.
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data \
    MIMALLOC_PURGE_DELAY=10000 \
    PATH=/app/node_modules/.bin:$PATH
WORKDIR /app
# Owned by root and read-only to the service; .dockerignore admits only what the server and CLI run.
COPY --from=deps /app/node_modules ./node_modules
COPY . .
# The volume's mount point belongs to the service's user, so a new named volume does too.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
# Liveness on the image's own Bun (no curl here): exit 0 when GET /healthz answers 200 within 3 s.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["/app/node_modules/.bin/bun", "scripts/healthcheck.ts"]
# Exec form: Bun is the process that gets SIGTERM (PID 1 under `docker run` without --init) and shuts
# down gracefully (/readyz 503, SHUTDOWN_DRAIN_MS, requests in flight finish, consumers stop). Give
# `docker stop -t` more than SHUTDOWN_DRAIN_MS + SHUTDOWN_TIMEOUT_MS (10 s by default).
STOPSIGNAL SIGTERM
CMD ["/app/node_modules/.bin/bun", "entry/bun.ts"]
