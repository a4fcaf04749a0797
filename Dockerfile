# Folio's image: `folio serve` on the embedded SQLite database in /data, or
# on PostgreSQL with DATABASE_URL=postgres://… (docs/deploy.md).
#
#   docker build -t folio .
#   docker run -d --name folio -p 8787:8787 -v folio-data:/data folio
#   docker exec folio folio user create --email ada@example.com --plan pro_monthly
#
# Each build step is a step of scripts/build.sh; test/deploy.test.ts runs
# them, and the CMD and HEALTHCHECK below, as this file says.

# Compiles TypeScript; none of its dependencies reach the image.
FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
COPY scripts/build.sh scripts/
RUN scripts/build.sh deps
COPY tsconfig.json tsconfig.build.json ./
COPY src/ src/
RUN scripts/build.sh compile

# The production dependencies. better-sqlite3 takes a prebuilt binding when
# it can download one, and otherwise builds it with these tools.
FROM node:20-bookworm-slim AS prod-deps
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts/build.sh scripts/
RUN scripts/build.sh prod-deps

FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts/build.sh scripts/
COPY --from=prod-deps /app/node_modules/ node_modules/
COPY --from=build /src/dist/ dist/
RUN scripts/build.sh link /usr/local/bin
# The code belongs to root and cannot be changed by the server; the data
# belongs to the image's unprivileged `node` user (uid 1000), which runs it.
RUN mkdir -p /data && chown node:node /data
VOLUME /data
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8787 DATABASE_URL=sqlite:/data/folio.db
EXPOSE 8787
USER node
# No curl in the slim image: Node.js's own fetch asks /healthz.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/healthz`, { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["folio", "serve"]
