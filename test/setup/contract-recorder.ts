import { appendFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  type Answer,
  Contract,
  type ContractDocument,
  type ContractMode,
  contractMode,
  fails,
  type Finding,
} from '../utils/contract.js';
import { TEST_ENV } from './shared-runtime.js';

/**
 * Records the answers of the service that a test file receives and checks each against the OpenAPI
 * document that very service serves (fetched once per address, one compiled contract per distinct
 * document). An answer is the service's when it carries the correlation header: every answer of the
 * API does (the first middleware sets it) and no other server of the suites (reference sites, the
 * scripted model, Temporal's UI) sends it, so stacks, clusters, proxies in front of them and
 * `npm start` processes are all covered without registering anything.
 */

export const SERVICE_HEADER = 'x-correlation-id';

/** One line of the run's summary file: what a test file saw, per operation and status. */
export interface SummaryLine {
  file: string;
  key: string;
  verdict: Finding['verdict'];
  count: number;
  message: string;
}

/** Where each jest worker appends its summary lines; the global teardown reads them all. */
export function contractDir(): string | undefined {
  const workDir = process.env[TEST_ENV.workDir];
  return workDir === undefined ? undefined : path.join(workDir, 'contract');
}

/** The service stopped answering before its document was read: the answer cannot be checked. */
class DocumentUnavailable extends Error {}

export class ContractRecorder {
  readonly mode: ContractMode = contractMode();
  private readonly pending = new Set<Promise<void>>();
  private findings: Finding[] = [];
  private readonly documents = new Map<string, Promise<ContractDocument>>();
  private readonly contracts = new Map<string, Contract>();

  /** `fetchDocument` must be the unwrapped fetch: the document's own request is not an answer to check. */
  constructor(private readonly fetchDocument: typeof fetch) {}

  /** Queues the check of one answer; `flush` waits for it. */
  observe(origin: string, answer: Answer): void {
    const done = this.check(origin, answer)
      .then((finding) => {
        this.findings.push(finding);
      })
      .catch((err: unknown) => {
        this.findings.push({
          verdict: err instanceof DocumentUnavailable ? 'unchecked' : 'violation',
          key: `${answer.method} ${answer.path.split('?')[0]} ${answer.status}`,
          message: `could not check: ${err instanceof Error ? err.message : String(err)}`,
        });
      })
      .finally(() => this.pending.delete(done));
    this.pending.add(done);
  }

  /**
   * Queues the check of an answer whose body is still being read (a browser's answers): `flush`
   * waits for the reading too.
   */
  observeLater(origin: string, answer: Promise<Answer | undefined>): void {
    const done = answer
      .then((read) => {
        if (read !== undefined) {
          this.observe(origin, read);
        }
      })
      .catch(() => undefined)
      .finally(() => this.pending.delete(done));
    this.pending.add(done);
  }

  /** Waits for the queued checks and hands back what they found since the last flush. */
  async flush(): Promise<Finding[]> {
    while (this.pending.size > 0) {
      await Promise.all([...this.pending]);
    }
    const out = this.findings;
    this.findings = [];
    return out;
  }

  private async check(origin: string, answer: Answer): Promise<Finding> {
    let contract = await this.contractOf(origin, false);
    let finding = contract.check(answer);
    if (finding.verdict === 'violation' && finding.message.startsWith('the document has no operation')) {
      // A later stack may reuse the address with other settings: read its document again once.
      contract = await this.contractOf(origin, true);
      finding = contract.check(answer);
    }
    return finding;
  }

  private async contractOf(origin: string, fresh: boolean): Promise<Contract> {
    let document = this.documents.get(origin);
    if (document === undefined || fresh) {
      const url = `${origin}/api/docs/openapi.json`;
      document = this.fetchDocument(url).then(
        async (res) => {
          if (res.status !== 200) {
            throw new Error(`${url} answered ${res.status}`);
          }
          return (await res.json()) as ContractDocument;
        },
        (err: unknown) => {
          throw new DocumentUnavailable(`${url} could not be read: ${String(err)}`, { cause: err });
        },
      );
      this.documents.set(origin, document);
      // A failed fetch is not cached: the next answer tries again.
      document.catch(() => this.documents.delete(origin));
    }
    const doc = await document;
    const text = JSON.stringify(doc);
    let contract = this.contracts.get(text);
    if (contract === undefined) {
      contract = new Contract(doc);
      this.contracts.set(text, contract);
    }
    return contract;
  }
}

