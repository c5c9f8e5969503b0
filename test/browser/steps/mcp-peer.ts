/**
 * A small MCP server for the console's suites, made with the official SDK (v1, low-level `Server`,
 * stateless Streamable HTTP, so it speaks the 2025 revisions the service falls back to): it asks
 * for a bearer token (401 `WWW-Authenticate: Bearer`, no authorization server), and its tools have
 * the input schemas the try-out form must render (nested objects, lists of objects, enums, bounds,
 * formats, defaults, a `oneOf`, an `anyOf` at the root) and answer with every kind of content block.
 * HTTPS with a certificate of the suite's own CA.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ServerCert } from '../../../examples/site/tls.js';

const require = createRequire(import.meta.url);

export const TRIP_TOKEN = 'trip-planner-token-1';
export const TRIP_SERVER_NAME = 'Trip planner';

/** server-everything's MCP logo (a 20×20 PNG), so the image the console shows is a real one. */
export function tinyPng(): string {
  const file = path.join(
    path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
    'dist/tools/get-tiny-image.js',
  );
  return /MCP_TINY_IMAGE = "([A-Za-z0-9+/=]+)"/.exec(readFileSync(file, 'utf8'))![1]!;
}

/** A quarter of a second of a 440 Hz tone, as a WAV file. */
export function toneWav(): string {
  const rate = 8000;
  const samples = rate / 4;
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) {
    data.writeInt16LE(Math.round(Math.sin((2 * Math.PI * 440 * i) / rate) * 8000), i * 2);
  }
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]).toString('base64');
}

const TOOLS = [
  {
    name: 'plan_trip',
    title: 'Plan a trip',
    description: 'Plans a trip and answers with an itinerary.',
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
    inputSchema: {
      type: 'object',
      required: ['destination', 'travellers'],
      properties: {
        destination: {
          type: 'object',
          title: 'Destination',
          description: 'Where to go.',
          required: ['city'],
          properties: {
            city: { type: 'string', title: 'City' },
            country: { type: 'string', title: 'Country', enum: ['France', 'Japan', 'Peru'] },
          },
        },
        travellers: {
          type: 'array',
          title: 'Travellers',
          minItems: 1,
          items: {
            type: 'object',
            required: ['name'],
            properties: {
              name: { type: 'string', title: 'Name' },
              age: { type: 'integer', title: 'Age', minimum: 0, maximum: 120 },
            },
          },
        },
        nights: { type: 'integer', title: 'Nights', minimum: 1, maximum: 30, default: 3 },
        start: { type: 'string', title: 'Start', format: 'date' },
        flexible: { type: 'boolean', title: 'Flexible dates', description: 'The dates may move by a day.' },
        tags: { type: 'array', title: 'Tags', items: { type: 'string' } },
      },
    },
  },
  {
    name: 'cancel_booking',
    title: 'Cancel a booking',
    description: 'Cancels a booking that has not started.',
    annotations: { destructiveHint: true, idempotentHint: false, openWorldHint: false },
    inputSchema: {
      type: 'object',
      required: ['booking'],
      properties: {
        booking: { description: 'The booking number, or its code.', oneOf: [{ type: 'integer' }, { type: 'string' }] },
      },
    },
  },
  {
    name: 'find_route',
    description: 'Finds a route by a place or by coordinates.',
    inputSchema: {
      type: 'object',
      anyOf: [{ required: ['place'] }, { required: ['lat', 'lon'] }],
      properties: { place: { type: 'string' }, lat: { type: 'number' }, lon: { type: 'number' } },
    },
  },
];

interface Trip {
  destination: { city: string; country?: string };
  travellers: Array<{ name: string; age?: number }>;
  nights?: number;
}

function answer(name: string, args: Record<string, unknown>) {
  if (name === 'plan_trip') {
    const trip = args as unknown as Trip;
    return {
      content: [
        {
          type: 'text',
          text: `Trip to ${trip.destination.city}\nfor ${trip.travellers.map((t) => t.name).join(', ')}, ${trip.nights ?? 3} nights`,
        },
        { type: 'image', data: tinyPng(), mimeType: 'image/png' },
        { type: 'audio', data: toneWav(), mimeType: 'audio/wav' },
        { type: 'resource_link', uri: 'https://guides.example.com/lisbon', name: 'lisbon', title: 'City guide' },
        { type: 'resource_link', uri: 'file:///etc/passwd', name: 'A local file' },
        {
          type: 'resource',
          resource: {
            uri: 'https://trips.example.com/itinerary.txt',
            mimeType: 'text/plain',
            text: 'Day 1: arrive\nDay 2: walk',
          },
        },
        {
          type: 'resource',
          resource: {
            uri: 'https://trips.example.com/tickets/ticket.txt',
            mimeType: 'text/plain',
            blob: Buffer.from('ticket 42').toString('base64'),
          },
        },
      ],
      structuredContent: { received: args },
    };
  }
  if (name === 'cancel_booking') {
    return {
      isError: true,
      content: [{ type: 'text', text: `Booking ${String(args.booking)} cannot be cancelled: it has already started.` }],
    };
  }
  return { content: [{ type: 'text', text: `Route: ${JSON.stringify(args)}` }] };
}

function mcpServer(): Server {
  const server = new Server({ name: TRIP_SERVER_NAME, version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, (request) =>
    answer(request.params.name, (request.params.arguments ?? {}) as Record<string, unknown>),
  );
  return server;
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (new URL(req.url ?? '/', 'https://peer').pathname !== '/mcp') {
    res.writeHead(404).end();
    return;
  }
  if (req.headers.authorization !== `Bearer ${TRIP_TOKEN}`) {
    res.writeHead(401, { 'www-authenticate': 'Bearer realm="trips"', 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'invalid_token' }));
    return;
  }
  // Stateless: a server and a transport per request (no session to keep).
  const server = mcpServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res);
}

export class TripPeer {
  private constructor(private readonly server: https.Server) {}

  static async start(cert: ServerCert): Promise<TripPeer> {
    const server = https.createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
      handle(req, res).catch(() => {
        if (!res.headersSent) {
          res.writeHead(500).end();
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new TripPeer(server);
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** The MCP endpoint. */
  get url(): string {
    return `https://localhost:${this.port}/mcp`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
