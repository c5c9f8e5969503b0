import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { workflowSource } from '../../src/temporal/worker-factory.js';
import { ARCHIVE_AT_HANDOVER_PATCH, RUN_TOOL_SETS_PATCH } from '../../workflows/contracts.js';

/** dist/test/workflows → the repository's test/fixtures/histories (they are not compiled into dist). */
const HISTORIES = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  'test',
  'fixtures',
  'histories',
);

/**
 * A history as recorded by scripts/record-histories.ts: the wire encoding of `handle.fetchHistory()`,
 * in base64. (Not JSON: this install has two copies of protobufjs 8, and @temporalio/common's
 * historyFromJSON then refuses @temporalio/proto's types with "type must be a Type".)
 */
function history(name: string): proto.temporal.api.history.v1.History {
  return proto.temporal.api.history.v1.History.decode(
    Buffer.from(readFileSync(path.join(HISTORIES, name), 'utf8'), 'base64'),
  );
}

/** The worker's two bundles: plain, and traced (OTEL_EXPORTER_OTLP_ENDPOINT set). */
const bundles = {
  plain: (name: string) => ({ ...workflowSource(), replayName: name }),
  traced: (name: string) => ({
    ...workflowSource(false, true),
    sinks: { exporter: { export: { fn: () => undefined } } },
    replayName: name,
  }),
};

/** What scripts/record-histories.ts records, per bundle (the traced ones under `agent-queue-traced-`). */
const SCENARIOS = [
  'run-completed',
  'run-failed',
  'run-active-and-queued',
  'idle-after-runs',
  'run-awaiting-approval',
  'run-approved',
  // Recorded after tool definitions left the payloads (patch 'run-tool-sets'): turn 1 answers the tool
  // set's hash, each tool answer the route of its tool.
  'tool-sets-run-completed',
  'tool-sets-run-approved',
  // Recorded after the queue archived an execution's runs at its hand-over (patch 'archive-at-handover'):
  // a completed, a failed and three webhook runs (two queued in a burst), archived in one local
  // activity just before the execution continued as new.
  'handover-runs-archived',
  // Recorded after starts carried archiveAfterHandover: the execution that ran a completed and a failed
  // run hands them over in its continue-as-new (no archive of its own), and the next one archives them
  // in an activity as it begins, beside a webhook run.
  'after-handover-continued',
  'after-handover-archived',
  // Schedules' firings as signals: one skipped while a webhook run was active (the firing told), then
  // one run at the idle queue (its firing told of its end).
  'scheduled-skipped',
  'scheduled-ran',
];

/**
 * What scripts/record-histories.ts records of an agent's scheduled trigger, per bundle (the traced ones
 * under `scheduled-trigger-traced-`): waiting for its run's end, ended, a skipped firing, and one whose
 * run the queue skipped (dropped), each having asked for its run in an activity (`activity-`) or in a
 * local one (`local-`).
 */
const TRIGGER_SCENARIOS = ['activity', 'local'].flatMap((shape) =>
  ['waiting', 'ended', 'skipped', 'dropped'].map((s) => `${shape}-${s}`),
);

/**
 * Executions that began under the code recorded replay under this code without nondeterminism: every
 * recorded history replays with either bundle (a worker may turn tracing on or off, or a mix of workers
 * may run), so a change of the workflows that would break an execution in flight fails here. Record
 * them again (scripts/record-histories.ts) only for a change released under a new worker build id or
 * behind a patch (CONTRIBUTING.md, "Changing a workflow").
 */
describe('workflow replay of the recorded histories', () => {
  const recorded = readdirSync(HISTORIES).filter((name) => name.endsWith('.b64'));

  it('holds each scenario recorded by each bundle', () => {
    expect([...recorded].sort()).toEqual(
      [
        ...SCENARIOS.flatMap((s) => [`agent-queue-${s}.b64`, `agent-queue-traced-${s}.b64`]),
        ...TRIGGER_SCENARIOS.flatMap((s) => [`scheduled-trigger-${s}.b64`, `scheduled-trigger-traced-${s}.b64`]),
      ].sort(),
    );
  });

  it('holds triggers in each state: waiting for the run, told it ended, skipped, dropped; asked in an activity or a local one', () => {
    const types = proto.temporal.api.enums.v1.EventType;
    for (const name of recorded.filter((n) => n.startsWith('scheduled-trigger-'))) {
      const events = history(name).events;
      const has = (type: number): boolean => events.some((e) => e.eventType === type);
      expect({
        name,
        markers: has(types.EVENT_TYPE_MARKER_RECORDED),
        activity: has(types.EVENT_TYPE_ACTIVITY_TASK_COMPLETED),
        signalled: has(types.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED),
        completed: has(types.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED),
      }).toEqual({
        name,
        markers: name.includes('-local-'),
        activity: name.includes('-activity-'),
        signalled: name.includes('-ended') || name.includes('-dropped'),
        completed: !name.includes('-waiting'),
      });
    }
  });

  it('holds runs of each shape: the tool-sets ones took that patch, the handover and scheduled ones both, the oldest none', () => {
    for (const name of recorded.filter((n) => n.startsWith('agent-queue-'))) {
      const bytes = Buffer.from(readFileSync(path.join(HISTORIES, name), 'utf8'), 'base64').toString('latin1');
      // The scheduled ones were recorded with every patch and started as the service starts a queue
      // now; their execution had not handed over (nothing archived yet).
      const scheduled = name.includes('-scheduled-');
      const handover = name.includes('handover') || scheduled;
      const after = name.includes('after-handover') || scheduled;
      expect({
        name,
        toolSets: bytes.includes(RUN_TOOL_SETS_PATCH),
        handover: bytes.includes(ARCHIVE_AT_HANDOVER_PATCH),
        // The per-run archive's local activity, the hand-over's (which closes the history), or the
        // activity of the execution after it.
        archive: bytes.includes('archiveRuns') ? 'archiveRuns' : bytes.includes('archiveRun') ? 'archiveRun' : 'none',
        carried: bytes.includes('archiveAfterHandover'),
      }).toEqual({
        name,
        toolSets: name.includes('tool-sets') || handover,
        handover,
        archive:
          name.includes('continued') || scheduled
            ? 'none'
            : handover
              ? 'archiveRuns'
              : name.includes('run-active') || name.includes('awaiting')
                ? 'none'
                : 'archiveRun',
        carried: after,
      });
    }
  });

  for (const name of recorded) {
    for (const bundle of ['plain', 'traced'] as const) {
      it(`replays ${name} with the ${bundle} bundle`, async () => {
        await expect(Worker.runReplayHistory(bundles[bundle](name), history(name))).resolves.toBeUndefined();
      }, 60_000);
    }
  }
});
