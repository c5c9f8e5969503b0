/**
 * A full garbage collection in another Node process, through its inspector (the process started with
 * `--inspect=127.0.0.1:<port>`): its main isolate's and every worker thread's (the Temporal worker
 * runs workflows in a thread), then each isolate's heap. Benchmark 5 reads a worker's RSS after it: an
 * RSS read while garbage waits for a collection measured the same worker 50 to 250 KB a workflow.
 */

import { readFileSync } from 'node:fs';

/** One isolate's V8 heap after the collection (bytes). */
export interface HeapUsage {
  thread: string;
  usedBytes: number;
  totalBytes: number;
}

interface Message {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { message: string };
}

/**
 * An idle process's memory after a full collection: RSS (from /proc) and every isolate's V8 heap in use,
 * both in KB. Waits a second first (the work just sent settles), and half a second after.
 */
export async function memoryAfterCollection(pid: number, port: number): Promise<{ rss: number; heap: number }> {
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const heaps = await collectGarbage(port);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return {
    rss: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0),
    heap: heaps.reduce((sum, isolate) => sum + isolate.usedBytes, 0) / 1024,
  };
}

/** A free port for a child's `--inspect=127.0.0.1:<port>`. */
export { freePort as inspectorPort } from '../scripts/runtime/processes.js';

/** Collects every isolate's garbage in the process whose inspector listens on `port`; each heap after it. */
export async function collectGarbage(port: number, timeoutMs = 60_000): Promise<HeapUsage[]> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => resolve(), { once: true });
    socket.addEventListener('error', () => reject(new Error(`inspector on port ${port}: no connection`)), {
      once: true,
    });
  });
  let next = 0;
  const waiting = new Map<string, (message: Message) => void>();
  const workers: { sessionId: string; title: string }[] = [];
  socket.addEventListener('message', (event: MessageEvent) => {
    const message = JSON.parse(String(event.data)) as Message;
    if (message.method === 'NodeWorker.attachedToWorker') {
      const params = message.params as { sessionId: string; workerInfo: { title: string } };
      workers.push({ sessionId: params.sessionId, title: params.workerInfo.title });
    } else if (message.method === 'NodeWorker.receivedMessageFromWorker') {
      const params = message.params as { sessionId: string; message: string };
      const inner = JSON.parse(params.message) as Message;
      waiting.get(`${params.sessionId}:${inner.id}`)?.(inner);
    } else if (message.id !== undefined) {
      waiting.get(`:${message.id}`)?.(message);
    }
  });
  const answer = (key: string): Promise<Message> =>
    new Promise<Message>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`inspector on port ${port}: no answer to ${key}`)), timeoutMs);
      waiting.set(key, (message) => {
        clearTimeout(timer);
        waiting.delete(key);
        if (message.error !== undefined) {
          reject(new Error(`inspector: ${message.error.message}`));
        } else {
          resolve(message);
        }
      });
    });
  /** A command to the main isolate, or (with a session) to a worker thread's. */
  const send = async (method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<Message> => {
    next += 1;
    const id = next;
    if (sessionId === undefined) {
      const answered = answer(`:${id}`);
      socket.send(JSON.stringify({ id, method, params }));
      return answered;
    }
    const answered = answer(`${sessionId}:${id}`);
    await send('NodeWorker.sendMessageToWorker', { sessionId, message: JSON.stringify({ id, method, params }) });
    return answered;
  };
  try {
    // Attaching reports every running thread before the command's answer.
    await send('NodeWorker.enable', { waitForDebuggerOnStart: false });
    const heaps: HeapUsage[] = [];
    for (const session of [{ sessionId: undefined, title: 'main' }, ...workers]) {
      await send('HeapProfiler.collectGarbage', {}, session.sessionId);
      const usage = (await send('Runtime.getHeapUsage', {}, session.sessionId)).result as {
        usedSize: number;
        totalSize: number;
      };
      heaps.push({ thread: session.title, usedBytes: usage.usedSize, totalBytes: usage.totalSize });
    }
    return heaps;
  } finally {
    socket.close();
  }
}
