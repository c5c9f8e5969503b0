import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fastify, { type FastifyInstance } from 'fastify';
import { registerBodyParsers } from './body-parsers.js';
import { bodyParserProblem } from './error-filter.js';

/** A Fastify app with the API's parsers: each route answers the body it got (or the refusal's code). */
describe('the API body parsers', () => {
  let app: FastifyInstance;

  beforeAll(async () => {
    app = fastify();
    registerBodyParsers(app, {
      limitFor: (req) => (req.routeOptions.url === '/large' ? 64 : 16),
      rawBytes: (req) => req.routeOptions.url === '/raw',
    });
    app.setErrorHandler((err, _req, reply) => {
      const problem = bodyParserProblem(err);
      void reply.code(problem === undefined ? 500 : 400).send({ refused: problem?.message ?? String(err) });
    });
    for (const url of ['/echo', '/large', '/raw']) {
      app.post(url, async (req) => ({ body: Buffer.isBuffer(req.body) ? `bytes:${req.body.toString()}` : req.body }));
    }
    await app.ready();
  });
  afterAll(() => app.close());

  const post = async (url: string, payload: string | Buffer, type?: string, headers: Record<string, string> = {}) => {
    const res = await app.inject({
      method: 'POST',
      url,
      payload,
      headers: { ...(type === undefined ? {} : { 'content-type': type }), ...headers },
    });
    return { status: res.statusCode, json: res.json<{ body?: unknown; refused?: string }>() };
  };

  it('reads JSON objects and arrays (application/json and any +json), and an empty body as {}', async () => {
    expect(await post('/echo', '{"a":1}', 'application/json')).toEqual({ status: 200, json: { body: { a: 1 } } });
    expect((await post('/echo', ' [1]', 'application/merge-patch+json')).json).toEqual({ body: [1] });
    expect((await post('/echo', '', 'application/json')).json).toEqual({ body: {} });
  });

  it('refuses JSON that is not an object or array at the top, broken JSON, and another charset', async () => {
    for (const payload of ['"text"', 'null', '{"a":']) {
      expect((await post('/echo', payload, 'application/json')).json.refused).toBe('Request body is not valid JSON');
    }
    expect((await post('/echo', '{}', 'application/json; charset=utf-16')).json.refused).toBe(
      'Request body charset is not supported',
    );
  });

  it('refuses bytes that are not UTF-8, compressed bodies, and bodies past the route limit', async () => {
    const latin1 = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xe9, 0x22, 0x7d]);
    expect((await post('/echo', latin1, 'application/json')).json.refused).toBe('Request body is not valid UTF-8');
    expect((await post('/echo', '{}', 'application/json', { 'content-encoding': 'gzip' })).json.refused).toBe(
      'Request body encoding is not supported',
    );
    const big = JSON.stringify({ a: 'x'.repeat(30) });
    expect((await post('/echo', big, 'application/json')).json.refused).toBe('Request body is too large');
    expect((await post('/large', big, 'application/json')).json).toEqual({ body: { a: 'x'.repeat(30) } });
  });

  it('reads flat forms', async () => {
    expect((await post('/large', 'token=abc&x=1', 'application/x-www-form-urlencoded')).json).toEqual({
      body: { token: 'abc', x: '1' },
    });
  });

  it('hands the raw route its exact bytes whatever their type, and leaves other types unread', async () => {
    expect((await post('/raw', '{"a": 1}', 'application/json')).json).toEqual({ body: 'bytes:{"a": 1}' });
    expect((await post('/raw', 'plain', 'text/plain')).json).toEqual({ body: 'bytes:plain' });
    expect((await post('/echo', 'plain', 'text/plain')).json).toEqual({});
  });
});
