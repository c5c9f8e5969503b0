/**
 * The bench's own scripts run in processes of their own (the minimal servers of adapters.ts, the bare
 * worker): started here, ready once their output says so.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ServerKind } from './adapters.js';

/**
 * Runs one of the bench's scripts (`./<script>.js`) in a process of its own and resolves once its
 * output matches `ready` (with the match), or rejects if it exits first.
 */
export async function startChild(
  script: string,
  args: string[],
  ready: RegExp,
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const entry = fileURLToPath(new URL(`./${script}.js`, import.meta.url));
  const child = spawn(process.execPath, [entry, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const found = ready.exec(out);
      if (found) {
        resolve(found);
      }
    });
    child.on('exit', (code) => reject(new Error(`${script} ${args.join(' ')} exited (${code})`)));
  });
  return { child, match };
}

/** Starts one of the minimal servers (adapters.ts) in a process of its own. */
export async function startServer(
  kind: ServerKind,
  env: Record<string, string> = {},
): Promise<{ url: string; child: ChildProcess }> {
  const { child, match } = await startChild('adapters', [kind], /listening (\d+)/, env);
  return { url: `http://127.0.0.1:${match[1]}`, child };
}
