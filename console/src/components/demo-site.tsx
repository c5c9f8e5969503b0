/**
 * The demo site a new user can add first: `npm start` runs one beside the service and says where
 * (GET /api/about, public). Read once per page load.
 */
import { useEffect, useState } from 'react';
import { useNavigate } from 'react-router';
import { api, unwrap } from '../api/client';
import { useAction } from '../api/hooks';
import { Busy, ErrorNote } from './ui';

let about: Promise<string | null> | undefined;

function demoSiteUrl(): Promise<string | null> {
  about ??= unwrap(api.GET('/api/about'))
    .then((answer) => answer.demoSiteUrl)
    .catch(() => {
      about = undefined;
      return null;
    });
  return about;
}

/** The demo site's address; undefined until known, null when the service runs none. */
export function useDemoSite(): string | null | undefined {
  const [url, setUrl] = useState<string | null | undefined>(undefined);
  useEffect(() => {
    let live = true;
    void demoSiteUrl().then((value) => {
      if (live) {
        setUrl(value);
      }
    });
    return () => {
      live = false;
    };
  }, []);
  return url;
}

/** An empty vault's first step: the demo site, with its address, added in one click. */
export function DemoSiteSuggestion() {
  const url = useDemoSite();
  const navigate = useNavigate();
  const add = useAction(async () => {
    const site = await unwrap(api.POST('/api/vault/sites', { body: { url: url! } }));
    await navigate(`/vault/${site.id}`);
  });
  if (url === undefined) {
    return null;
  }
  if (url === null) {
    return <p>No site yet: add one by its address above.</p>;
  }
  return (
    <div className="panel first-step" role="region" aria-labelledby="demo-site-heading">
      <h3 id="demo-site-heading">Start with the demo site</h3>
      <p>
        No site yet. This service runs a demo site (a small notebook with tools) at <code>{url}</code>: add it, then
        connect it and try its tools in a chat or an agent.
      </p>
      <ErrorNote error={add.error} title="Could not add the demo site" />
      {add.busy ? <Busy label="Reading the demo site's manifest…" /> : null}
      <button type="button" onClick={() => void add.run()} disabled={add.busy}>
        Add the demo site
      </button>
    </div>
  );
}
