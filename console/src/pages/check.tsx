import { type FormEvent, useState } from 'react';
import { api, type Schemas, unwrap } from '../api/client';
import { useAction } from '../api/hooks';
import { Busy, ErrorNote, Field, PageTitle } from '../components/ui';

type Report = Schemas['ConformanceReportDto'];

const BADGE: Record<Report['rules'][number]['status'], string> = {
  pass: 'badge ok',
  fail: 'badge bad',
  skipped: 'badge',
};

/**
 * Site check: the conformance rules of `agentsite-check` run by the service against a site (its
 * SSRF guard applies). Rules that need a sign-in at the site's consent page are skipped here: the
 * CLI runs them with a test account.
 */
export function CheckPage() {
  const [url, setUrl] = useState('');
  const [token, setToken] = useState('');
  const [report, setReport] = useState<Report>();
  const check = useAction(async () => {
    setReport(await unwrap(api.POST('/api/conformance/check', { body: { url, ...(token === '' ? {} : { token }) } })));
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void check.run();
  };
  return (
    <section>
      <PageTitle>Check a site</PageTitle>
      <p>
        For site authors: whether a site&apos;s manifest, HTTPS, tool endpoints, limits and OAuth work with agentsite.
        The site must be in your vault (add it first). Every tool (the first 10) is called once with a sample input, so
        use a test account&apos;s token; each request counts against your vault&apos;s outgoing limit for the site, and
        the rules past it are skipped. For every rule and any site, run{' '}
        <code>AGENTSITE_CHECK_PASSWORD=… npx agentsite-check &lt;site URL&gt; --user …</code> from a checkout.
      </p>
      <form onSubmit={submit} className="panel" noValidate>
        <Field label="Site address" error={check.error?.fieldMessage('url')}>
          {(p) => (
            <input
              {...p}
              type="url"
              required
              placeholder="https://notes.example.com"
              value={url}
              onChange={(e) => setUrl(e.target.value)}
            />
          )}
        </Field>
        <Field
          label="Test account's bearer token (optional)"
          hint="Used for this check only, never stored."
          error={check.error?.fieldMessage('token')}
        >
          {(p) => (
            <input {...p} type="password" autoComplete="off" value={token} onChange={(e) => setToken(e.target.value)} />
          )}
        </Field>
        <ErrorNote error={check.error} title="Could not run the check" fields={['url', 'token']} />
        <div className="actions">
          <button type="submit" disabled={check.busy}>
            Check
          </button>
        </div>
        {check.busy ? <Busy label="Checking the site…" /> : null}
      </form>
      {report === undefined ? null : (
        <section aria-labelledby="report-heading" className="panel">
          <h2 id="report-heading">
            {report.url}: {report.counts.pass} passed, {report.counts.fail} failed, {report.counts.skipped} skipped
          </h2>
          <table data-testid="conformance-report">
            <thead>
              <tr>
                <th scope="col">Result</th>
                <th scope="col">Rule</th>
                <th scope="col">What was seen</th>
              </tr>
            </thead>
            <tbody>
              {report.rules.map((rule) => (
                <tr key={rule.id}>
                  <td>
                    <span className={BADGE[rule.status]}>{rule.status}</span>
                  </td>
                  <td>
                    <code>{rule.id}</code>
                    <br />
                    {rule.title}
                  </td>
                  <td>
                    {rule.message}
                    {rule.hint === undefined ? null : (
                      <>
                        <br />
                        <strong>Fix:</strong> {rule.hint}
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
    </section>
  );
}
