/**
 * The soak's faults (bench/soak.ts): the cluster's second API or second worker SIGKILLed and started
 * again at once; the first of each is never killed. While the API restarts, the load goes to the
 * other one (as a load balancer would once its health check failed); requests it had in flight fail.
 */
import { waitFor } from '../scripts/runtime/processes.js';
import type { Cluster } from '../test/utils/cluster.js';
import type { ProcessHandle } from '../test/utils/stack.js';

function killed(handle: ProcessHandle): Promise<void> {
  return new Promise((resolve) => {
    if (handle.child.exitCode !== null || handle.child.signalCode !== null) {
      resolve();
      return;
    }
    handle.child.once('exit', () => resolve());
    handle.child.kill('SIGKILL');
  });
}

export class Killer {
  private readonly up: boolean[];
  private turn = 0;
  private restarting: Promise<void> = Promise.resolve();
  private generation = { api: 1, worker: 1 };

  constructor(
    private readonly cluster: Cluster,
    private readonly log: (line: string) => void,
  ) {
    this.up = cluster.apis.map(() => true);
  }

  /** The next API that is up, round robin. */
  nextApi(): string {
    for (let i = 0; i < this.up.length; i += 1) {
      this.turn = (this.turn + 1) % this.up.length;
      if (this.up[this.turn]) {
        return this.cluster.apis[this.turn]!.baseUrl;
      }
    }
    return this.cluster.apis[0]!.baseUrl;
  }

  /** SIGKILLs the second API, starts it again on its port, and sends it load once it is ready. */
  async killApi(): Promise<void> {
    const api = this.cluster.apis[1]!;
    this.up[1] = false;
    await killed(api.process);
    this.generation.api += 1;
    this.log(`API 2 SIGKILLed (pid ${api.process.child.pid}); starting it again`);
    api.process = this.cluster.stack.spawn(`api-2-${this.generation.api}`, 'src/main.js', {
      PORT: new URL(api.baseUrl).port,
    });
    this.restarting = waitFor(
      `API 2 on ${api.baseUrl}`,
      async () => (await fetch(`${api.baseUrl}/api/health/ready`).catch(() => undefined))?.status === 200,
      120_000,
      250,
    ).then(() => {
      this.up[1] = true;
      this.log(`API 2 ready again (pid ${api.process.child.pid})`);
    });
  }

  /** SIGKILLs the second worker and starts another. */
  async killWorker(): Promise<void> {
    const worker = this.cluster.workers[1]!;
    await killed(worker);
    this.generation.worker += 1;
    this.log(`worker 2 SIGKILLed (pid ${worker.child.pid}); starting it again`);
    this.cluster.workers[1] = this.cluster.stack.spawn(`worker-2-${this.generation.worker}`, 'src/worker.js');
  }

  /** Resolves once the API being restarted is ready. */
  settled(): Promise<void> {
    return this.restarting;
  }
}
