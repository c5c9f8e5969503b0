import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { stopChild } from '../../scripts/runtime/processes.js';
import { Stack } from '../utils/stack.js';

const healthScript = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'worker-health.js');

/** Runs the worker's health check as docker-compose.yml does, with the stack's environment. */
function check(env: NodeJS.ProcessEnv, args: string[] = []): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [healthScript, ...args], { env }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}

describe('worker health check (node dist/src/worker-health.js, the compose healthcheck)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await Stack.start();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('passes while the worker polls, and fails once it cannot (no poller, or its last poll too old)', async () => {
    const healthy = await check(stack.env);
    expect(healthy).toMatchObject({ code: 0 });
    expect(healthy.output).toMatch(/^healthy: .+ polled "test-[\w-]+" \(workflow \d+ s ago, activity \d+ s ago\)/);

    // A task queue no worker of this host polls.
    const nobody = await check({ ...stack.env, TEMPORAL_TASK_QUEUE: `${stack.env.TEMPORAL_TASK_QUEUE}-nobody` });
    expect(nobody.code).toBe(1);
    expect(nobody.output).toContain('unhealthy: workflow tasks of');
    expect(nobody.output).toContain('has polled this task queue');

    // The worker killed: Temporal still lists it for minutes, but its last poll ages past the limit.
    stack.worker!.child.kill('SIGKILL');
    await stopChild(stack.worker!.child);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const dead = await check(stack.env, ['--max-age-seconds=2']);
    expect(dead.code).toBe(1);
    expect(dead.output).toMatch(/unhealthy: workflow tasks of "test-[\w-]+": the last poll of \d+@.+ was \d+ s ago/);

    // Temporal unreachable: unhealthy, not a hang.
    const unreachable = await check({ ...stack.env, TEMPORAL_ADDRESS: '127.0.0.1:1' });
    expect(unreachable.code).toBe(1);
    expect(unreachable.output).toContain('unhealthy:');
  });
});