/** The failure message for the findings that fail in this mode, or undefined when none does. */
export function failureMessage(findings: Finding[], mode: ContractMode): string | undefined {
  const failing = new Map<string, { finding: Finding; count: number }>();
  for (const finding of findings.filter((f) => fails(f, mode))) {
    const id = `${finding.key}\u0000${finding.message}`;
    const seen = failing.get(id);
    failing.set(id, { finding, count: (seen?.count ?? 0) + 1 });
  }
  if (failing.size === 0) {
    return undefined;
  }
  const lines = [...failing.values()].map(
    ({ finding, count }) =>
      `  ${finding.verdict}: ${finding.key}${count > 1 ? ` (×${count})` : ''}: ${finding.message}`,
  );
  return (
    `The service's answers do not match its OpenAPI document (CONTRACT_CHECK=${mode}):\n${lines.join('\n')}\n` +
    'Fix the code or the document (@ApiOkResponse / ApiErrors on the controller); see test/utils/contract.ts.'
  );
}

/** Appends a test file's findings, counted per operation, status and verdict, to this worker's summary file. */
export function appendSummary(file: string, findings: Finding[]): void {
  const dir = contractDir();
  if (dir === undefined || findings.length === 0) {
    return;
  }
  const counted = new Map<string, SummaryLine>();
  for (const finding of findings) {
    const id = `${finding.verdict}\u0000${finding.key}\u0000${finding.message}`;
    const line = counted.get(id) ?? {
      file,
      key: finding.key,
      verdict: finding.verdict,
      count: 0,
      message: finding.message,
    };
    line.count += 1;
    counted.set(id, line);
  }
  mkdirSync(dir, { recursive: true });
  const text = [...counted.values()].map((line) => JSON.stringify(line)).join('\n');
  appendFileSync(path.join(dir, `${process.pid}.jsonl`), `${text}\n`);
}

/**
 * The run's summary, from every worker's lines: answers per verdict and the operation/status pairs
 * the document declares nothing for (what CONTRACT_CHECK=strict fails), written to `detailsFile`.
 */
export function summarize(dir: string, detailsFile: string): string | undefined {
  let files: string[];
  try {
    files = readdirSync(dir).filter((name) => name.endsWith('.jsonl'));
  } catch {
    return undefined;
  }
  const lines = files.flatMap((name) =>
    readFileSync(path.join(dir, name), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as SummaryLine),
  );
  const answers: Record<Finding['verdict'], number> = { ok: 0, violation: 0, undeclared: 0, excluded: 0, unchecked: 0 };
  const byKey = new Map<
    string,
    { verdict: Finding['verdict']; count: number; messages: Set<string>; files: Set<string> }
  >();
  for (const line of lines) {
    answers[line.verdict] += line.count;
    if (line.verdict === 'ok' || line.verdict === 'excluded') {
      continue;
    }
    const id = `${line.verdict} ${line.key}`;
    const entry = byKey.get(id) ?? { verdict: line.verdict, count: 0, messages: new Set(), files: new Set() };
    entry.count += line.count;
    entry.messages.add(line.message);
    entry.files.add(line.file);
    byKey.set(id, entry);
  }
  const pairs = (verdict: Finding['verdict']): number =>
    [...byKey.values()].filter((e) => e.verdict === verdict).length;
  const details = [...byKey.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([id, e]) => `${id} ×${e.count}: ${[...e.messages].join(' | ')} [${[...e.files].join(', ')}]`);
  mkdirSync(path.dirname(detailsFile), { recursive: true });
  writeFileSync(detailsFile, `${details.join('\n')}\n`);
  const total = Object.values(answers).reduce((a, b) => a + b, 0);
  const testFiles = new Set(lines.map((line) => line.file)).size;
  return (
    `[contract] CONTRACT_CHECK=${contractMode()}: ${total} answers of the service in ${testFiles} test files: ` +
    `${answers.ok} conform, ${answers.violation} break the document (${pairs('violation')} operation/status pairs), ` +
    `${answers.undeclared} have nothing declared to check them against (${pairs('undeclared')} operation/status pairs), ` +
    `${answers.excluded} are outside the contract, ${answers.unchecked} could not be checked (the service was gone). ` +
    `Details: ${detailsFile}`
  );
}
