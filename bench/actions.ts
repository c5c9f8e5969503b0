/**
 * Benchmark 10's rules: the billable Temporal actions a workflow execution's history shows, as
 * Temporal Cloud counts them (docs.temporal.io/cloud/actions, "Temporal Cloud Actions"):
 *
 * - a workflow started (by a client, a continue-as-new, or a schedule): 1, counted on the new
 *   execution's WORKFLOW_EXECUTION_STARTED (never on the CONTINUED_AS_NEW event that precedes it);
 *   started by a schedule (the `TemporalScheduledById` search attribute): 3 (the schedule's two and the
 *   start's one);
 * - a signal-with-start: 1 in all, whether it started the workflow or not (STARTED followed by
 *   SIGNALED as the execution's second event counts once);
 * - a signal, from a client or another workflow: 1, on the signaled history;
 * - an update accepted (update-with-start's too, besides its start): 1; a rejected update is never
 *   written to a history (not seen here, and none is sent on the paths measured);
 * - an activity scheduled: 1, and each retry (its STARTED event's `attempt` - 1);
 * - markers (`markers`): 1 per workflow task that recorded any, however many ("all RecordMarkers from
 *   each Workflow Task as one action"): local activities' markers, and the marker `patched()` records
 *   once an execution (counted too: the page makes no exception for it); plus the local activity
 *   retries the task's metering metadata reports (`nonfirstLocalActivityExecutionAttempts`);
 * - a timer started: 1; a search-attribute upsert: 1 (unless it sets only `TemporalChangeVersion`);
 *   a child workflow initiated: 2 (its own history's start is then not counted again); workflow
 *   options updated: 1.
 *
 * Not in a history, so not counted: queries (none is sent on these paths: the API queries an agent's
 * queue only to repair a run row left queued over two minutes), activity heartbeats that reach the
 * server (the service's activities heartbeat only past HEARTBEAT_INTERVAL_MS, which no call of the
 * bench's fake model and site comes near), and the schedule patch the bench sends to fire a schedule
 * now (it stands in for the cron's firing, which sends none).
 */
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import type { Events } from './history-phases.js';

const EventType = proto.temporal.api.enums.v1.EventType;
type Event = Events[number];

/** The action categories a count is broken into. */
export const ACTION_KINDS = [
  'start',
  'schedule',
  'signal',
  'update',
  'activity',
  'markers',
  'timer',
  'search_attributes',
  'child',
  'other',
] as const;
export type ActionKind = (typeof ACTION_KINDS)[number];
export type ActionCount = Record<ActionKind, number>;

export function noActions(): ActionCount {
  return Object.fromEntries(ACTION_KINDS.map((k) => [k, 0])) as ActionCount;
}

export function addActions(into: ActionCount, more: ActionCount): ActionCount {
  for (const kind of ACTION_KINDS) {
    into[kind] += more[kind];
  }
  return into;
}

export function totalActions(count: ActionCount): number {
  return ACTION_KINDS.reduce((sum, kind) => sum + count[kind], 0);
}

const num = (value: unknown): number => Number(value ?? 0);

/** The keys of a search attributes' `indexedFields`. */
function attributeKeys(fields: unknown): string[] {
  return Object.keys((fields as { indexedFields?: Record<string, unknown> } | null)?.indexedFields ?? {});
}

/** The billable actions one execution's history shows (see the header for the rules). */
export function countActions(events: Events): ActionCount {
  const count = noActions();
  const markerTasks = new Set<number>();
  events.forEach((event: Event, i) => {
    switch (event.eventType) {
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED: {
        const attributes = event.workflowExecutionStartedEventAttributes;
        if (attributes?.parentWorkflowExecution) {
          break; // counted on the parent's initiated event
        }
        const signalWithStart = events[i + 1]?.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED;
        if (attributeKeys(attributes?.searchAttributes).includes('TemporalScheduledById')) {
          count.schedule += 2;
        }
        // A signal-with-start's start and signal are one action: counted as its signal below.
        if (!signalWithStart) {
          count.start += 1;
        }
        break;
      }
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
        count.signal += 1;
        break;
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
        count.update += 1;
        break;
      case EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
        count.activity += 1;
        break;
      case EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
        count.activity += Math.max(0, num(event.activityTaskStartedEventAttributes?.attempt) - 1);
        break;
      case EventType.EVENT_TYPE_MARKER_RECORDED:
        markerTasks.add(num(event.markerRecordedEventAttributes?.workflowTaskCompletedEventId));
        break;
      case EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
        count.markers += num(
          event.workflowTaskCompletedEventAttributes?.meteringMetadata?.nonfirstLocalActivityExecutionAttempts,
        );
        break;
      case EventType.EVENT_TYPE_TIMER_STARTED:
        count.timer += 1;
        break;
      case EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES: {
        const keys = attributeKeys(event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes);
        if (keys.some((key) => key !== 'TemporalChangeVersion')) {
          count.search_attributes += 1;
        }
        break;
      }
      case EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
        count.child += 2;
        break;
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_OPTIONS_UPDATED:
        count.other += 1;
        break;
      default:
        break;
    }
  });
  count.markers += markerTasks.size;
  return count;
}

/**
 * Every execution of a workflow id, newest first, by following each execution's start back to the
 * one it continued (no visibility query: its index may lag). `runId` names the newest to read.
 */
export async function executionsOf(client: Client, workflowId: string, runId?: string): Promise<Events[]> {
  const histories: Events[] = [];
  let next: string | undefined = runId;
  let first = true;
  while (first || next) {
    first = false;
    const events = (await client.workflow.getHandle(workflowId, next).fetchHistory()).events ?? [];
    histories.push(events);
    next = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  }
  return histories;
}

/** The actions of every execution of each workflow named (a workflow id, and the run to start from). */
export async function actionsOf(
  client: Client,
  workflows: Array<{ workflowId: string; runId?: string }>,
): Promise<ActionCount> {
  const count = noActions();
  for (const { workflowId, runId } of workflows) {
    for (const events of await executionsOf(client, workflowId, runId)) {
      addActions(count, countActions(events));
    }
  }
  return count;
}

/** `start 1  activity 5 …`: the categories with actions, per run. */
export function describeActions(count: ActionCount, runs: number): string {
  return ACTION_KINDS.filter((kind) => count[kind] > 0)
    .map((kind) => `${kind} ${+(count[kind] / runs).toFixed(2)}`)
    .join(', ');
}
