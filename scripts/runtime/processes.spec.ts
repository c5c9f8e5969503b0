import { afterEach, describe, expect, it } from '@jest/globals';
import net from 'node:net';
import { freePort } from './processes.js';

function hold(port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

describe('freePort', () => {
  const saved = { range: process.env.AGENTSITE_PORT_RANGE, cursor: process.env.AGENTSITE_PORT_CURSOR };
  afterEach(() => {
    for (const [key, value] of [
      ['AGENTSITE_PORT_RANGE', saved.range],
      ['AGENTSITE_PORT_CURSOR', saved.cursor],
    ] as const) {
      if (value === undefined) {
        delete process.env[key];
      } else {
        process.env[key] = value;
      }
    }
  });

  it("takes this process's range in turn, skipping a port something listens on", async () => {
    // A range of three ports, the middle one held by a server.
    const first = 11_000 + (process.pid % 9_000);
    process.env.AGENTSITE_PORT_RANGE = `${first}-${first + 2}@${process.pid}`;
    process.env.AGENTSITE_PORT_CURSOR = '0';
    const held = await hold(first + 1);
    try {
      const taken = [await freePort(), await freePort(), await freePort()];
      expect(taken).toEqual([first, first + 2, first]);
    } finally {
      held.close();
    }
  });

  it("never takes a port fetch() refuses (10080, one of the Fetch standard's bad ports)", async () => {
    process.env.AGENTSITE_PORT_RANGE = `10080-10080@${process.pid}`;
    process.env.AGENTSITE_PORT_CURSOR = '0';
    const port = await freePort();
    expect(port).not.toBe(10_080);
    // What a suite's readiness probe met on that port, before any server could answer it.
    await expect(fetch('http://127.0.0.1:10080/')).rejects.toMatchObject({ cause: { message: 'bad port' } });
  });

  it('leaves a range named for another process (a child given a copy of the environment) to the system', async () => {
    process.env.AGENTSITE_PORT_RANGE = `10000-10009@${process.pid + 1}`;
    const port = await freePort();
    expect(port < 10_000 || port > 10_009).toBe(true);
  });
});
