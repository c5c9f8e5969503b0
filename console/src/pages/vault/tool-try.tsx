import { type FormEvent, useState } from 'react';
import { api, unwrap, type Schemas } from '../../api/client';
import { useAction } from '../../api/hooks';
import { type Converted, type JsonSchema, SchemaInput, useSchemaInput } from '../../components/schema-form';
import { mcpResultOf } from '../../components/tool-result/content';
import { ContentBlocks } from '../../components/tool-result/content-blocks';
import { Busy, ErrorNote } from '../../components/ui';
import { type Connection, isMcp, type Site, type SiteTool } from './connection';

type CallAnswer = Schemas['ToolCallResponseDto'];

const ERROR_TITLES: Record<string, string> = {
  // Also the service's own refusals before anything is sent (an expired token, a site not connected).
  TOOL_EXECUTION_ERROR: 'The call did not succeed',
  OUTGOING_RATE_LIMITED: 'Too many calls to this site',
  VALIDATION_ERROR: "The input does not match the tool's schema",
};

/** The answer: an MCP server's content blocks, or an agentsite site's JSON as it came. */
function CallResult({
  answer,
  site,
  tool,
  headingId,
}: {
  answer: CallAnswer;
  site: Site;
  tool: string;
  headingId: string;
}) {
  const mcp = isMcp(site) ? mcpResultOf(answer.result) : undefined;
  return (
    <div role="status" aria-live="polite" aria-labelledby={`${headingId}-result`}>
      <h3 id={`${headingId}-result`}>Result</h3>
      <p>
        Answered in <strong>{Math.round(answer.durationMs)} ms</strong>.
      </p>
      {mcp === undefined ? (
        <pre tabIndex={0} aria-label={`Result of ${tool}`}>
          {JSON.stringify(answer.result, null, 2)}
        </pre>
      ) : (
        <section aria-label={`Result of ${tool}`}>
          <ContentBlocks result={mcp} tool={tool} site={site.name} />
        </section>
      )}
    </div>
  );
}

/**
 * A form generated from the tool's input schema (or its input as JSON); the call goes through the
 * service with the stored credential. A site that is not connected gets no form (the call could only
 * fail): the form says so and points to the connection panel. `onFailed` reloads the site after a
 * refused call, so a credential removed meanwhile (another tab) shows as such.
 */
export function ToolTry({
  site,
  tool,
  connection,
  onFailed,
}: {
  site: Site;
  tool: SiteTool;
  connection: Connection;
  onFailed: () => Promise<void>;
}) {
  const schema = tool.inputSchema as JsonSchema;
  const input = useSchemaInput(schema);
  const [local, setLocal] = useState<Converted['problems']>([]);
  const [answer, setAnswer] = useState<CallAnswer>();
  const call = useAction(async (body: Record<string, unknown>) => {
    setAnswer(undefined);
    const result = await unwrap(
      api.POST('/api/vault/sites/{id}/tools/{tool}/call', {
        params: { path: { id: site.id, tool: tool.name } },
        body: { input: body },
      }),
    ).catch(async (err: unknown) => {
      await onFailed();
      throw err;
    });
    setAnswer(result);
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const converted = input.convert();
    setLocal(converted.problems);
    if (converted.problems.length === 0) {
      void call.run(converted.input);
    }
  };
  const errorFor = (field: string) => local.find((p) => p.field === field)?.message ?? call.error?.fieldMessage(field);
  const headingId = `try-${tool.name}`;
  const refused = isMcp(site) && call.error?.code === 'TOOL_EXECUTION_ERROR';

  return (
    <section className="panel" aria-labelledby={headingId}>
      <h2 id={headingId}>
        Try <code>{tool.name}</code>
      </h2>
      {tool.title === undefined || tool.title === tool.name ? null : <p className="tool-title">{tool.title}</p>}
      <p>{tool.description}</p>
      {connection.usable ? null : (
        <p className="notice" role={call.error === undefined ? undefined : 'alert'}>
          <strong>{connection.label}.</strong> {connection.detail} <a href="#connection">Go to the connection form</a>
        </p>
      )}
      {connection.usable ? (
        <form onSubmit={submit} aria-label={`Input for ${tool.name}`} noValidate>
          <SchemaInput state={input} errorFor={errorFor} toolName={tool.name} />
          <div className="actions">
            <button type="submit" disabled={call.busy}>
              Call {tool.name}
            </button>
          </div>
        </form>
      ) : null}
      {call.busy ? <Busy label={`Calling ${tool.name} on ${site.name}…`} /> : null}
      {connection.usable ? (
        <ErrorNote
          error={call.error}
          title={
            refused
              ? `${site.name} refused the call`
              : call.error
                ? (ERROR_TITLES[call.error.code] ?? 'The call failed')
                : undefined
          }
          fields={input.mode === 'form' ? Object.keys(schema.properties ?? {}).map((name) => `input.${name}`) : []}
        />
      ) : null}
      {answer === undefined ? null : <CallResult answer={answer} site={site} tool={tool.name} headingId={headingId} />}
    </section>
  );
}
