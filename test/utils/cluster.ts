import { hostname } from 'node:os';
import { readFileSync } from 'node:fs';
import { freePort, stopChild, StopWaiting, waitFor } from '../../scripts/runtime/processes.js';
import { Http } from './http.js';
import { apiListening, type ProcessHandle, Stack, type StackOptions } from './stack.js';

export interface ClusterOptions {
  /** API processes (at least 1). */
  apis: number;
  /** Worker processes (0 or more). */
  workers: number;
  env?: Record<string, string>;
}

export interface ApiProcess {
  baseUrl: string;
  http: Http;
  process: ProcessHandle;
}

/**
 * The service scaled out on one machine: N API processes and M worker processes with the same
 * settings, on the shared PostgreSQL and Temporal of the test setup. The first API and worker are a
 * Stack's; the others are spawned with that stack's environment, changing only PORT. PUBLIC_BASE_URL
 * stays the first API's, as it would be the load balancer's address in front of all of them.
 */
export class Cluster {
  private constructor(
    readonly stack: Stack,
    readonly apis: ApiProcess[],
    readonly workers: ProcessHandle[],
  ) {}

  static async start(options: ClusterOptions): Promise<Cluster> {
    const stackOptions: StackOptions = { worker: options.workers > 0, env: options.env };
    const stack = await Stack.start(stackOptions);
    const apis: ApiProcess[] = [{ baseUrl: stack.baseUrl, http: new Http(stack.baseUrl), process: stack.api }];
    const workers: ProcessHandle[] = stack.worker ? [stack.worker] : [];
    const cluster = new Cluster(stack, apis, workers);
    try {
      for (let i = 1; i < options.workers; i += 1) {
        workers.push(stack.spawn(`worker-${i + 1}`, 'src/worker.js'));
      }
      for (let i = 1; i < options.apis; i += 1) {
        const port = await freePort();
        const baseUrl = `http://127.0.0.1:${port}`;
        const process = stack.spawn(`api-${i + 1}`, 'src/main.js', { PORT: String(port) });
        apis.push({ baseUrl, http: new Http(baseUrl), process });
      }
      await Promise.all(apis.slice(1).map((api) => cluster.waitHealthy(api)));
      // Every worker polls the task queue before the tests send work (a worker still starting would
      // leave the whole load to the others).
      await cluster.waitHealthy(apis[0]!, options.workers);
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  /** API i of the cluster, round robin: what a load balancer in front of them would do. */
  api(i: number): ApiProcess {
    return this.apis[i % this.apis.length]!;
  }

  /** The identity each worker gives Temporal (src/worker.ts: `<pid>@<hostname>`), in start order. */
  workerIdentities(): string[] {
    return this.workers.map((w) => `${w.child.pid}@${hostname()}`);
  }

  private async waitHealthy(api: ApiProcess, pollers = 0): Promise<void> {
    await waitFor(
      `API on ${api.baseUrl}`,
      async () => {
        const child = api.process.child;
        if (child.exitCode !== null) {
          throw new StopWaiting(
            `API exited with ${child.exitCode}:\n${readFileSync(api.process.logFile, 'utf8').slice(-3000)}`,
          );
        }
        for (const worker of this.workers) {
          if (worker.child.exitCode !== null) {
            throw new StopWaiting(
              `worker exited with ${worker.child.exitCode}:\n${readFileSync(worker.logFile, 'utf8').slice(-3000)}`,
            );
          }
        }
        if (!apiListening(api.process)) {
          return false;
        }
        const res = await fetch(`${api.baseUrl}/api/health`);
        const body = (await res.json()) as { temporal?: { workerPollers?: number } };
        return res.status === 200 && (body.temporal?.workerPollers ?? 0) >= pollers;
      },
      90_000,
      150,
    );
  }

  logs(): string {
    return [...this.apis.map((a) => a.process), ...this.workers]
      .map((p) => `--- ${p.logFile}\n${readFileSync(p.logFile, 'utf8')}`)
      .join('\n');
  }

  async stop(): Promise<void> {
    await Promise.all([...this.apis.map((a) => a.process), ...this.workers].map((p) => stopChild(p.child)));
  }
}
