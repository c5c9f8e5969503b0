import { PageTitle } from '../components/ui';

/** Placeholder: built in a following commit. */
export function VaultPage() {
  return <PageTitle>VaultPage</PageTitle>;
}

/** Placeholder: built in a following commit. */
export function SitePage() {
  return <PageTitle>SitePage</PageTitle>;
}
