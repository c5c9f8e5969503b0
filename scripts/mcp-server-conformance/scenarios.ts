/**
 * Which of the conformance suite's server scenarios (`@modelcontextprotocol/conformance` 0.1.16,
 * `list --server`) apply to agentsite's /mcp endpoint, and why the others do not. The suite's server
 * scenarios are of two kinds: generic ones, which any server offering the feature passes (the
 * handshake, ping, the shape of a list), and fixture ones, which call tools, resources or prompts of
 * fixed names (`test_simple_text`, `test://static-text`, `test_simple_prompt`, …) that only the
 * suite's reference server has. agentsite's tools are the workspace's sites' (`<site>__<tool>`) and
 * agents': no name of theirs can be a fixture's.
 */

/** The scenarios run against /mcp: each passes with no failed check and no warning. */
export const OFFERED: readonly string[] = ['server-initialize', 'ping', 'tools-list', 'resources-list'];

const FIXTURE_TOOL =
  'calls a fixture tool of the suite (test_*), which no workspace has: site tools are named <site>__<tool>';
const FIXTURE_RESOURCE =
  'reads a fixture resource of the suite (test://…); the only resources are runs, read by URI through a template (agentsite://runs/{id})';
const FIXTURE_PROMPT = 'gets a fixture prompt of the suite (test_*); the endpoint offers no prompts';

/** Every other scenario the suite lists, with the reason it is left out. */
export const LEFT_OUT: Readonly<Record<string, string>> = {
  'logging-set-level': 'the endpoint declares no logging capability: it sends no log notifications',
  'completion-complete': 'completes an argument of a fixture prompt; the endpoint offers no prompts and no completions',
  'tools-call-simple-text': FIXTURE_TOOL,
  'tools-call-image': FIXTURE_TOOL,
  'tools-call-audio': FIXTURE_TOOL,
  'tools-call-embedded-resource': FIXTURE_TOOL,
  'tools-call-mixed-content': FIXTURE_TOOL,
  'tools-call-with-logging': FIXTURE_TOOL,
  'tools-call-error': FIXTURE_TOOL,
  'tools-call-with-progress': FIXTURE_TOOL,
  'tools-call-sampling': `${FIXTURE_TOOL}; and the endpoint never asks the client to sample`,
  'tools-call-elicitation': `${FIXTURE_TOOL}; and the endpoint never elicits`,
  'json-schema-2020-12': `${FIXTURE_TOOL} (pending in the suite)`,
  'elicitation-sep1034-defaults': `${FIXTURE_TOOL}; and the endpoint never elicits`,
  'elicitation-sep1330-enums': `${FIXTURE_TOOL}; and the endpoint never elicits`,
  'server-sse-polling': `${FIXTURE_TOOL} (test_reconnection; pending in the suite), over a session the stateless endpoint never opens`,
  'server-sse-multiple-streams':
    'needs an Mcp-Session-Id: the endpoint is stateless (any API process answers any request), so the scenario stops with a warning and tests nothing',
  'resources-read-text': FIXTURE_RESOURCE,
  'resources-read-binary': FIXTURE_RESOURCE,
  'resources-templates-read': FIXTURE_RESOURCE,
  'resources-subscribe': `${FIXTURE_RESOURCE}; and the endpoint offers no subscriptions`,
  'resources-unsubscribe': `${FIXTURE_RESOURCE}; and the endpoint offers no subscriptions`,
  'prompts-list': 'the endpoint offers no prompts',
  'prompts-get-simple': FIXTURE_PROMPT,
  'prompts-get-with-args': FIXTURE_PROMPT,
  'prompts-get-embedded-resource': FIXTURE_PROMPT,
  'prompts-get-with-image': FIXTURE_PROMPT,
  'dns-rebinding-protection':
    'for localhost servers without authentication; /mcp is a remote endpoint that answers nothing without a bearer token, which a rebinding page cannot send',
};
