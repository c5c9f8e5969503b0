import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sameSecret } from '../auth/operator.guard.js';
import type { NotReadyReason } from './readiness.service.js';

export const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

export interface WorkerHttpOptions {
  port: number;
  /** Interfaces to listen on (default: all; in a container the port is reached over its network). */
  host?: string;
  /** The scrapers' credential; without it /metrics answers 401 to everyone. */
  metricsToken: string | undefined;
  /** The worker's readiness: no reasons = ready. */
  notReady: () => Promise<NotReadyReason[]>;
  /** The whole exposition: the service's metrics and the Temporal SDK's. */
  metrics: () => Promise<string>;
}

export interface WorkerHttpServer {
  port: number;
  close(): Promise<void>;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

/** The API's error body, so a scraper or an operator sees the same shape on both processes. */
function refuse(res: ServerResponse, status: number, code: string, error: string): void {
  json(res, status, { error, code, statusCode: status });
}

function authorized(req: IncomingMessage, token: string | undefined): boolean {
  const given = /^Bearer +(\S+)$/i.exec(req.headers.authorization?.trim() ?? '')?.[1];
  return token !== undefined && given !== undefined && sameSecret(given, token);
}

/**
 * The worker's own HTTP server (WORKER_HTTP_PORT), for docker compose, orchestrators and Prometheus:
 * GET /health/live (200 while the process runs), GET /health/ready (200 when the worker runs, the
 * database answers and Temporal saw this worker poll both sides of its task queue; else 503 with
 * generic reasons) and GET /metrics (Prometheus text, Bearer METRICS_TOKEN). The worker has no other
 * HTTP surface, so this is a plain node:http server rather than a second Nest application.
 */
export async function startWorkerHttpServer(options: WorkerHttpOptions): Promise<WorkerHttpServer> {
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      refuse(res, 404, 'NOT_FOUND', `No route for ${req.method} ${path}`);
      return;
    }
    switch (path) {
      case '/health/live':
        json(res, 200, { status: 'ok' });
        return;
      case '/health/ready': {
        const reasons = await options.notReady();
        json(res, reasons.length === 0 ? 200 : 503, { status: reasons.length === 0 ? 'ready' : 'not_ready', reasons });
        return;
      }
      case '/metrics':
        if (!authorized(req, options.metricsToken)) {
          refuse(
            res,
            401,
            'UNAUTHORIZED',
            options.metricsToken === undefined
              ? 'The worker serves its metrics only with METRICS_TOKEN set: send Authorization: Bearer <METRICS_TOKEN>'
              : 'Send Authorization: Bearer <METRICS_TOKEN>',
          );
          return;
        }
        res.writeHead(200, { 'content-type': PROMETHEUS_TEXT, 'cache-control': 'no-store' });
        res.end(await options.metrics());
        return;
      default:
        refuse(res, 404, 'NOT_FOUND', `No route for ${req.method} ${path}`);
    }
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) {
        refuse(res, 500, 'INTERNAL_ERROR', 'Internal server error');
      } else {
        res.end();
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
