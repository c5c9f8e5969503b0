/**
 * `node dist/bench/profile-summary.js <file.cpuprofile> [--from-ms N] [--to-ms N] [--between A B] [--top N]`: a V8 CPU profile's
 * self time (idle left out) by group — our code by folder (src/<feature>, activities, workflows), each
 * package under node_modules (Nest split into core, common, platform-express, passport), Node's own
 * modules, the garbage collector and V8's program time — then the functions with the most self time.
 * `--from-ms`/`--to-ms` keep the samples of that span of the profile (ms from its start); `--between A B`,
 * those between two readings of the monotonic clock in µs, as profile-calls prints around each phase.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** The group a frame's script belongs to. */
export function groupOf(url: string, functionName: string): string {
  if (url === '') {
    return functionName.startsWith('(') ? functionName : '(native)';
  }
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) {
    return `node:${url.slice(5).split('/')[0]}`;
  }
  const ours = /\/dist\/(src|activities|workflows)\/(?:([^/]+)\/)?/.exec(url);
  if (ours !== null) {
    return `ours: ${ours[1]}${ours[2] !== undefined && !ours[2].endsWith('.js') ? `/${ours[2]}` : ''}`;
  }
  return url;
}

/** The kinds of work the request path's groups are summed into (the issue's question: whose cost is it). */
const KINDS: Array<[string, RegExp]> = [
  ['ours (src/)', /^ours: /],
  ['Nest', /^(@nestjs\/|reflect-metadata|rxjs)/],
  [
    'the adapter (Express and its middleware)',
    /^(express|router|body-parser|raw-body|helmet|finalhandler|on-finished|type-is|path-to-regexp|qs|content-type|depd|send|mime|cookie|vary|iconv-lite|destroy|statuses|http-errors|media-typer|serve-static|fastify|@fastify\/|find-my-way|avvio|light-my-request)/,
  ],
  [
    'PostgreSQL (pg, TypeORM, the limiter)',
    /^(pg|pg-pool|pg-protocol|pg-types|postgres-|typeorm|rate-limiter-flexible)/,
  ],
  ['DTO validation', /^(class-validator|class-transformer|validator)$/],
  ['the call out (axios, the model SDK)', /^(axios|follow-redirects|form-data|proxy-from-env|@anthropic-ai\/sdk)/],
  ['metrics and tracing', /^(prom-client|@opentelemetry\/)/],
  ['Node (http, net, tls, streams, crypto) and native', /^(node:|\(native\))/],
  ['V8 (GC, program)', /^\((garbage collector|program)\)$/],
];

export function kindOf(group: string): string {
  return KINDS.find(([, pattern]) => pattern.test(group))?.[0] ?? 'other';
}

function frameName(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  return `${functionName || '(anonymous)'} ${url === '' ? '' : `${url.replace(/^.*\/(node_modules|dist)\//, '')}:${lineNumber + 1}`}`;
}

function main(): void {
  const args = process.argv.slice(2);
  const file = args.find((a) => !a.startsWith('--'));
  if (file === undefined || args.includes('--help')) {
    console.log('usage: profile-summary.js <file.cpuprofile> [--from-ms N] [--to-ms N] [--between A B] [--top N]');
    process.exit(file === undefined && !args.includes('--help') ? 2 : 0);
  }
  const option = (name: string, fallback: number): number => {
    const i = args.indexOf(name);
    return i >= 0 ? Number(args[i + 1]) : fallback;
  };
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  // --between A B: the monotonic µs profile-calls prints around each phase (V8's and Node's clock).
  const between = args.indexOf('--between');
  const fromMs = between >= 0 ? (Number(args[between + 1]) - profile.startTime) / 1000 : option('--from-ms', 0);
  const toMs = between >= 0 ? (Number(args[between + 2]) - profile.startTime) / 1000 : option('--to-ms', Infinity);
  const top = option('--top', 25);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let t = 0;
  /** CPU (µs) in each 2 s of the profile: where start-up ends and each phase begins. */
  const busy: number[] = [];
  for (const [i, id] of profile.samples.entries()) {
    t += profile.timeDeltas[i] ?? 0;
    const bucket = Math.floor(t / 2e6);
    if (byId.get(id)!.callFrame.functionName !== '(idle)') {
      busy[bucket] = (busy[bucket] ?? 0) + (profile.timeDeltas[i + 1] ?? 0);
    }
    if (t / 1000 < fromMs || t / 1000 >= toMs) {
      continue;
    }
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  }
  // Total (inclusive) time: a sample counts once for every distinct function on its stack.
  const parents = new Map<number, number>();
  for (const node of profile.nodes) {
    for (const child of node.children ?? []) {
      parents.set(child, node.id);
    }
  }
  const inclusive = new Map<string, number>();
  const groups = new Map<string, number>();
  const functions = new Map<string, number>();
  let total = 0;
  for (const [id, us] of self) {
    const { functionName, url } = byId.get(id)!.callFrame;
    if (functionName === '(idle)') {
      continue;
    }
    total += us;
    const group = groupOf(url, functionName);
    groups.set(group, (groups.get(group) ?? 0) + us);
    functions.set(frameName(byId.get(id)!), (functions.get(frameName(byId.get(id)!)) ?? 0) + us);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) {
      seen.add(frameName(byId.get(at)!));
    }
    for (const name of seen) {
      inclusive.set(name, (inclusive.get(name) ?? 0) + us);
    }
  }
  const print = (title: string, rows: Map<string, number>): void => {
    console.log(`\n${title}`);
    for (const [name, us] of [...rows].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      console.log(
        `${((us / total) * 100).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(6)} ms  ${name}`,
      );
    }
  };
  console.log(`CPU % per 2 s: ${Array.from(busy, (us) => Math.round((us ?? 0) / 2e4)).join(' ')}`);
  console.log(`${file}: ${(total / 1000).toFixed(0)} ms of CPU (idle left out) from ${fromMs} to ${toMs} ms`);
  const kinds = new Map<string, number>();
  for (const [group, us] of groups) {
    kinds.set(kindOf(group), (kinds.get(kindOf(group)) ?? 0) + us);
  }
  print('self time by kind', kinds);
  // Node's and native time charged to whoever called into it: the nearest frame up the stack that is
  // a package's or ours (a socket write is pg's, or the adapter's, or axios's).
  const charged = new Map<string, number>();
  for (const [id, us] of self) {
    if (byId.get(id)!.callFrame.functionName === '(idle)') {
      continue;
    }
    let kind = 'Node (event loop, timers: no caller above)';
    for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) {
      const { url, functionName } = byId.get(at)!.callFrame;
      const group = groupOf(url, functionName);
      if (!/^(node:|\(native\)|\(root\))/.test(group)) {
        kind = kindOf(group);
        break;
      }
    }
    charged.set(kind, (charged.get(kind) ?? 0) + us);
  }
  print("by kind, with Node's and native time charged to its caller", charged);
  print('self time by group', groups);
  print('self time by function', functions);
  print('total time by function (itself and what it called)', inclusive);
}

if (process.argv[1]?.endsWith('profile-summary.js')) {
  main();
}
