/**
 * Keeps `npm start`'s long-running children up: a child that exits on its own (crash, SIGKILL, OOM)
 * is started again after an exponential backoff, while the others keep serving. Only a child that
 * keeps crashing (too many crashes within a short window) ends the stack, with its last output,
 * because restarting it further would only hide the cause.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { stopChild } from './processes.js';

export interface RestartPolicy {
  /** Delay before the first restart; each further crash within the window doubles it. */
  initialDelayMs: number;
  maxDelayMs: number;
  /** Crashes counted against a child are those of the last `windowMs`. */
  windowMs: number;
  /** This many crashes within the window: give up and stop the stack. */
  maxCrashes: number;
}

/**
 * 0.5, 1, 2, 4 s between restarts; the fifth crash within two minutes gives up (a child that cannot
 * stay up for seconds has a cause a restart will not cure: bad settings, a port taken, a bug at boot).
 * A child that ran for two minutes starts again from 0.5 s, so an occasional crash is always survived.
 */
export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  initialDelayMs: 500,
  maxDelayMs: 30_000,
  windowMs: 120_000,
  maxCrashes: 5,
};

export type CrashDecision =
  { action: 'restart'; delayMs: number; crashesInWindow: number } | { action: 'give-up'; crashesInWindow: number };

/** The policy itself: given every crash time of one child (the newest at `now`), restart or give up. */
export function decideAfterCrash(crashTimes: readonly number[], now: number, policy: RestartPolicy): CrashDecision {
  const crashesInWindow = crashTimes.filter((at) => at <= now && now - at < policy.windowMs).length;
  if (crashesInWindow >= policy.maxCrashes) {
    return { action: 'give-up', crashesInWindow };
  }
  const exponent = Math.max(0, crashesInWindow - 1);
  const delayMs = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** exponent);
  return { action: 'restart', delayMs, crashesInWindow };
}

/** One running instance of a supervised child. */
export interface ChildInstance {
  process: ChildProcess;
  /** Stops this instance for good (the supervisor does not restart it). */
  stop(): Promise<void>;
  /** Its last lines of output, for the report when the supervisor gives up. */
  lastOutput(): string[];
}

export interface ChildSpec {
  name: string;
  /** Starts an instance and resolves once it runs; a rejected start counts as a crash. */
  start(): Promise<ChildInstance>;
}

export interface SupervisorOptions {
  log: (line: string) => void;
  /** Called once when a child crashed too often; the caller stops the stack. */
  onGiveUp: (name: string, report: string) => void;
  policy?: RestartPolicy;
  now?: () => number;
}

interface Supervised {
  spec: ChildSpec;
  instance: ChildInstance | undefined;
  /** A start in progress: stop() waits for it (the start then stops what it started). */
  pending: Promise<void> | undefined;
  timer: NodeJS.Timeout | undefined;
  crashes: number[];
  stopping: boolean;
}

export class Supervisor {
  private readonly children = new Map<string, Supervised>();
  private readonly policy: RestartPolicy;
  private readonly now: () => number;
  /** Set by shutdown(): from then on no child is started again. */
  private closing = false;
  /** Set by a give-up: no child is restarted after a crash, only by an explicit restart(). */
  private gaveUp = false;

  constructor(private readonly options: SupervisorOptions) {
    this.policy = options.policy ?? DEFAULT_RESTART_POLICY;
    this.now = options.now ?? Date.now;
  }

  /** Starts a child and supervises it from then on; rejects (without retrying) if its first start fails. */
  async add(spec: ChildSpec): Promise<void> {
    if (this.children.has(spec.name)) {
      throw new Error(`${spec.name} is supervised already`);
    }
    const entry: Supervised = {
      spec,
      instance: undefined,
      pending: undefined,
      timer: undefined,
      crashes: [],
      stopping: false,
    };
    this.children.set(spec.name, entry);
    await this.launch(entry);
  }

  /** The pid of a child's current instance (undefined while it is down). */
  pid(name: string): number | undefined {
    return this.children.get(name)?.instance?.process.pid;
  }

  /**
   * Restarts nothing from now on; call it first when the stack stops, since Ctrl-C in a terminal
   * signals every child of the process group at once and their exits are no crashes.
   */
  shutdown(): void {
    this.closing = true;
    for (const entry of this.children.values()) {
      clearTimeout(entry.timer);
    }
  }

