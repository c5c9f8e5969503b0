/**
 * The servers the benchmarks compare the service with, each in a process of its own like the API:
 * a bare node:http server, and a minimal NestJS application (one global guard that reads a header,
 * JSON out) on the service's adapter, Fastify: what a request costs without the service's own work.
 * (Express is no longer measured: the service left it, and no goal compares with it.)
 *
 * The minimal app also has the floor of benchmarks 3, 4 and 9: the same work as the service's route
 * with nothing of the service's own (no token check, no database, no limits, no vault):
 * - `POST /api/tool`: the same HTTPS call to the site's tool through axios with a keep-alive agent,
 *   its JSON answered;
 * - `POST /api/chat`: the same streamed request to the model through the Anthropic SDK, each text
 *   delta written as an SSE `text` event. The request is the one the service sent the model for the
 *   same turn (system, tools, the session's messages so far), handed over beforehand, untimed, by
 *   `POST /api/chat/prepare` and named by `prepared`: the timed request's body stays as small as the
 *   service's, whose history is in its database.
 * - `/mcp` (benchmark 13): the same tool call behind the official MCP server SDK, mounted as the
 *   service mounts its endpoint (`createMcpHandler`, stateless, a server built for each request;
 *   `toNodeHandler` as middleware before the body parsers), its one tool `floor__search_notes` making the
 *   same axios call and answering it as the service answers a site's JSON (text and structuredContent).
 * Their targets come from BENCH_SITE_TOOL_URL, BENCH_SITE_TOKEN, BENCH_SITE_CA (PEM) and
 * BENCH_MODEL_URL. `node dist/bench/adapters.js bare|fastify` prints `listening <port>`.
 */
import 'reflect-metadata';
import http from 'node:http';
import https from 'node:https';
import { fileURLToPath } from 'node:url';
import Anthropic from '@anthropic-ai/sdk';
import axios from 'axios';
import {
  Body,
  type CanActivate,
  Controller,
  type ExecutionContext,
  Get,
  HttpCode,
  Injectable,
  type INestApplication,
  Module,
  Post,
  Res,
} from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, Server } from '@modelcontextprotocol/server';

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

const siteAgent = new https.Agent({ keepAlive: true, maxSockets: 64, ca: process.env.BENCH_SITE_CA });
const model = new Anthropic({ apiKey: 'bench', baseURL: process.env.BENCH_MODEL_URL, maxRetries: 0 });

/** What the floor sends the model: the service's own request to it, as the fake model recorded it. */
type ModelRequest = Pick<
  Anthropic.MessageCreateParamsNonStreaming,
  'model' | 'max_tokens' | 'system' | 'messages' | 'tools'
>;
const prepared = new Map<string, ModelRequest>();

/** The site's tool, as every floor route calls it. */
async function callSiteTool(input: unknown): Promise<unknown> {
  const res = await axios.post(process.env.BENCH_SITE_TOOL_URL!, input ?? {}, {
    httpsAgent: siteAgent,
    headers: { authorization: `Bearer ${process.env.BENCH_SITE_TOKEN}` },
  });
  return res.data;
}

/** The floor of benchmarks 3, 4 and 9 (see the header). */
@Controller()
class FloorController {
  @Post('tool')
  @HttpCode(200)
  async tool(@Body() body: { input?: unknown }): Promise<{ result: unknown }> {
    return { result: await callSiteTool(body.input) };
  }

  /** Keeps a request the service sent the model (untimed), for a timed `chat` to send again. */
  @Post('chat/prepare')
  @HttpCode(204)
  prepare(@Body() body: { key: string; request: ModelRequest }): void {
    prepared.set(body.key, body.request);
  }

  @Post('chat')
  async chat(
    @Body() body: { content?: string; prepared?: string },
    @Res() reply: { hijack: () => void; raw: http.ServerResponse },
  ): Promise<void> {
    // Written to the socket as the service's SSE is: Fastify leaves the reply to this handler.
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const request = body.prepared === undefined ? undefined : prepared.get(body.prepared);
    if (body.prepared !== undefined) {
      prepared.delete(body.prepared);
    }
    const stream = model.messages.stream({
      model: 'claude-sonnet-4-6',
      max_tokens: 1024,
      ...(request ?? { messages: [{ role: 'user', content: body.content ?? 'hi' }] }),
    });
    stream.on('text', (text) => res.write(`event: text\ndata: ${JSON.stringify({ text })}\n\n`));
    await stream.finalMessage();
    res.write('event: done\ndata: {}\n\n');
    res.end();
  }
}

@Module({
  controllers: [MeController, FloorController],
  providers: [{ provide: APP_GUARD, useClass: HeaderGuard }],
})
class MinimalModule {}

/** Benchmark 13's floor: an MCP server of one tool, built for each request as the service's is. */
function floorMcpServer(): Server {
  const server = new Server({ name: 'floor', version: '1.0.0' }, { capabilities: { tools: { listChanged: false } } });
  server.setRequestHandler('tools/list', () => ({
    tools: [
      {
        name: 'floor__search_notes',
        description: "The reference site's search_notes",
        inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
      },
    ],
  }));
  server.setRequestHandler('tools/call', async (request) => {
    const result = await callSiteTool(request.params.arguments);
    return {
      content: [{ type: 'text', text: JSON.stringify(result) }],
      structuredContent: result as Record<string, unknown>,
    };
  });
  return server;
}

export const SERVER_KINDS = ['bare', 'fastify'] as const;
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
  const app: INestApplication = await NestFactory.create(MinimalModule, new FastifyAdapter(), { logger: false });
  app.setGlobalPrefix('api');
  const mcp = toNodeHandler(createMcpHandler(() => floorMcpServer(), { legacy: 'stateless' }));
  app.use('/mcp', (req: http.IncomingMessage, res: http.ServerResponse) => void mcp(req, res));
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
