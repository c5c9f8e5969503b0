/**
 * The servers benchmark 6 compares the service with, each in a process of its own like the API:
 * a bare node:http server, and the same minimal NestJS application (one controller, one global guard
 * that reads a header, JSON out) on the Express and on the Fastify adapter, which tells how much of a
 * request's cost is the HTTP adapter and how much is the service's own work.
 * `node dist/bench/adapters.js bare|express|fastify` prints `listening <port>`.
 */
import 'reflect-metadata';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import {
  type CanActivate,
  Controller,
  type ExecutionContext,
  Get,
  Injectable,
  type INestApplication,
  Module,
} from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';

@Injectable()
class HeaderGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    return typeof req.headers.authorization === 'string';
  }
}

@Controller('me')
class MeController {
  @Get()
  me(): { id: string } {
    return { id: 'x' };
  }
}

@Module({ controllers: [MeController], providers: [{ provide: APP_GUARD, useClass: HeaderGuard }] })
class MinimalModule {}

export const SERVER_KINDS = ['bare', 'express', 'fastify'] as const;
export type ServerKind = (typeof SERVER_KINDS)[number];

/** Starts one of the servers on 127.0.0.1; resolves with its port. */
async function listen(kind: ServerKind): Promise<number> {
  if (kind === 'bare') {
    const server = http.createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"x"}'),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as { port: number }).port;
  }
  const app: INestApplication = await NestFactory.create(
    MinimalModule,
    kind === 'express' ? new ExpressAdapter() : new FastifyAdapter(),
    { logger: false },
  );
  app.setGlobalPrefix('api');
  await app.listen(0, '127.0.0.1');
  return (app.getHttpServer().address() as { port: number }).port;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const kind = process.argv[2] as ServerKind;
  if (!SERVER_KINDS.includes(kind)) {
    console.error(`usage: adapters.js ${SERVER_KINDS.join('|')}`);
    process.exit(2);
  }
  listen(kind).then(
    (port) => console.log(`listening ${port}`),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
