import { PageTitle } from '../components/ui';

/** Placeholder: built in a following commit. */
export function OAuthCompletePage() {
  return <PageTitle>OAuthCompletePage</PageTitle>;
}
