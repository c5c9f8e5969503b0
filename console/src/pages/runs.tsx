import { PageTitle } from '../components/ui';

/** Placeholder: built in a following commit. */
export function RunPage() {
  return <PageTitle>RunPage</PageTitle>;
}