  /**
   * Replaces a child's running instance by a new one (`npm run dev`, after a rebuild): the old one is
   * stopped, which is no crash, and the new one starts with no crashes counted. Also after a give-up
   * (the new code may be the cure); never after shutdown(). Rejects if the new instance fails to start.
   */
  async restart(name: string): Promise<void> {
    const entry = this.children.get(name);
    if (entry === undefined) {
      throw new Error(`${name} is not supervised`);
    }
    if (this.closing) {
      return;
    }
    entry.stopping = true;
    clearTimeout(entry.timer);
    entry.timer = undefined;
    await entry.pending?.catch(() => undefined);
    await entry.instance?.stop();
    entry.instance = undefined;
    entry.crashes = [];
    entry.stopping = false;
    this.gaveUp = false;
    await this.launch(entry);
  }

  /** Stops the named children (all of them when none is named) in parallel; none is restarted after. */
  async stop(...names: string[]): Promise<void> {
    const targets = names.length > 0 ? names : [...this.children.keys()];
    await Promise.all(
      targets.map(async (name) => {
        const entry = this.children.get(name);
        if (entry === undefined) {
          return;
        }
        entry.stopping = true;
        clearTimeout(entry.timer);
        await entry.pending?.catch(() => undefined);
        await entry.instance?.stop();
      }),
    );
  }

  private async launch(entry: Supervised): Promise<void> {
    const started = entry.spec.start();
    // Set before any await: stop() called from now on waits for this start, then stops what it started.
    entry.pending = started.then(
      () => undefined,
      () => undefined,
    );
    let instance: ChildInstance;
    try {
      instance = await started;
    } finally {
      entry.pending = undefined;
    }
    if (entry.stopping || this.closing) {
      await instance.stop();
      return;
    }
    entry.instance = instance;
    this.options.log(`${entry.spec.name} running (pid ${instance.process.pid})`);
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (entry.instance === instance) {
        entry.instance = undefined;
      }
      if (!entry.stopping) {
        this.crashed(entry, `exited (${signal ?? `code ${code}`})`, instance.lastOutput());
      }
    };
    if (instance.process.exitCode !== null || instance.process.signalCode !== null) {
      onExit(instance.process.exitCode, instance.process.signalCode);
    } else {
      instance.process.once('exit', onExit);
    }
  }

  private crashed(entry: Supervised, how: string, lastOutput: string[]): void {
    if (this.closing || this.gaveUp) {
      return;
    }
    const name = entry.spec.name;
    const now = this.now();
    entry.crashes = [...entry.crashes.filter((at) => now - at < this.policy.windowMs), now];
    const decision = decideAfterCrash(entry.crashes, now, this.policy);
    if (decision.action === 'give-up') {
      this.gaveUp = true;
      for (const other of this.children.values()) {
        clearTimeout(other.timer);
      }
      const windowSeconds = Math.round(this.policy.windowMs / 1000);
      const tail = lastOutput.length > 0 ? lastOutput.map((line) => `  | ${line}`).join('\n') : '  (no output)';
      this.options.onGiveUp(
        name,
        `${name} ${how}: it crashed ${decision.crashesInWindow} times within ${windowSeconds} s, so it is not ` +
          `restarted again; stopping everything. Its last output:\n${tail}`,
      );
      return;
    }
    this.options.log(
      `${name} ${how}; restarting it in ${decision.delayMs} ms ` +
        `(crash ${decision.crashesInWindow} of ${this.policy.maxCrashes} allowed within ${Math.round(this.policy.windowMs / 1000)} s)`,
    );
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      if (entry.stopping || this.closing || this.gaveUp) {
        return;
      }
      this.launch(entry).catch((err: unknown) => {
        if (!entry.stopping) {
          this.crashed(entry, `did not start (${err instanceof Error ? err.message : String(err)})`, []);
        }
      });
    }, decision.delayMs);
  }
}

/** How many of a child's last output lines are kept for the give-up report. */
const TAIL_LINES = 40;

/**
 * Spawns a Node entry point whose output goes on to ours (as `stdio: 'inherit'` would) while its last
 * lines are kept for the report.
 */
export function spawnNodeChild(args: string[], env: NodeJS.ProcessEnv, graceMs = 15_000): ChildInstance {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const tail: string[] = [];
  let partial = '';
  const keep = (chunk: Buffer): void => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop() ?? '';
    tail.push(...lines);
    tail.splice(0, Math.max(0, tail.length - TAIL_LINES));
  };
  child.stdout.on('data', (chunk: Buffer) => {
    process.stdout.write(chunk);
    keep(chunk);
  });
  child.stderr.on('data', (chunk: Buffer) => {
    process.stderr.write(chunk);
    keep(chunk);
  });
  return {
    process: child,
    stop: () => stopChild(child, graceMs),
    lastOutput: () => (partial === '' ? [...tail] : [...tail, partial]).slice(-TAIL_LINES),
  };
}
