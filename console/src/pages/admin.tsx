import { PageTitle } from '../components/ui';

/** Placeholder: built in a following commit. */
export function AdminPage() {
  return <PageTitle>AdminPage</PageTitle>;
}
