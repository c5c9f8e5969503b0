import type { PayloadCodec } from '@temporalio/common';
import proto, { type temporal } from '@temporalio/proto';
import { decodeHistoryEvents } from '../temporal/history-codec.js';
import type {
  ApprovalDecidedEntryDto,
  ApprovalRequestedEntryDto,
  CancelledEntryDto,
  CompletedEntryDto,
  FailedEntryDto,
  HistoryUnavailableEntryDto,
  ModelTurnEntryDto,
  TokenRefreshedEntryDto,
  ToolCallEntryDto,
  ToolResultEntryDto,
  TriggeredEntryDto,
  WaitingEntryDto,
} from './dto/timeline-entry.dto.js';
import { approvalEntryOf } from './timeline-approvals.js';
import { EventValues, first, toMs } from './timeline-events.js';
import { type FailureReference, failureOf } from './timeline-failure.js';

export type { FailureReference } from './timeline-failure.js';
import {
  RATE_LIMIT_TIMER_SUMMARY,
  type CallToolInput,
  type CallToolOutput,
  type ModelTurnOutput,
  type RunRequest,
} from '../../workflows/contracts.js';

// @temporalio/proto is CommonJS: its runtime namespace comes through the default export.
const EventType = proto.temporal.api.enums.v1.EventType;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** A timeline entry: the API document describes each of these, told apart by `type`. */
export type TimelineEntry =
  | TriggeredEntryDto
  | ModelTurnEntryDto
  | ToolCallEntryDto
  | ToolResultEntryDto
  | WaitingEntryDto
  | TokenRefreshedEntryDto
  | CompletedEntryDto
  | FailedEntryDto
  | CancelledEntryDto
  | ApprovalRequestedEntryDto
  | ApprovalDecidedEntryDto
  | HistoryUnavailableEntryDto;

/**
 * Builds a run's timeline from its workflow history as the server returns it (encrypted by the
 * payload codec): what the user reads is what an operator sees in the Temporal UI through the codec
 * endpoint. The history is decoded here, in place, and only here. Activity inputs and results are
 * the entries' data.
 */
export async function timelineFromHistory(
  events: HistoryEvent[],
  codec: PayloadCodec,
  reference: FailureReference = {},
  queued?: QueuedRun,
): Promise<TimelineEntry[]> {
  return timelineFromDecoded(await decodeHistoryEvents(events, codec), reference, queued).timeline;
}

/**
 * The timelines of runs of one queue execution from one read of its history, decoded once (the
 * archive of the runs an execution ran), each with whether the history still holds a step of the run
 * it has not closed: a run's row is written by its last step, a moment before the history records it.
 */
export async function runTimelinesFromHistory(
  events: HistoryEvent[],
  codec: PayloadCodec,
  reference: FailureReference,
  runs: QueuedRun[],
): Promise<Array<{ timeline: TimelineEntry[]; open: boolean }>> {
  const decoded = await decodeHistoryEvents(events, codec);
  const values = new EventValues();
  const read: Array<{ timeline: TimelineEntry[]; open: boolean }> = [];
  for (const run of runs) {
    if (read.length > 0) {
      // Between runs, the process's other work goes on (a worker's workflow tasks wait for its event loop).
      await new Promise((resolve) => setImmediate(resolve));
    }
    read.push(timelineFromDecoded(decoded, reference, run, values));
  }
  return read;
}

const CLOSE_EVENTS: ReadonlySet<number> = new Set([
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT,
]);
const ABRUPT_CLOSE: ReadonlySet<number> = new Set([
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT,
]);

/**
 * A run executed by its agent's queue (`agent-<agentId>`), in an execution it may share with the
 * runs before and after it: what its row says of its trigger, and of its end once it has ended. That
 * execution's start and close are the queue's, not the run's.
 */
export interface QueuedRun {
  /** The run's id: its part of the history is its activities (their input names it) and its waits. */
  runId: string;
  triggered: TriggeredEntryDto;
  /** The run's end as its row records it; undefined while it goes on. */
  ended?: TimelineEntry;
}

