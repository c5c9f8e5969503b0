import { describe, expect, it } from '@jest/globals';
import { mcpResultContent, modelContentOf, TOOL_RESULT_LIMIT_BYTES } from './tool-results.js';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

describe('mcpResultContent (an MCP result as the model is shown it)', () => {
  it('passes text and images of the types the model takes as blocks of their own, in order', () => {
    const result = {
      content: [
        { type: 'text', text: 'The chart:' },
        { type: 'image', mimeType: 'image/png', data: PNG },
        { type: 'image', mimeType: 'image/jpeg', data: '/9j/4AAQ' },
        { type: 'text', text: 'That is all.', annotations: { audience: ['user'] } },
      ],
    };
    expect(mcpResultContent({ result })).toEqual([
      { type: 'text', text: 'The chart:' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
      { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQ' } },
      { type: 'text', text: 'That is all.' },
    ]);
  });

  it('describes other content types in a short text: images it cannot take, audio, links, binary resources', () => {
    const result = {
      content: [
        { type: 'image', mimeType: 'image/svg+xml', data: 'PHN2Zz48L3N2Zz4=' },
        { type: 'audio', mimeType: 'audio/wav', data: 'UklGRg==' },
        {
          type: 'resource_link',
          uri: 'file:///docs/readme.md',
          name: 'readme',
          mimeType: 'text/markdown',
          description: 'The readme',
        },
        { type: 'resource', resource: { uri: 'file:///logo.png', mimeType: 'image/png', blob: 'AAAA' } },
        { type: 'hologram', data: 'x' },
      ],
    };
    expect(mcpResultContent({ result })).toEqual([
      {
        type: 'text',
        text: '[image (image/svg+xml) of 11 bytes: not shown, the model takes image/jpeg, image/png, image/gif, image/webp only]',
      },
      { type: 'text', text: '[audio (audio/wav) of 4 bytes: not passed on, the model cannot hear it]' },
      { type: 'text', text: '[link to readme: file:///docs/readme.md (text/markdown) — The readme]' },
      { type: 'text', text: '[embedded resource file:///logo.png (image/png) of 3 bytes: binary, not shown]' },
      { type: 'text', text: '[hologram content: not shown]' },
    ]);
  });

  it('gives an embedded text resource to the model as text, named', () => {
    const result = {
      content: [{ type: 'resource', resource: { uri: 'file:///notes.txt', mimeType: 'text/plain', text: 'Buy milk' } }],
    };
    expect(mcpResultContent({ result })).toEqual([
      { type: 'text', text: '[resource file:///notes.txt (text/plain)]\nBuy milk' },
    ]);
  });

  it('shows structuredContent as JSON text when there is no content, and only the content when there is', () => {
    const structuredContent = { temperature: 21.5, unit: 'C' };
    expect(mcpResultContent({ result: { content: [], structuredContent } })).toEqual([
      { type: 'text', text: '{"temperature":21.5,"unit":"C"}' },
    ]);
    expect(mcpResultContent({ result: { content: [{ type: 'text', text: '21.5 °C' }], structuredContent } })).toEqual([
      { type: 'text', text: '21.5 °C' },
    ]);
  });

  it('never sends an empty text block or an empty result (the model refuses both)', () => {
    expect(mcpResultContent({ result: { content: [{ type: 'text', text: '' }] } })).toEqual([
      { type: 'text', text: '(the tool returned no content)' },
    ]);
    expect(mcpResultContent({ result: { content: [] } })).toEqual([
      { type: 'text', text: '(the tool returned no content)' },
    ]);
  });

  it('ends a cut result with the note of its length; a result cut as text stays text', () => {
    const note = `[cut: the answer was 90000 bytes; only its first ${TOOL_RESULT_LIMIT_BYTES} are kept]`;
    expect(mcpResultContent({ result: { content: [{ type: 'text', text: 'abc' }] }, truncated: 90_000 })).toEqual([
      { type: 'text', text: 'abc' },
      { type: 'text', text: note },
    ]);
    expect(mcpResultContent({ result: '{"content":[{"type":"te', truncated: 90_000 })).toEqual([
      { type: 'text', text: '{"content":[{"type":"te' },
      { type: 'text', text: note },
    ]);
  });
});

describe('modelContentOf', () => {
  it('an agentsite site’s answer is still its JSON text; an MCP tool’s, blocks', () => {
    const result = { content: [{ type: 'text', text: 'hi' }] };
    expect(modelContentOf({ result }, undefined)).toBe(JSON.stringify(result));
    expect(modelContentOf({ result }, 'mcp')).toEqual([{ type: 'text', text: 'hi' }]);
  });
});
