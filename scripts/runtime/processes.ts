import { type ChildProcess } from 'node:child_process';
import net from 'node:net';

/** Resolves when the child exits; sends SIGTERM, then SIGKILL after `graceMs`. */
export async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return;
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/**
 * The range freePort takes ports from in this process, when one is set: `AGENTSITE_PORT_RANGE` =
 * `<first>-<last>@<pid>`, honoured only by the process whose pid it names (children spawned with a
 * copy of the environment fall back to the system's choice). The test runner gives each jest worker
 * its own range below the kernel's ephemeral ports, so a port one suite picked cannot be handed to a
 * suite in another worker, nor be taken by an outgoing connection, before its server listens on it.
 */
function portRange(): { first: number; last: number } | undefined {
  const match = /^(\d+)-(\d+)@(\d+)$/.exec(process.env.AGENTSITE_PORT_RANGE ?? '');
  if (match === null || Number(match[3]) !== process.pid) {
    return undefined;
  }
  return { first: Number(match[1]), last: Number(match[2]) };
}

function listenOnce(port: number): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', (err: NodeJS.ErrnoException) =>
      err.code === 'EADDRINUSE' || err.code === 'EACCES' ? resolve(undefined) : reject(err),
    );
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : undefined));
    });
  });
}

/**
 * The ports above 1023 that fetch() refuses to connect to: the Fetch standard's "bad ports", which
 * Node's fetch applies as browsers do (`TypeError: fetch failed`, cause `bad port`). A suite whose API
 * listened on 10080 could never be reached by its own readiness probe.
 */
const FETCH_BAD_PORTS = new Set([
  1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/**
 * A TCP port that was free a moment ago on 127.0.0.1 and that fetch() may connect to: the next free
 * one of this process's range (see portRange), else one the system picks.
 */
export async function freePort(): Promise<number> {
  const range = portRange();
  if (range !== undefined) {
    const size = range.last - range.first + 1;
    // Each test file starts at a random place in the range (jest gives every file its own copy of
    // the environment), then goes on from the port it took last.
    const cursor = Number(process.env.AGENTSITE_PORT_CURSOR ?? Math.floor(Math.random() * size)) || 0;
    for (let i = 0; i < size; i += 1) {
      const port = range.first + ((cursor + i) % size);
      if (!FETCH_BAD_PORTS.has(port) && (await listenOnce(port)) !== undefined) {
        process.env.AGENTSITE_PORT_CURSOR = String((cursor + i + 1) % size);
        return port;
      }
    }
  }
  const port = await listenOnce(0);
  if (port === undefined) {
    throw new Error('no free port');
  }
  return port;
}

/** Whether something accepts TCP connections on host:port. */
export function portOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Thrown by a check to stop waiting at once (the thing waited for can no longer come). */
export class StopWaiting extends Error {}

/** Polls `check` until it returns true or the deadline passes. */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
  intervalMs = 200,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      if (await check()) {
        return;
      }
    } catch (err) {
      if (err instanceof StopWaiting) {
        throw err;
      }
      lastError = err;
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  throw new Error(`${what} was not ready within ${timeoutMs} ms${lastError ? `: ${String(lastError)}` : ''}`);
}