function timelineFromDecoded(
  events: HistoryEvent[],
  reference: FailureReference,
  queued?: QueuedRun,
  values = new EventValues(),
): { timeline: TimelineEntry[]; open: boolean } {
  const timeline: TimelineEntry[] = queued !== undefined ? [queued.triggered] : [];
  const scheduled = new Map<string, { type: string; input: unknown }>();
  // The run's activities scheduled and not yet closed.
  const pending = new Set<string>();
  // In a queue's execution, the run whose activity was scheduled last (a wait is that run's).
  let current: string | undefined;
  const mine = (input: unknown): boolean => {
    if (queued === undefined) {
      return true;
    }
    const runId = (input as { runId?: unknown } | null | undefined)?.runId;
    return runId === queued.runId;
  };
  const attempts = new Map<string, number>();
  for (const event of events) {
    const at = values.at(event);
    if (
      queued !== undefined &&
      CLOSE_EVENTS.has(event.eventType!) &&
      (queued.ended !== undefined || !ABRUPT_CLOSE.has(event.eventType!))
    ) {
      // A queue execution's close is not its run's end (the row's is), unless the execution was cut
      // short while the run went on (terminated by an operator, timed out).
      continue;
    }
    switch (event.eventType) {
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED: {
        if (queued !== undefined) {
          break;
        }
        const request = first<RunRequest>(event.workflowExecutionStartedEventAttributes?.input);
        timeline.push({
          at,
          type: 'triggered',
          triggeredBy: request?.triggeredBy,
          ...(request?.triggeredBy === 'webhook' ? { payload: request.payload } : {}),
          ...(request?.input ? { input: request.input } : {}),
          ...(request?.actionOverride ? { systemPromptSource: 'webhook_action' } : {}),
        });
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED: {
        const attrs = event.activityTaskScheduledEventAttributes;
        const type = attrs?.activityType?.name ?? '';
        const input = values.activityInput(event);
        if (type === 'modelTurn' || type === 'callTool') {
          current = (input as { runId?: string } | undefined)?.runId;
        }
        if (!mine(input)) {
          break; // another run's (or the archive of one)
        }
        scheduled.set(String(event.eventId), { type, input });
        pending.add(String(event.eventId));
        const approval = approvalEntryOf(type, input, at);
        if (approval !== undefined) {
          timeline.push(approval);
        } else if (type === 'callTool') {
          const call = input as CallToolInput;
          timeline.push({
            at,
            type: 'tool_call',
            site: call.siteName,
            siteId: call.siteId,
            tool: call.tool,
            input: call.input,
          });
        }
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED: {
        const attrs = event.activityTaskStartedEventAttributes;
        attempts.set(String(attrs?.scheduledEventId), attrs?.attempt ?? 1);
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: {
        const attrs = event.activityTaskCompletedEventAttributes;
        const key = String(attrs?.scheduledEventId);
        const activity = scheduled.get(key);
        pending.delete(key);
        if (activity?.type === 'modelTurn') {
          const turn = first<ModelTurnOutput>(attrs?.result);
          timeline.push({
            at,
            type: 'model_turn',
            text: turn?.text ?? '',
            stopReason: turn?.stopReason,
            usage: { ...turn?.usage, credits: turn?.credits },
            toolUses: (turn?.content ?? []).filter((b) => b.type === 'tool_use').length,
          });
        } else if (activity?.type === 'callTool') {
          const call = activity.input as CallToolInput;
          const result = first<CallToolOutput>(attrs?.result);
          if (result?.refreshed) {
            timeline.push({ at, type: 'token_refreshed', site: call.siteName });
          }
          timeline.push({
            at,
            type: 'tool_result',
            site: call.siteName,
            tool: call.tool,
            ok: true,
            result: result?.result,
            ...(result?.truncated !== undefined ? { truncated: result.truncated } : {}),
            durationMs: result?.durationMs,
            attempt: attempts.get(key) ?? 1,
          });
        }
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED:
      case EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT: {
        const attrs = event.activityTaskFailedEventAttributes ?? event.activityTaskTimedOutEventAttributes;
        const key = String(attrs?.scheduledEventId);
        const activity = scheduled.get(key);
        pending.delete(key);
        if (activity?.type === 'callTool') {
          const call = activity.input as CallToolInput;
          const { error, code } = failureOf(attrs?.failure, reference, attempts.get(key) ?? 1);
          timeline.push({
            at,
            type: 'tool_result',
            site: call.siteName,
            tool: call.tool,
            ok: false,
            error,
            code,
            attempt: attempts.get(key) ?? 1,
          });
        }
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED:
        pending.delete(String(event.activityTaskCanceledEventAttributes?.scheduledEventId));
        break;
      case EventType.EVENT_TYPE_TIMER_STARTED: {
        const timeoutMs = toMs(event.timerStartedEventAttributes?.startToFireTimeout);
        const summary = values.timerSummary(event);
        if (queued !== undefined && (current !== queued.runId || summary !== RATE_LIMIT_TIMER_SUMMARY)) {
          break; // another run's wait, or the queue's own timer
        }
        timeline.push({
          at,
          type: 'waiting',
          reason: summary === RATE_LIMIT_TIMER_SUMMARY ? 'rate_limited' : (summary ?? 'timer'),
          until: new Date(toMs(event.eventTime) + timeoutMs).toISOString(),
        });
        break;
      }
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED: {
        const result = first<{ output: string }>(event.workflowExecutionCompletedEventAttributes?.result);
        timeline.push({ at, type: 'completed', output: result?.output ?? '' });
        break;
      }
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:
        timeline.push({
          at,
          type: 'failed',
          ...failureOf(event.workflowExecutionFailedEventAttributes?.failure, reference),
        });
        break;
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED:
        timeline.push({ at, type: 'cancelled' });
        break;
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED:
        timeline.push({
          at,
          type: 'failed',
          error: event.workflowExecutionTerminatedEventAttributes?.reason ?? 'terminated',
          code: 'TERMINATED',
        });
        break;
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT:
        timeline.push({ at, type: 'failed', error: 'The run timed out', code: 'TIMED_OUT' });
        break;
      default:
        break;
    }
  }
  if (queued?.ended !== undefined) {
    // A completed run's answer is its last turn's text (as the run took it), which the row does not keep.
    const answer = [...timeline]
      .reverse()
      .find((e): e is ModelTurnEntryDto => e.type === 'model_turn' && e.text !== '');
    timeline.push(queued.ended.type === 'completed' ? { ...queued.ended, output: answer?.text ?? '' } : queued.ended);
  }
  return { timeline, open: pending.size > 0 };
}

/** How a run ended, as its row records it (what closes its archived timeline). */
export interface RunOutcome {
  status: 'completed' | 'failed' | 'cancelled';
  output?: string;
  error?: { error: string; code: string };
}

/** The codes of a run whose execution was cut short from outside (see RunReconcileService). */
const OPERATOR_CODES: ReadonlySet<string> = new Set(['TERMINATED', 'TIMED_OUT']);

/**
 * The entry that ends an archived timeline: what the history's close event will show (the run's
 * workflow writes its archive just before it closes, so that event is not in the history yet). A
 * failure goes through the same filter as the close event's (a message only with a spec code).
 */
export function terminalEntry(outcome: RunOutcome, at: string, reference: FailureReference = {}): TimelineEntry {
  switch (outcome.status) {
    case 'completed':
      return { at, type: 'completed', output: outcome.output ?? '' };
    case 'failed':
      if (outcome.error !== undefined && OPERATOR_CODES.has(outcome.error.code)) {
        // Written by the run reconciler from Temporal's own close (an operator's terminate reason).
        return { at, type: 'failed', error: outcome.error.error, code: outcome.error.code };
      }
      return {
        at,
        type: 'failed',
        ...failureOf(
          { message: outcome.error?.error, applicationFailureInfo: { type: outcome.error?.code ?? 'MODEL_ERROR' } },
          reference,
        ),
      };
    case 'cancelled':
      return { at, type: 'cancelled' };
  }
}
