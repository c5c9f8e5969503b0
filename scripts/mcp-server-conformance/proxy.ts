/**
 * A forwarding proxy on a loopback port that adds `Authorization: Bearer <token>` to every request
 * and passes everything else through unchanged, both ways and streamed (SSE included): method, path,
 * headers (Host and Origin too), body, status. The conformance suite has no option to send a token;
 * it is pointed at this proxy instead of the endpoint. It listens on 127.0.0.1 only and lives as long
 * as the command that started it.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

export interface BearerProxy {
  /** The proxy's origin (`http://127.0.0.1:<port>`). */
  origin: string;
  close(): Promise<void>;
}

export async function startBearerProxy(target: URL, token: string): Promise<BearerProxy> {
  const send = target.protocol === 'https:' ? https.request : http.request;
  const server = http.createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${token}` };
    const upstream = send(
      {
        protocol: target.protocol,
        hostname: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers,
        // The Host header goes as the client sent it (the DNS-rebinding scenario sets its own).
        setHost: false,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) {
        res.writeHead(502);
      }
      res.end();
    });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
