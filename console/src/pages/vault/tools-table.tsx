import { annotationWords, type Connection, type Site, type SiteTool } from './connection';

/** What each annotation word means: MCP servers' hints about their tools, said as the server says them. */
const ANNOTATION_MEANINGS: Array<[string, string]> = [
  ['Read-only', 'does not change anything'],
  ['Destructive', 'may delete or overwrite'],
  ['Idempotent', 'calling it again with the same input changes nothing more'],
  ['Reaches outside', 'works with things beyond the server (the web, other services)'],
];

function ToolName({ tool }: { tool: SiteTool }) {
  if (tool.title === undefined || tool.title === tool.name) {
    return <code>{tool.name}</code>;
  }
  return (
    <>
      {tool.title}
      <br />
      <code className="muted">{tool.name}</code>
    </>
  );
}

/** A site's tools: name (and title), what each does (and the server's hints), scope, and a Try button. */
export function ToolsTable({
  site,
  connection,
  trying,
  onTry,
}: {
  site: Site;
  connection: Connection;
  trying: string | undefined;
  onTry: (tool: string) => void;
}) {
  const hinted = site.tools.some((t) => annotationWords(t).length > 0);
  return (
    <>
      <div className="table-scroll" role="region" aria-label={`Tools of ${site.name}`} tabIndex={0}>
        <table>
          <caption className="visually-hidden">Tools of {site.name}</caption>
          <thead>
            <tr>
              <th scope="col">Tool</th>
              <th scope="col">What it does</th>
              <th scope="col">Scope needed</th>
              <th scope="col">Try it</th>
            </tr>
          </thead>
          <tbody>
            {site.tools.map((tool) => (
              <tr key={tool.name}>
                <th scope="row">
                  <ToolName tool={tool} />
                </th>
                <td>
                  {tool.description}
                  {annotationWords(tool).length === 0 ? null : (
                    <ul className="hints" aria-label={`Hints of ${site.name} about ${tool.name}`}>
                      {annotationWords(tool).map((word) => (
                        <li key={word} className="badge">
                          {word}
                        </li>
                      ))}
                    </ul>
                  )}
                </td>
                <td>
                  <span className="badge">{tool.scope}</span>
                  {connection.state === 'oauth' &&
                  !connection.scopes.includes(tool.scope) &&
                  site.protocol !== 'mcp' ? (
                    <span className="badge warn">not granted</span>
                  ) : null}
                </td>
                <td>
                  <button
                    type="button"
                    className="secondary"
                    aria-pressed={trying === tool.name}
                    onClick={() => onTry(tool.name)}
                  >
                    Try {tool.name}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {hinted ? (
        <p className="hint">
          {site.name}&apos;s own hints about its tools:{' '}
          {ANNOTATION_MEANINGS.map(([word, meaning]) => `${word}: ${meaning}`).join('; ')}. The scope is the
          service&apos;s reading of them (read-only: read; destructive: delete; otherwise write).
        </p>
      ) : null}
    </>
  );
}
