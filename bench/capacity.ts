/**
 * The capacity and cost table `npm run bench` ends with (issue 41, decision 2), from the figures of
 * the same run: runs per second per worker core (benchmark 8), and per run kind the Temporal actions
 * and their price per 1,000 runs on Temporal Cloud (benchmark 10) and the database writes (benchmark
 * 11). Figures a partial run did not measure are left out.
 */
import { type CostFigures, RUNS as RUNS_OF_STATEMENTS } from './run-costs.js';
import { RUN_KINDS } from './run-kinds.js';
import type { SustainedFigures } from './scale.js';

/**
 * Temporal Cloud's published list price of actions: $50 per million (docs.temporal.io/cloud/pricing,
 * "Action pricing": the Developer plan's at every volume, and the first 5M a month on the others,
 * volume discounts past that; the plans' fee, 10% of usage on Developer, comes on top).
 */
export const DOLLARS_PER_MILLION_ACTIONS = 50;

export function capacityTable(sustained: SustainedFigures | undefined, costs: CostFigures): void {
  const kinds = RUN_KINDS.filter((kind) => costs[kind] !== undefined);
  if (sustained === undefined && kinds.length === 0) {
    return;
  }
  console.log('\ncapacity and cost (from the figures above)');
  if (sustained !== undefined) {
    console.log(
      `  runs per second per worker core: ${(sustained.runsPerSecond / sustained.workerCpuPerSecond).toFixed(1)} ` +
        `(benchmark 8: ${sustained.runsPerSecond.toFixed(1)} runs/s over the worker's ` +
        `${sustained.workerCpuPerSecond.toFixed(2)} CPU s/s; ${sustained.workerCpuMsPerRun.toFixed(1)} ms of worker CPU a run)`,
    );
  }
  if (kinds.length > 0) {
    console.log(
      `  ${'kind'.padEnd(10)} ${'actions/1,000 runs'.padStart(19)} ${'$/1,000 runs'.padStart(13)} ` +
        `${'bare $/1,000'.padStart(13)} ${'db writes/run'.padStart(14)} ${'statements/run'.padStart(15)}`,
    );
  }
  for (const kind of kinds) {
    const { actions, bareActions, statements } = costs[kind]!;
    const dollars = (perRun: number): string =>
      Number.isNaN(perRun) ? '-' : `$${((perRun * 1000 * DOLLARS_PER_MILLION_ACTIONS) / 1e6).toFixed(3)}`;
    const perRun = (n: number | undefined): string =>
      n === undefined ? '-' : (Math.round((n / RUNS_OF_STATEMENTS) * 100) / 100).toString();
    console.log(
      `  ${kind.padEnd(10)} ${(Number.isNaN(actions) ? '-' : Math.round(actions * 1000).toLocaleString('en')).padStart(19)} ` +
        `${dollars(actions).padStart(13)} ${dollars(bareActions).padStart(13)} ` +
        `${perRun(statements?.writes).padStart(14)} ${perRun(statements?.statements).padStart(15)}`,
    );
  }
  if (kinds.length > 0) {
    console.log(
      `  (actions: a run among ${RUNS_OF_STATEMENTS} back to back on one agent; at $${DOLLARS_PER_MILLION_ACTIONS} ` +
        "per million actions, Temporal Cloud's list price, before volume discounts and the plan's fee)",
    );
  }
}
