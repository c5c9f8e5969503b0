/**
 * Build step: writes the OpenAPI document the service serves at /api/docs/openapi.json to
 * dist/openapi.json, without a database or Temporal (the app is built in preview mode: only the
 * controllers' decorators are read). The console's typed client is generated from this file.
 */
import 'reflect-metadata';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { NestFactory } from '@nestjs/core';
import { AppModule } from '../src/app.module.js';
import { buildOpenApi } from '../src/app.factory.js';
import { loadSettings } from '../src/config/settings.js';
import { answerHelp } from './runtime/command-line.js';

export const OPENAPI_DOCUMENT_PATH = path.resolve('dist', 'openapi.json');

async function main(): Promise<void> {
  answerHelp(
    'usage: node dist/scripts/openapi-document.js   (a step of npm run build)\n' +
      "Writes the service's OpenAPI document to dist/openapi.json, without a database or Temporal.",
  );
  // Placeholder secrets: nothing is signed or encrypted here, the settings only have to load.
  const settings = loadSettings({
    JWT_SECRET: 'openapi-document-build-only-0123456789abcdef',
    VAULT_KEY: Buffer.alloc(32, 1).toString('base64'),
  });
  const app = await NestFactory.create(AppModule.forRoot(settings), { preview: true, logger: false });
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
