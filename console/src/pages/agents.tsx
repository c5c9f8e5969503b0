import { PageTitle } from '../components/ui';

/** Placeholder: built in a following commit. */
export function AgentsPage() {
  return <PageTitle>AgentsPage</PageTitle>;
}

/** Placeholder: built in a following commit. */
export function AgentPage() {
  return <PageTitle>AgentPage</PageTitle>;
}

/** Placeholder: built in a following commit. */
export function AgentFormPage() {
  return <PageTitle>AgentFormPage</PageTitle>;
}
