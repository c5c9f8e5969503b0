export { WorkspacesPage } from './workspaces/list';
export { WorkspacePage } from './workspaces/workspace';
