import { createServer } from 'node:net';
import type { MetricsExporterConfig } from '@temporalio/worker';

/**
 * The Temporal SDK's own metrics (workflow and activity task latencies, slots, poll counts, sticky
 * cache, …: `temporal_*`) come from its native Prometheus exporter, an HTTP server inside the SDK with
 * no authentication. It listens on a loopback port only; the worker's HTTP server reads it and serves
 * it after the service's metrics, so one scrape with METRICS_TOKEN gets both.
 */
export function sdkPrometheusExporter(port: number): MetricsExporterConfig {
  return {
    prometheus: {
      bindAddress: `127.0.0.1:${port}`,
      // Prometheus's conventions: seconds, counters ending in _total, the unit in a histogram's name.
      useSecondsForDurations: true,
      countersTotalSuffix: true,
      unitSuffix: true,
    },
  };
}

/** A loopback port free right now, for the SDK's exporter (which cannot tell which port 0 gave it). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') {
          resolve(address.port);
        } else {
          reject(new Error('no port'));
        }
      });
    });
  });
}

const SDK_SCRAPE_TIMEOUT_MS = 2_000;

/** The SDK exporter's exposition; a comment saying why when it does not answer (the service's metrics still go out). */
export async function sdkMetricsText(port: number): Promise<string> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(SDK_SCRAPE_TIMEOUT_MS) });
    if (!res.ok) {
      return `# Temporal SDK metrics unavailable: HTTP ${res.status}\n`;
    }
    return await res.text();
  } catch (err) {
    return `# Temporal SDK metrics unavailable: ${err instanceof Error ? err.message : String(err)}\n`;
  }
}
