/**
 * The soak's load (bench/soak.ts): webhooks, manual runs, chat turns and direct tool calls at a steady
 * rate, each asking for one effect at the reference site: a note whose title is the request's own
 * marker (`soak-<kind>-<n>`). The fake model answers a message carrying a marker with one
 * `create_note` of that title; the site then holds, per marker, as many notes as effects happened.
 */
import http from 'node:http';
import type { FakeModel, RecordedRequest } from '../test/fixtures/fake-model.js';
import { toolNamed } from '../test/fixtures/fake-model.js';
import type { ReferenceSite } from '../examples/site/site.js';
import { post } from './client.js';

/** A connection per request: a kept-alive socket to a killed API would fail the next request too. */
const fresh = new http.Agent({ keepAlive: false, maxSockets: 256 });
/** A request not answered in this long counts as unanswered (a killed process answers at once: reset). */
const ANSWER_TIMEOUT_MS = 60_000;
/** A manual agent whose run is not over after this long is set aside. */
const STUCK_MS = 3 * 60_000;

export type Kind = 'webhook' | 'manual' | 'chat' | 'call';
/** What the service said: accepted (202/201/200, the chat's `done`), refused (another status), or nothing. */
export type Outcome = 'accepted' | 'refused' | 'unanswered';

export interface Entry {
  kind: Kind;
  marker: string;
  outcome: Outcome;
  /** The run accepted (webhook, manual). */
  runId?: string;
  /** The refusal's status, or the error of an unanswered request. */
  detail?: string;
}

/** Where the load sends its requests: the APIs up now, round robin (what a load balancer does). */
export interface Targets {
  next(): string;
}

export interface LoadContext {
  targets: Targets;
  userAuth: Record<string, string>;
  siteId: string;
  webhookAgents: Array<{ id: string; webhookSecret: string }>;
  manualAgents: string[];
  /** Whether an agent has a run queued or active (its row). */
  agentBusy(agentId: string): Promise<boolean>;
  newSession(): Promise<string>;
}

/** The model's answer: the marker's note, once; then a closing text. */
export function scriptModel(model: FakeModel): void {
  model.fallback = (req: RecordedRequest) => {
    const last = JSON.stringify(req.body.messages.at(-1) ?? {});
    const marker = /soak-[a-z]+-\d+/.exec(last)?.[0];
    if (last.includes('"tool_result"') || marker === undefined) {
      return { text: 'Done.', stopReason: 'end_turn' };
    }
    return { toolUses: [{ name: toolNamed(req, 'create_note'), input: { title: marker } }], stopReason: 'tool_use' };
  };
}

async function answered(
  send: () => Promise<{ status: number; text: string }>,
): Promise<{ status: number; text: string } | Error> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      send(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('no answer in 60 s')), ANSWER_TIMEOUT_MS);
      }),
    ]);
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  } finally {
    clearTimeout(timer);
  }
}

