import type { DeliveryRecord, WebhooksRepository } from '../webhooks.repository.js';

/** The deliveries recorded, in memory, newest last, with the bound the SQL keeps; `failing` makes record throw. */
export class FakeWebhooksRepository implements Pick<WebhooksRepository, 'record'> {
  readonly rows: DeliveryRecord[] = [];
  failing = false;

  async record(row: DeliveryRecord, kept: number): Promise<void> {
    if (this.failing) {
      throw new Error('database unavailable');
    }
    this.rows.push(row);
    const agentRows = this.rows.filter((r) => r.agentId === row.agentId);
    for (const old of agentRows.slice(0, Math.max(0, agentRows.length - kept))) {
      this.rows.splice(this.rows.indexOf(old), 1);
    }
  }
}
