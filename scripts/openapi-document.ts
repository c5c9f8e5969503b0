/**
 * Build step: writes the OpenAPI document the service serves at /api/docs/openapi.json to
 * dist/openapi.json, without a database or Temporal (the app is built in preview mode: only the
 * controllers' decorators are read). The console's typed client is generated from this file.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { answerHelp } from './runtime/command-line.js';

export const OPENAPI_DOCUMENT_PATH = path.resolve('dist', 'openapi.json');

async function main(): Promise<void> {
  answerHelp(
    'usage: node dist/scripts/openapi-document.js   (a step of npm run build)\n' +
      "Writes the service's OpenAPI document to dist/openapi.json, without a database or Temporal.",
  );
  // The whole application is loaded only now: --help answers without it.
  await import('reflect-metadata');
  const { NestFactory } = await import('@nestjs/core');
  const { FastifyAdapter } = await import('@nestjs/platform-fastify');
  const { AppModule } = await import('../src/app.module.js');
  const { buildOpenApi } = await import('../src/app.factory.js');
  const { loadSettings } = await import('../src/config/settings.js');
  // Placeholder secrets: nothing is signed or encrypted here, the settings only have to load.
  const settings = loadSettings({
    JWT_SECRET: 'openapi-document-build-only-0123456789abcdef',
    VAULT_KEY: Buffer.alloc(32, 1).toString('base64'),
  });
  const app = await NestFactory.create(AppModule.forRoot(settings), new FastifyAdapter(), {
    preview: true,
    logger: false,
  });
  app.setGlobalPrefix('api');
  const document = buildOpenApi(app);
  await app.close();
  mkdirSync(path.dirname(OPENAPI_DOCUMENT_PATH), { recursive: true });
  writeFileSync(OPENAPI_DOCUMENT_PATH, `${JSON.stringify(document, null, 2)}\n`);
}

main().catch((err: unknown) => {
  console.error('Could not write the OpenAPI document:', err);
  process.exit(1);
});
