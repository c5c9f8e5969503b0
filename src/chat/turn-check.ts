import { escapeLiteral } from 'pg';
import type { HoldPrelude } from '../credits/credits.service.js';
import { inOwnersVaultSql } from '../workspaces/scope.js';

/**
 * SQL: the session's workspace membership as it is now (the caller's role, the owner's plan), read in
 * the same query as the session (`cs`): `member_role` is null when the user is no longer a member.
 */
export const MEMBERSHIP_COLUMNS = 'wm.role AS member_role, o.tier AS owner_tier, o.subscription_status AS owner_status';
export const MEMBERSHIP_JOINS =
  'LEFT JOIN workspace_members wm ON wm.workspace_id = cs.workspace_id AND wm.user_id = cs.user_id ' +
  'LEFT JOIN workspaces w ON w.id = cs.workspace_id LEFT JOIN users o ON o.id = w.owner_id';

/** SQL: the ids of the session's (`cs`) chosen sites, as an array (an index condition on `sites.id`). */
export const SESSION_SITE_IDS = "ARRAY(SELECT (e->>'siteId')::uuid FROM jsonb_array_elements(cs.sites) e)";

/**
 * SQL: what a turn read of the session `cs` (with MEMBERSHIP_JOINS) depends on, as three texts: the
 * session row's version and the membership as it is now (`turn_session`), the number of its messages
 * and the highest `seq` (`turn_messages`), and the ids and row versions of its chosen sites found in the
 * vault it belongs to (`turn_sites`). A row's `xmin` changes with every update of the row; messages
 * are only ever added (a session's go with it), so their count and highest `seq` name the set.
 */
export const TURN_VERSION_COLUMNS =
  "concat(cs.xmin, '|', wm.role, '|', o.tier, '|', o.subscription_status) AS turn_session, " +
  "(SELECT concat(count(*), ':', coalesce(max(m.seq), 0)) FROM chat_messages m WHERE m.session_id = cs.id) AS turn_messages, " +
  "(SELECT coalesce(string_agg(concat(s.id, ':', s.xmin), ',' ORDER BY s.id), '') FROM sites s " +
  `WHERE s.id = ANY (${SESSION_SITE_IDS}) AND ${inOwnersVaultSql('s', 'cs')}) AS turn_sites`;

/** What a turn's context was read from (TURN_VERSION_COLUMNS): equal versions, equal reads. */
export interface TurnVersion {
  session: string;
  messages: string;
  sites: string;
}

/** The version in a row that selected TURN_VERSION_COLUMNS; undefined when it has none. */
export function turnVersionOf(row: Record<string, unknown> | undefined): TurnVersion | undefined {
  if (row === undefined || typeof row.turn_session !== 'string') {
    return undefined;
  }
  return { session: row.turn_session, messages: String(row.turn_messages), sites: String(row.turn_sites) };
}

export function sameVersion(a: TurnVersion, b: TurnVersion | undefined): boolean {
  return b !== undefined && a.session === b.session && a.messages === b.messages && a.sites === b.sites;
}

/**
 * A turn's slot and the check of its cached context, prepared once per connection: the slot takes
 * the lowest of the user's `max` slots that is free or whose turn expired (a same-user turn taking
 * slots one by one, ChatRepository.takeTurnSlot, can make it find none although one is free: the
 * caller then tries that way); the check answers the session's TURN_VERSION_COLUMNS (no row: the
 * session is gone).
 */
const PREPARE_TURN_CHECK =
  'PREPARE agentsite_chat_slot(uuid, uuid, integer, bigint) AS ' +
  'INSERT INTO chat_turn_slots AS t (user_id, slot, turn, expires_at) ' +
  "SELECT $1, n, $2, now() + $4 * interval '1 millisecond' FROM generate_series(1, $3) n " +
  'WHERE NOT EXISTS (SELECT 1 FROM chat_turn_slots x WHERE x.user_id = $1 AND x.slot = n AND x.expires_at > now()) ' +
  'ORDER BY n LIMIT 1 ' +
  'ON CONFLICT (user_id, slot) DO UPDATE SET turn = EXCLUDED.turn, expires_at = EXCLUDED.expires_at ' +
  'WHERE t.expires_at <= now() RETURNING t.slot;\n' +
  'PREPARE agentsite_chat_check(uuid, uuid) AS ' +
  `SELECT ${TURN_VERSION_COLUMNS} FROM chat_sessions cs ${MEMBERSHIP_JOINS} WHERE cs.id = $1 AND cs.user_id = $2;\n`;

/** The connections that have PREPARE_TURN_CHECK prepared. */
const turnCheckPrepared = new WeakSet<object>();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A turn of a cached context: the slot it takes and the session it checks. */
export interface TurnCheck {
  userId: string;
  turn: string;
  sessionId: string;
  maxSlots: number;
  slotTtlMs: number;
}

/**
 * The slot and the check as a prelude of the first model call's hold (one round trip before the
 * first text, under the user's lock). A simple-protocol message has no parameters: the ids are checked
 * as UUIDs and quoted, the numbers checked as integers.
 */
export function turnCheckPrelude(check: TurnCheck): HoldPrelude {
  if (![check.userId, check.turn, check.sessionId].every((id) => UUID.test(id))) {
    throw new Error('chat turn check: the ids must be UUIDs');
  }
  if (!Number.isSafeInteger(check.maxSlots) || !Number.isSafeInteger(check.slotTtlMs)) {
    throw new Error('chat turn check: the slots and their lifetime must be integers');
  }
  const user = escapeLiteral(check.userId);
  return {
    prepare: PREPARE_TURN_CHECK,
    prepared: turnCheckPrepared,
    text:
      `EXECUTE agentsite_chat_slot(${user}, ${escapeLiteral(check.turn)}, ${check.maxSlots}, ${check.slotTtlMs});\n` +
      `EXECUTE agentsite_chat_check(${escapeLiteral(check.sessionId)}, ${user})`,
    statements: 2,
  };
}

/** The prelude's answer: the slot taken (null: none was found) and the session's version now. */
export function turnCheckResult(rows: Array<Array<Record<string, unknown>>>): {
  slot: number | null;
  version: TurnVersion | undefined;
} {
  const slot = rows[0]?.[0]?.slot;
  return { slot: typeof slot === 'number' ? slot : null, version: turnVersionOf(rows[1]?.[0]) };
}
