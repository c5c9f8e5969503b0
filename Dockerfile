# Builds the API and the worker (one image, two commands; see docker-compose.yml).
# Node 24, the current LTS line: the version in .node-version, which the start and test commands run on
# too (scripts/pinned-node.mjs; test/e2e/deployment.e2e-spec.ts checks the two agree).
FROM node:24.18.0-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities
COPY scripts ./scripts
COPY examples ./examples
COPY console ./console
# The production build (tsconfig.build.json): no tests, no benchmarks.
RUN npm run build && npm prune --omit=dev

FROM node:24.18.0-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER node
EXPOSE 3000
CMD ["node", "--enable-source-maps", "dist/src/main.js"]
