import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { workflowSource } from './worker-factory.js';

/** dist/src/temporal → the repository's test/fixtures/histories (JSON is not compiled into dist). */
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
 * A history as recorded: the wire encoding of `handle.fetchHistory()`, in base64. (Not JSON: this
 * install has two copies of protobufjs 8, and @temporalio/common's historyFromJSON then refuses
 * @temporalio/proto's types with "type must be a Type".)
 */
function history(name: string): proto.temporal.api.history.v1.History {
  return proto.temporal.api.history.v1.History.decode(
    Buffer.from(readFileSync(path.join(HISTORIES, name), 'utf8'), 'base64'),
  );
}

/**
 * Runs that began under earlier code replay under this code without nondeterminism: their histories,
 * recorded from a run of that code, are replayed by the workflow bundle the
 * worker runs. The archive step (patch `archive-run`) must not run where the history has no marker.
 */
describe('workflow replay of histories recorded under earlier code', () => {
  for (const name of ['agent-run-completed-before-archive.b64', 'agent-run-failed-before-archive.b64']) {
    it(`replays ${name} (recorded before runs archived their timelines)`, async () => {
      await expect(
        Worker.runReplayHistory({ ...workflowSource(), replayName: name }, history(name)),
      ).resolves.toBeUndefined();
    }, 60_000);

    // Turning tracing on (OTEL_EXPORTER_OTLP_ENDPOINT) switches the worker to the traced bundle,
    // whose interceptors must not change what a workflow does.
    it(`replays ${name} with the tracing interceptors`, async () => {
      await expect(
        Worker.runReplayHistory(
          {
            ...workflowSource(false, true),
            sinks: { exporter: { export: { fn: () => undefined } } },
            replayName: name,
          },
          history(name),
        ),
      ).resolves.toBeUndefined();
    }, 60_000);
  }

  // An agent's queue (`agent-<agentId>`) runs each run as a child workflow. Executions that began
  // before the patch `handlers-before-run` keep the order of commands their bundle wrote: the traced
  // bundle's Update interceptor completes `enqueueRun` a few yields after the plain one, after the
  // child's start, so each bundle replays only its own histories (see agentWorkflow's patch).
  const bundles = {
    plain: (name: string) => ({ ...workflowSource(), replayName: name }),
    traced: (name: string) => ({
      ...workflowSource(false, true),
      sinks: { exporter: { export: { fn: () => undefined } } },
      replayName: name,
    }),
  };
  for (const [name, recorded, replayedBy] of [
    ['agent-queue-run-active-and-queued.b64', 'plain, before the patch: a run active, a webhook queued', ['plain']],
    ['agent-queue-idle-after-runs.b64', 'plain, before the patch: idle after webhook and manual runs', ['plain']],
    ['agent-queue-traced-idle-after-runs.b64', 'traced, before the patch: the same runs', ['traced']],
    // Recorded under the patch: either bundle replays what either wrote.
    [
      'agent-queue-handlers-first-run-active-and-queued.b64',
      'plain, under the patch: a run active, a webhook queued',
      ['plain', 'traced'],
    ],
    ['agent-queue-handlers-first-idle-after-runs.b64', 'plain, under the patch: idle', ['plain', 'traced']],
    ['agent-queue-handlers-first-traced-idle-after-runs.b64', 'traced, under the patch: idle', ['plain', 'traced']],
    // The queue that runs each run itself (agentQueueWorkflow): a webhook run, a manual run with a tool
    // call, a blocked run with a webhook queued behind it; then a run cancelled (cancelRun) and a queued
    // one taken out (cancelQueuedRun). Either bundle replays what either wrote.
    [
      'agent-queue-inline-run-active-and-queued.b64',
      'agentQueueWorkflow, plain: a run active, a webhook queued',
      ['plain', 'traced'],
    ],
    [
      'agent-queue-inline-idle-after-runs.b64',
      'agentQueueWorkflow, plain: idle after runs, a cancel and a dequeue',
      ['plain', 'traced'],
    ],
    [
      'agent-queue-inline-traced-run-active-and-queued.b64',
      'agentQueueWorkflow, traced: a run active, a webhook queued',
      ['plain', 'traced'],
    ],
    [
      'agent-queue-inline-traced-idle-after-runs.b64',
      'agentQueueWorkflow, traced: idle after runs, a cancel and a dequeue',
      ['plain', 'traced'],
    ],
  ] as const) {
    for (const bundle of replayedBy) {
      it(`replays ${name} (${recorded}) with the ${bundle} bundle`, async () => {
        await expect(Worker.runReplayHistory(bundles[bundle](name), history(name))).resolves.toBeUndefined();
      }, 60_000);
    }
  }
});
