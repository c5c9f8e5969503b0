import { Link } from 'react-router';
import { PageTitle } from '../components/ui';

export function NotFoundPage() {
  return (
    <section>
      <PageTitle>Page not found</PageTitle>
      <p>
        There is nothing here. <Link to="/vault">Go to your vault</Link>.
      </p>
    </section>
  );
}