/** A chat turn's SSE answer whole; accepted when it ends with `event: done`. */
function chatTurn(url: string, body: unknown, auth: Record<string, string>): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = http.request(
      url,
      {
        method: 'POST',
        agent: fresh,
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...auth },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

/** The four kinds of request, each recording its entry in the ledger. */
export class Load {
  readonly ledger: Entry[] = [];
  private n = 0;
  private webhooks = 0;
  private readonly busyManual = new Set<string>();
  /** Manual agents whose run stayed queued or active past STUCK_MS: no longer used. */
  readonly stuckAgents: string[] = [];
  private session: { token: string; turns: number } | undefined;
  private chatting = false;
  /** Requests skipped because the previous of their kind had not ended (manual agents all busy, a chat turn open). */
  skipped = 0;

  constructor(private readonly ctx: LoadContext) {}

  private marker(kind: Kind): string {
    return `soak-${kind}-${(this.n += 1)}`;
  }

  private record(entry: Entry): void {
    this.ledger.push(entry);
  }

  /** A webhook delivery; unanswered, it is delivered again once with the same delivery id (as a sender would). */
  async webhook(): Promise<void> {
    const marker = this.marker('webhook');
    const agent = this.ctx.webhookAgents[(this.webhooks += 1) % this.ctx.webhookAgents.length]!;
    const headers = { 'x-webhook-secret': agent.webhookSecret, 'x-webhook-delivery-id': marker };
    let res = await answered(() =>
      post(`${this.ctx.targets.next()}/api/webhooks/agent/${agent.id}`, { task: marker }, headers, fresh),
    );
    if (res instanceof Error || res.status >= 500) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      res = await answered(() =>
        post(`${this.ctx.targets.next()}/api/webhooks/agent/${agent.id}`, { task: marker }, headers, fresh),
      );
    }
    this.record(this.entry('webhook', marker, res, 202, (text) => (JSON.parse(text) as { runId: string }).runId));
  }

  /** A manual run of an agent with none queued or active (the route refuses a busy agent). */
  async manual(): Promise<void> {
    const free = this.ctx.manualAgents.find((id) => !this.busyManual.has(id));
    if (free === undefined) {
      this.skipped += 1;
      return;
    }
    this.busyManual.add(free);
    try {
      const marker = this.marker('manual');
      const res = await answered(() =>
        post(`${this.ctx.targets.next()}/api/agents/${free}/runs`, { input: marker }, this.ctx.userAuth, fresh),
      );
      this.record(this.entry('manual', marker, res, 201, (text) => (JSON.parse(text) as { id: string }).id));
      // The agent is free again once its run ended (whatever the answer was: an unanswered start may
      // have queued one); one busy for longer is set aside (reported), and the load goes on without it.
      const by = Date.now() + STUCK_MS;
      while (await this.ctx.agentBusy(free)) {
        if (Date.now() > by) {
          this.stuckAgents.push(free);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      this.busyManual.delete(free);
    } catch (err) {
      this.busyManual.delete(free);
      throw err;
    }
  }

  /** A chat turn in a session of up to 20 turns (a new session after that, or after a turn unanswered). */
  async chat(): Promise<void> {
    if (this.chatting) {
      this.skipped += 1;
      return;
    }
    this.chatting = true;
    try {
      if (this.session === undefined || this.session.turns >= 20) {
        this.session = { token: await this.ctx.newSession(), turns: 0 };
      }
      const marker = this.marker('chat');
      const url = `${this.ctx.targets.next()}/api/sessions/${this.session.token}/messages`;
      const res = await answered(() => chatTurn(url, { content: `Please note ${marker}` }, this.ctx.userAuth));
      this.session.turns += 1;
      const done = !(res instanceof Error) && res.status === 200 && res.text.includes('event: done');
      if (!done) {
        this.session = undefined;
      }
      this.record(
        done
          ? { kind: 'chat', marker, outcome: 'accepted' }
          : this.entry(
              'chat',
              marker,
              res instanceof Error || res.status === 200 ? new Error('no done event') : res,
              200,
            ),
      );
    } finally {
      this.chatting = false;
    }
  }

  /** A direct tool call (POST /api/vault/sites/:id/tools/create_note/call). */
  async call(): Promise<void> {
    const marker = this.marker('call');
    const res = await answered(() =>
      post(
        `${this.ctx.targets.next()}/api/vault/sites/${this.ctx.siteId}/tools/create_note/call`,
        { input: { title: marker } },
        this.ctx.userAuth,
        fresh,
      ),
    );
    this.record(this.entry('call', marker, res, 200));
  }

  private entry(
    kind: Kind,
    marker: string,
    res: { status: number; text: string } | Error,
    accepted: number,
    runIdOf?: (text: string) => string,
  ): Entry {
    if (res instanceof Error) {
      return { kind, marker, outcome: 'unanswered', detail: res.message.slice(0, 80) };
    }
    if (res.status !== accepted) {
      return { kind, marker, outcome: 'refused', detail: `${res.status} ${res.text.slice(0, 120)}` };
    }
    return { kind, marker, outcome: 'accepted', runId: runIdOf?.(res.text) };
  }
}

export interface EffectCount {
  /** Accepted requests whose marker has no note at the site. */
  lost: Entry[];
  /** Requests (accepted or not) whose marker has more than one note. */
  duplicated: Array<Entry & { notes: number }>;
  /** Unanswered requests whose effect happened anyway (once): not an error, the client could not know. */
  unansweredButDone: number;
}

/** The site's notes per marker, against the ledger. */
export function countEffects(site: ReferenceSite, ledger: Entry[]): EffectCount {
  const notes = new Map<string, number>();
  for (const note of site.notes.values()) {
    notes.set(note.title, (notes.get(note.title) ?? 0) + 1);
  }
  const result: EffectCount = { lost: [], duplicated: [], unansweredButDone: 0 };
  for (const entry of ledger) {
    const count = notes.get(entry.marker) ?? 0;
    if (count > 1) {
      result.duplicated.push({ ...entry, notes: count });
    } else if (count === 0 && entry.outcome === 'accepted') {
      result.lost.push(entry);
    } else if (count === 1 && entry.outcome === 'unanswered') {
      result.unansweredButDone += 1;
    }
  }
  return result;
}
