export { ApprovalsPage } from './approvals/inbox';
