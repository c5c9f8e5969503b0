import { CHARGE_RELATION, type RunUsagePart } from '../credits/credit-hooks.js';

/**
 * The SQL of a run's usage (`runs.usage`), written with the charge of each of the run's model turns:
 * the part of the charge's one statement (see CHARGE_RELATION) that adds the turn's tokens (`$6`,
 * `$7`) and the credits charged to the run `$5`. RunsModule registers it with CreditHooks; a charge
 * that charges nothing (a repeated reference) adds nothing.
 */
export const RUN_USAGE_CHARGE_PART: RunUsagePart =
  'UPDATE runs SET usage = jsonb_build_object(' +
  "'inputTokens', (runs.usage->>'inputTokens')::bigint + $6, " +
  "'outputTokens', (runs.usage->>'outputTokens')::bigint + $7, " +
  `'credits', (runs.usage->>'credits')::bigint + ${CHARGE_RELATION}.charged) ` +
  `FROM ${CHARGE_RELATION} WHERE runs.id = $5`;
