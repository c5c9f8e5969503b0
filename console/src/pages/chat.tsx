import { PageTitle } from '../components/ui';

/** Placeholder: built in a following commit. */
export function ChatPage() {
  return <PageTitle>ChatPage</PageTitle>;
}
