import { describe, expect, it } from '@jest/globals';
import { temporalLogFields, TemporalJsonLogger } from './runtime-logger.js';
import { logFieldsOfActivityInput } from './activity-log-fields.js';
import { RUN_LOG_FIELD } from '../../workflows/contracts.js';

const RUN = '26326874-a2fe-4b1d-b8d7-556d7df4fd9e';
const AGENT = '3c428499-3548-4799-baa3-a194d61eca02';
const USER = 'a55f65c5-14f7-4bbc-95d7-90ee04bd2076';

function capture(level: 'error' | 'warn' | 'log' | 'debug' = 'log') {
  const lines: Array<Record<string, unknown>> = [];
  const logger = new TemporalJsonLogger(level, (line) => lines.push(JSON.parse(line) as Record<string, unknown>));
  return { logger, lines };
}

describe("TemporalJsonLogger: the SDK's lines in the one shape", () => {
  it("maps a workflow line's run id to workflowRunId and names our run id as runId", () => {
    const { logger, lines } = capture();
    logger.info('run started', {
      sdkComponent: 'workflow',
      namespace: 'default',
      taskQueue: 'q',
      workflowId: `agent-${AGENT}`,
      runId: '01a2085b-e6ca-7b7b-90c8-8147091ba148',
      workflowType: 'agentQueueWorkflow',
      [RUN_LOG_FIELD]: RUN,
      requestId: 'req-12345678',
      [Symbol.for('log_timestamp')]: 1_700_000_000_123_000_000n,
    });
    expect(lines).toEqual([
      {
        time: '2023-11-14T22:13:20.123Z',
        level: 'info',
        service: 'worker',
        pid: process.pid,
        context: 'temporal:workflow',
        message: 'run started',
        requestId: 'req-12345678',
        agentId: AGENT,
        runId: RUN,
        namespace: 'default',
        taskQueue: 'q',
        workflowId: `agent-${AGENT}`,
        workflowRunId: '01a2085b-e6ca-7b7b-90c8-8147091ba148',
        workflowType: 'agentQueueWorkflow',
      },
    ]);
  });

  it('names our run id on a line of the agent’s queue, which runs each run itself (not in its workflow id)', () => {
    const fields = temporalLogFields({
      sdkComponent: 'workflow',
      workflowId: `agent-${AGENT}`,
      runId: '01a2085b-e6ca-7b7b-90c8-8147091ba148',
      workflowType: 'agentQueueWorkflow',
      [RUN_LOG_FIELD]: RUN,
    });
    expect(fields).toEqual({
      workflowId: `agent-${AGENT}`,
      workflowRunId: '01a2085b-e6ca-7b7b-90c8-8147091ba148',
      workflowType: 'agentQueueWorkflow',
      runId: RUN,
      agentId: AGENT,
    });
  });

  it("keeps an activity line's runId (ours, from the interceptor) and drops the task token", () => {
    const fields = temporalLogFields({
      sdkComponent: 'activity',
      activityId: '2',
      activityType: 'callTool',
      taskToken: 'Q2FwYWJpbGl0eQ==',
      workflowId: `agent-${AGENT}`,
      workflowRunId: 'wf-run',
      runId: RUN,
      agentId: AGENT,
      attempt: 2,
    });
    expect(fields).toEqual({
      activityId: '2',
      activityType: 'callTool',
      workflowId: `agent-${AGENT}`,
      workflowRunId: 'wf-run',
      runId: RUN,
      agentId: AGENT,
      attempt: 2,
    });
  });

  it("reads the agent from its queue's workflow id; other ids are left alone", () => {
    expect(temporalLogFields({ workflowId: `agent-${AGENT}`, runId: 'x' })).toMatchObject({
      agentId: AGENT,
      workflowRunId: 'x',
    });
    expect(temporalLogFields({ workflowId: 'run-retention-q' })).not.toHaveProperty('runId');
    // No workflow is named after a run: a workflow id never gives the run's id.
    expect(temporalLogFields({ workflowId: `run-${RUN}` })).not.toHaveProperty('runId');
    expect(temporalLogFields(undefined)).toEqual({});
  });

  it("writes the SDK's own worker and core lines, their errors by type only, and follows LOG_LEVEL", () => {
    const { logger, lines } = capture('log');
    logger.debug('Activity started', { sdkComponent: 'worker' });
    logger.info('Worker state changed', { sdkComponent: 'worker', taskQueue: 'q', state: 'RUNNING' });
    logger.warn('Activity failed', {
      sdkComponent: 'worker',
      error: Object.assign(new Error("the site said: 'Salaries are locked'"), {
        name: 'ApplicationFailure',
        type: 'TOOL_EXECUTION_ERROR',
      }),
    });
    logger.info('core line', { sdkComponent: 'core', target: 'temporal_sdk_core' });
    expect(lines.map((l) => [l.level, l.context, l.message])).toEqual([
      ['info', 'temporal:worker', 'Worker state changed'],
      ['warn', 'temporal:worker', 'Activity failed'],
      ['info', 'temporal:core', 'core line'],
    ]);
    expect(lines[1]!.error).toEqual({ name: 'ApplicationFailure', type: 'TOOL_EXECUTION_ERROR' });
    const quiet = capture('error');
    quiet.logger.warn('dropped', {});
    quiet.logger.error('kept', {});
    expect(quiet.lines.map((l) => l.message)).toEqual(['kept']);
  });
});

describe('logFieldsOfActivityInput: the run ids an activity input carries', () => {
  it('reads the ids at the top level and from the run request of turn 1', () => {
    expect(logFieldsOfActivityInput({ runId: RUN, userId: USER, agentId: AGENT, requestId: 'req-12345678' })).toEqual({
      runId: RUN,
      userId: USER,
      agentId: AGENT,
      requestId: 'req-12345678',
    });
    expect(
      logFieldsOfActivityInput({ runId: RUN, userId: USER, start: { agentId: AGENT, requestId: 'req-12345678' } }),
    ).toEqual({ runId: RUN, userId: USER, agentId: AGENT, requestId: 'req-12345678' });
  });

  it('takes only well-formed ids: an input is not trusted', () => {
    expect(
      logFieldsOfActivityInput({ runId: 'x"}\n{"level":"fatal', agentId: 42, requestId: 'has spaces in it' }),
    ).toEqual({});
    expect(logFieldsOfActivityInput(undefined)).toEqual({});
    expect(logFieldsOfActivityInput('text')).toEqual({});
  });
});
