/**
 * A scheduled firing found the agent busy (its queue workflow refused a `skip_if_busy` run): the
 * firing is skipped, not failed. Thrown by the enqueue path, caught by the scheduled trigger's port.
 */
export class RunSkippedError extends Error {
  override readonly name = 'RunSkippedError';

  constructor() {
    super('skipped: the agent has a queued or active run');
  }
}
