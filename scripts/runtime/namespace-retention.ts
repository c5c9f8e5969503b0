import { Connection } from '@temporalio/client';
import { msNumberToTs, tsToMs } from '@temporalio/common/lib/time.js';

const MS_PER_DAY = 86_400_000;

/**
 * Sets how long the namespace keeps closed workflows' histories (RUN_HISTORY_RETENTION_DAYS). The dev
 * server's namespace starts with 1 day; the service keeps ended runs' timelines itself, so this only
 * bounds what operators can still read in the Temporal UI. Idempotent: changes nothing when it matches.
 * Returns the retention the namespace had before, in days.
 */
export async function applyNamespaceRetention(address: string, namespace: string, days: number): Promise<number> {
  const connection = await Connection.connect({ address });
  try {
    const described = await connection.workflowService.describeNamespace({ namespace });
    const before = tsToMs(described.config?.workflowExecutionRetentionTtl) / MS_PER_DAY;
    if (before !== days) {
      // Only the retention is set: the server leaves the fields of `config` that are not given as they are.
      await connection.workflowService.updateNamespace({
        namespace,
        config: { workflowExecutionRetentionTtl: msNumberToTs(days * MS_PER_DAY) },
      });
    }
    return before;
  } finally {
    await connection.close();
  }
}
