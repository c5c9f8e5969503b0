import type { Server } from '@modelcontextprotocol/server';
import type { RunResponse } from '../runs/run-response.js';
import type { Scope } from '../workspaces/scope.js';
import { type McpAgentTools, runResult } from './mcp-agent-tools.js';
import { awaitingOf, waitingWords } from './mcp-approvals.js';
import { answering } from './mcp-errors.js';

/** How often a client should poll a task (ms). */
const POLL_INTERVAL_MS = 1000;
const RELATED_TASK = 'io.modelcontextprotocol/related-task';
/** One look of tasks/result at a run still going (it looks again until the run ends or the request does). */
const RESULT_WAIT_SECONDS = 60;

/** The server capability of task-augmented tools/call (revision 2025-11-25, SEP-1686). */
export const TASKS_CAPABILITY = { cancel: {}, requests: { tools: { call: {} } } };

type TaskHandlerSetter = (
  method: 'tasks/get' | 'tasks/result' | 'tasks/cancel',
  handler: (
    request: { params: { taskId: string } },
    ctx: { mcpReq: { signal: AbortSignal } },
  ) => Promise<Record<string, unknown>>,
) => void;

type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/**
 * A run as a task: the task id is the run id; its status is read from the run (any process answers). A run
 * that waits for an approval is `input_required`, its statusMessage saying which call and where to decide.
 */
export function taskOf(run: RunResponse, publicBaseUrl: string): Record<string, unknown> {
  const awaiting = awaitingOf(run);
  const status: TaskStatus =
    awaiting !== null ? 'input_required' : run.status === 'queued' || run.status === 'active' ? 'working' : run.status;
  return {
    taskId: run.id,
    status,
    statusMessage: awaiting !== null ? waitingWords(run, awaiting, publicBaseUrl) : `The run is ${run.status}`,
    createdAt: run.queuedAt,
    lastUpdatedAt: run.endedAt ?? run.startedAt ?? run.queuedAt,
    // Runs are kept as long as the service keeps run history: no task expiry of its own.
    ttl: null,
    pollInterval: POLL_INTERVAL_MS,
  };
}

/**
 * The task-augmented form of an agent tool's call: `{task}` (and the empty content the SDK's result
 * check asks of any tools/call answer), for a client that sent `params.task`.
 */
export function createdTask(run: RunResponse, publicBaseUrl: string): Record<string, unknown> {
  return { content: [], task: taskOf(run, publicBaseUrl) };
}

/**
 * tasks/get, tasks/result and tasks/cancel over runs (2025-11-25 clients; the 2026-07-28 revision moved
 * Tasks to an extension the SDK does not serve yet): everything is read from the run's row and
 * Temporal, so any API process, and a restarted one, answers for a task another one created.
 */
export function registerTaskHandlers(server: Server, scope: Scope, agents: McpAgentTools): void {
  // tasks/* are spec methods of the 2025-11-25 registry (validated there by the SDK), outside the
  // SDK's method type, which follows the 2026-07-28 revision.
  const on = server.setRequestHandler.bind(server) as unknown as TaskHandlerSetter;
  const base = agents.publicBaseUrl;
  on('tasks/get', (request) =>
    answering(async () => taskOf(await agents.describe(scope, request.params.taskId), base)),
  );
  on('tasks/result', (request, ctx) =>
    answering(async () => {
      const { taskId } = request.params;
      // tasks/result answers once the task ended: wait for the run (the request's own end stops it). A run
      // waiting for an approval is decided through decide_approval or the console, not through this request.
      let run = await agents.describe(scope, taskId);
      while (run.status === 'queued' || run.status === 'active') {
        if (ctx.mcpReq.signal.aborted) {
          break;
        }
        run = await agents.wait(scope, taskId, ctx.mcpReq.signal, undefined, RESULT_WAIT_SECONDS);
      }
      return { ...runResult(run), _meta: { [RELATED_TASK]: { taskId } } };
    }),
  );
  on('tasks/cancel', (request) =>
    answering(async () => taskOf(await agents.cancel(scope, request.params.taskId), base)),
  );
}
