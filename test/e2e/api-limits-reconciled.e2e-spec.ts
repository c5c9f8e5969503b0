import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster } from '../utils/cluster.js';
import { expectError, expectRateLimited, type HttpAnswer } from '../utils/http.js';
import { TEST_PASSWORD, uniqueEmail } from '../utils/users.js';

// Limits large enough that each process admits some requests before PostgreSQL answers (small limits
// are exact, see scale-out.e2e-spec.ts): the combined count may pass the limit by up to 10 %.
const PER_ADDRESS = 300;
const PER_USER = 200;
// A window no other suite uses (counters are keyed by the limit's configuration), long enough that it
// does not end during the test.
const WINDOW = '611';
const IN_FLIGHT = 24;

let nextAddress = randomInt(1, 200) * 250;
/** A client address of its own (198.18.0.0/15, in the benchmarking range), as the proxy reports it. */
function freshAddress(): string {
  nextAddress += 1;
  return `198.18.${(nextAddress >> 8) & 255}.${nextAddress & 255}`;
}

/** `total` calls, `IN_FLIGHT` at a time, call i on API i mod 2 (round robin, as a load balancer). */
async function hammer(total: number, call: (i: number) => Promise<HttpAnswer>): Promise<HttpAnswer[]> {
  const answers: HttpAnswer[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < total) {
        const i = next;
        next += 1;
        answers[i] = await call(i);
      }
    }),
  );
  return answers;
}

function refusedWithRetryAfter(answers: HttpAnswer[]): HttpAnswer[] {
  const refused = answers.filter((a) => a.status === 429);
  for (const answer of refused) {
    expectRateLimited(answer, Number(WINDOW));
  }
  return refused;
}

describe('API limits counted in each process, reconciled through PostgreSQL (e2e)', () => {
  let cluster: Cluster;

  beforeAll(async () => {
    cluster = await Cluster.start({
      apis: 2,
      workers: 0,
      env: {
        TRUST_PROXY: '1',
        RATE_LIMIT_PER_IP: String(PER_ADDRESS),
        RATE_LIMIT_PER_USER: String(PER_USER),
        RATE_LIMIT_WINDOW_SECONDS: WINDOW,
      },
    });
    // Each process starts counting on its own (heartbeats) at its first limited request.
    for (let i = 0; i < 4; i += 1) {
      await cluster.api(i).http.get('/api/me', { headers: { 'x-forwarded-for': freshAddress() } });
    }
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  it('RATE_LIMIT_PER_IP: three times the limit from one address over both APIs passes the limit, within 10 %', async () => {
    const address = freshAddress();
    const answers = await hammer(3 * PER_ADDRESS, (i) =>
      cluster.api(i).http.get('/api/me', { headers: { 'x-forwarded-for': address } }),
    );
    const refused = refusedWithRetryAfter(answers);
    const passed = answers.filter((a) => a.status !== 429);
    for (const answer of passed) {
      expectError(answer, 'UNAUTHORIZED', 401);
    }
    expect(passed.length).toBeGreaterThanOrEqual(PER_ADDRESS);
    expect(passed.length).toBeLessThanOrEqual(PER_ADDRESS * 1.1);
    expect(refused.length).toBe(3 * PER_ADDRESS - passed.length);
    // Both processes refuse once the window is spent.
    for (const api of [cluster.api(0), cluster.api(1)]) {
      expectError(await api.http.get('/api/me', { headers: { 'x-forwarded-for': address } }), 'RATE_LIMITED', 429);
    }
  }, 120_000);

  it('RATE_LIMIT_PER_USER: three times the limit for one user over both APIs passes the limit, within 10 %', async () => {
    const registered = await cluster
      .api(0)
      .http.post(
        '/api/auth/register',
        { email: uniqueEmail(), password: TEST_PASSWORD },
        { headers: { 'x-forwarded-for': freshAddress() } },
      );
    expect(registered.status).toBe(201);
    const token = registered.body.accessToken as string;
    const answers = await hammer(3 * PER_USER, (i) =>
      cluster.api(i).http.get('/api/me', { token, headers: { 'x-forwarded-for': freshAddress() } }),
    );
    refusedWithRetryAfter(answers);
    const passed = answers.filter((a) => a.status !== 429);
    expect(passed.map((a) => a.status)).toEqual(Array(passed.length).fill(200));
    expect(passed.length).toBeGreaterThanOrEqual(PER_USER);
    expect(passed.length).toBeLessThanOrEqual(PER_USER * 1.1);
  }, 120_000);
});
