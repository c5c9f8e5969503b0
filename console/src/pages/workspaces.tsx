import { PageTitle } from '../components/ui';

/** Placeholder: built in a following commit. */
export function WorkspacesPage() {
  return <PageTitle>WorkspacesPage</PageTitle>;
}

/** Placeholder: built in a following commit. */
export function WorkspacePage() {
  return <PageTitle>WorkspacePage</PageTitle>;
}
