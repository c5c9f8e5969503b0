import { type Client, type WorkflowClient, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import {
  AGENT_HANDLERS,
  type AgentQueueState,
  type CancelRunResult,
  type EnqueueResult,
  FAILURE,
  type RunRequest,
} from '../../../workflows/contracts.js';

/** What the fake's agent queues hold: the agentQueueWorkflow's rules for the API's calls, in memory. */
interface FakeQueue {
  active: string | null;
  queued: RunRequest[];
  deliveries: Map<string, string>;
}

/** A workflow start the fake was asked for (update-with-start or signal-with-start). */
export interface StartedWith {
  workflowType: string;
  workflowId: string;
  taskQueue: string;
  searchAttributes: unknown;
}

type WithStartOptions = Parameters<WorkflowClient['executeUpdateWithStart']>[1];
type SignalWithStartOptions = Parameters<WorkflowClient['signalWithStart']>[1];

function refused(type: string): WorkflowUpdateFailedError {
  return new WorkflowUpdateFailedError('Workflow Update failed', ApplicationFailure.create({ message: type, type }));
}

/**
 * A Temporal client for unit specs: the calls the API makes to an agent's queue workflow (enqueue by
 * update-with-start or signal-with-start, the cancel Updates, the state Query, terminate) answered
 * from in-memory queues with the workflow's rules: one active run, FIFO, `reject_if_busy` refused
 * and `skip_if_busy` skipped while busy, a delivery id queued once. No server, no worker.
 */
export class FakeTemporalClient {
  readonly queues = new Map<string, FakeQueue>();
  readonly starts: StartedWith[] = [];
  /** Every Update, Query, signal, cancel and terminate, as `<workflowId> <name>`. */
  readonly calls: string[] = [];
  /** Called when a cancel Update ends the active run (the real run records its end in its row). */
  onActiveCancelled: (runId: string) => Promise<void> = async () => undefined;
  /** When set, the next enqueue (either kind) fails with it, as a server that refuses or is down. */
  failNextEnqueue: Error | null = null;
  /** Failures of the next enqueues, one each, before failNextEnqueue (a server failing for a while). */
  readonly failEnqueues: Error[] = [];
  /** When set, a webhook's signal waits for it before it reaches the queue (a slow round trip). */
  beforeSignal: ((request: RunRequest) => Promise<void>) | null = null;

  /** The client the services take: only `workflow` is there (the rest is never reached by them). */
  asClient(): Client {
    return { workflow: this.workflow, options: { namespace: 'default' } } as unknown as Client;
  }

  /** Starts an agent's queue with an active run (and optionally queued ones) as a spec's fixture. */
  seedQueue(agentId: string, active: string | null, queued: string[] = []): void {
    this.queues.set(`agent-${agentId}`, {
      active,
      queued: queued.map((runId) => ({ runId }) as RunRequest),
      deliveries: new Map(),
    });
  }

  readonly workflow = {
    executeUpdateWithStart: async (update: unknown, options: WithStartOptions): Promise<EnqueueResult> => {
      const operation = options.startWorkflowOperation;
      this.calls.push(`${operation.options.workflowId} ${String(update)}`);
      this.takeFailure();
      const queue = this.ensureQueue(String(operation.workflowTypeOrFunc), operation.options);
      return this.enqueue(queue, (options.args as [RunRequest])[0]);
    },

    signalWithStart: async (workflowType: string, options: SignalWithStartOptions): Promise<{ workflowId: string }> => {
      this.calls.push(`${options.workflowId} ${String(options.signal)}`);
      this.takeFailure();
      const request = (options.signalArgs as [RunRequest])[0];
      await this.beforeSignal?.(request);
      const queue = this.ensureQueue(workflowType, options);
      this.enqueue(queue, request);
      return { workflowId: options.workflowId };
    },

    getHandle: (workflowId: string) => ({
      workflowId,
      executeUpdate: async (name: string, options: { args: [string] }): Promise<unknown> => {
        this.calls.push(`${workflowId} ${name}`);
        const queue = this.queueOrFail(workflowId);
        const [runId] = options.args;
        if (name === AGENT_HANDLERS.cancelQueuedRun) {
          const before = queue.queued.length;
          queue.queued = queue.queued.filter((r) => r.runId !== runId);
          return queue.queued.length < before;
        }
        if (name === AGENT_HANDLERS.cancelRun) {
          if (queue.active === runId) {
            queue.active = null;
            await this.onActiveCancelled(runId);
            this.promote(queue);
            return 'cancelled' satisfies CancelRunResult;
          }
          return 'unknown' satisfies CancelRunResult;
        }
        throw new Error(`the fake has no Update ${name}`);
      },
      query: async (name: string): Promise<AgentQueueState> => {
        this.calls.push(`${workflowId} ${name}`);
        const queue = this.queueOrFail(workflowId);
        return { activeRunId: queue.active, queuedRunIds: queue.queued.map((r) => r.runId) };
      },
      terminate: async (): Promise<void> => {
        this.calls.push(`${workflowId} terminate`);
        this.queueOrFail(workflowId);
        this.queues.delete(workflowId);
      },
      cancel: async (): Promise<void> => {
        this.calls.push(`${workflowId} cancel`);
        this.queueOrFail(workflowId);
      },
      result: async (): Promise<unknown> => undefined,
    }),
  };

  private takeFailure(): void {
    const next = this.failEnqueues.shift();
    if (next !== undefined) {
      throw next;
    }
    const failure = this.failNextEnqueue;
    if (failure !== null) {
      this.failNextEnqueue = null;
      throw failure;
    }
  }

  private ensureQueue(
    workflowType: string,
    options: { workflowId: string; taskQueue: string; typedSearchAttributes?: unknown },
  ): FakeQueue {
    let queue = this.queues.get(options.workflowId);
    if (queue === undefined) {
      queue = { active: null, queued: [], deliveries: new Map() };
      this.queues.set(options.workflowId, queue);
      this.starts.push({
        workflowType,
        workflowId: options.workflowId,
        taskQueue: options.taskQueue,
        searchAttributes: options.typedSearchAttributes,
      });
    }
    return queue;
  }

  private queueOrFail(workflowId: string): FakeQueue {
    const queue = this.queues.get(workflowId);
    if (queue === undefined) {
      throw new WorkflowNotFoundError('workflow not found', workflowId, undefined);
    }
    return queue;
  }

  private enqueue(queue: FakeQueue, request: RunRequest): EnqueueResult {
    const first = request.deliveryId === null ? undefined : queue.deliveries.get(request.deliveryId);
    if (first !== undefined) {
      return { runId: first, queuePosition: 0, duplicate: true };
    }
    const busy = queue.active !== null || queue.queued.length > 0;
    if (busy && request.mode === 'reject_if_busy') {
      throw refused(FAILURE.agentAlreadyRunning);
    }
    if (busy && request.mode === 'skip_if_busy') {
      throw refused(FAILURE.runSkipped);
    }
    if (request.deliveryId !== null) {
      queue.deliveries.set(request.deliveryId, request.runId);
    }
    queue.queued.push(request);
    const position = queue.queued.length - 1 + (queue.active === null ? 0 : 1);
    this.promote(queue);
    return { runId: request.runId, queuePosition: position, duplicate: false };
  }

  private promote(queue: FakeQueue): void {
    if (queue.active === null && queue.queued.length > 0) {
      queue.active = queue.queued.shift()!.runId;
    }
  }
}
