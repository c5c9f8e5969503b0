import { PageTitle } from '../components/ui';

/** Placeholder: built in a following commit. */
export function BillingPage() {
  return <PageTitle>BillingPage</PageTitle>;
}
