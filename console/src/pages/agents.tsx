/** The Agents area: the pages live in ./agents/ (list, form, detail with its webhook and runs panels). */
export { AgentsPage } from './agents/list';
export { AgentFormPage } from './agents/form';
export { AgentPage } from './agents/detail';
