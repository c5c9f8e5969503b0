import https from 'node:https';
import Anthropic from '@anthropic-ai/sdk';

/** Activities of the baseline: one model call through the SDK, one HTTPS tool call straight to the site. */
export function createBareActivities(options: { modelUrl: string; toolUrl: string; token: string; ca: string }) {
  const model = new Anthropic({ apiKey: 'bench', baseURL: options.modelUrl, maxRetries: 0 });
  const agent = new https.Agent({ keepAlive: true, ca: options.ca });
  return {
    async bareModelTurn(messages: Array<{ role: 'user' | 'assistant'; content: string }>): Promise<string> {
      const answer = await model.messages.create({
        model: 'bench',
        max_tokens: 100,
        messages,
        tools: [
          {
            name: 'reference_notebook__search_notes',
            description: 'search',
            input_schema: { type: 'object', properties: {} },
          },
        ],
      });
      return JSON.stringify(answer.content);
    },
    /** A waiting run's request, recorded (benchmark 5w's floor): what the record's round trip answers. */
    async bareRecordRequest(request: string): Promise<string> {
      return `recorded ${request.length}`;
    },
    async bareToolCall(): Promise<string> {
      return new Promise((resolve, reject) => {
        const req = https.request(
          options.toolUrl,
          {
            method: 'POST',
            agent,
            headers: { authorization: `Bearer ${options.token}`, 'content-type': 'application/json' },
          },
          (res) => {
            let text = '';
            res.on('data', (c: Buffer) => (text += c.toString()));
            res.on('end', () => resolve(text));
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify({ query: 'x' }));
      });
    },
  };
}

export type BareActivities = ReturnType<typeof createBareActivities>;
