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

  // An agent's queue (`agent-<agentId>`) as it runs each run as a child workflow (issue #17, decision
  // 5), recorded by the plain bundle: a change of the run path must replay these, or give the queue a
  // new workflow type. (The traced bundle does not replay them: its update interceptor completes
  // `enqueueRun` a few yields later, after the child's start; see /work/notes/c17-runpath.md.)
  for (const [name, recorded] of [
    ['agent-queue-run-active-and-queued.b64', 'a run active as a child, a webhook queued behind it'],
    ['agent-queue-idle-after-runs.b64', 'idle after four runs queued by webhook signals and manual updates'],
  ] as const) {
    it(`replays ${name} (${recorded})`, async () => {
      await expect(
        Worker.runReplayHistory({ ...workflowSource(), replayName: name }, history(name)),
      ).resolves.toBeUndefined();
    }, 60_000);
  }
});
