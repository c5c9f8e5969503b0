export { agentQueueWorkflow } from './agent-queue.workflow.js';
export { scheduledTriggerWorkflow } from './scheduled-trigger.workflow.js';
export { echoWorkflow } from './echo.workflow.js';
export { runRetentionWorkflow } from './run-retention.workflow.js';
export { purchaseReconcileWorkflow } from './purchase-reconcile.workflow.js';
export { notificationWorkflow } from './notification.workflow.js';
export { runReconcileWorkflow } from './run-reconcile.workflow.js';
