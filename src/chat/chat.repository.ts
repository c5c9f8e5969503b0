import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { In, IsNull, type DataSource } from 'typeorm';
import { RowMapper } from '../common/database/row-mapper.js';
import { keysetWhere, type PageQuery } from '../common/pagination.js';
import { preparedStatement } from '../common/database/prepared-statement.js';
import type { SubscriptionStatus, Tier } from '../users/user-fields.js';
import { CredentialEntity } from '../vault/credential.entity.js';
import { SiteEntity } from '../vault/site.entity.js';
import type { WorkspaceRole } from '../workspaces/workspace.entities.js';
import { inOwnersVaultSql } from '../workspaces/scope.js';
import type { ModelMessage } from '../../workflows/contracts.js';
import { WHOLE_HISTORY_MESSAGES } from './chat-context.js';
import { ChatMessageEntity, ChatSessionEntity, type HistoryMessage, type SessionSite } from './chat.entities.js';
import {
  MEMBERSHIP_COLUMNS,
  MEMBERSHIP_JOINS,
  SESSION_SITE_IDS,
  TURN_VERSION_COLUMNS,
  type TurnVersion,
  turnVersionOf,
} from './turn-check.js';

/** The user's membership of a session's workspace as it is now (meaningless for a personal session). */
export interface SessionMembership {
  /** Null once the user is no longer a member. */
  role: WorkspaceRole | null;
  owner: { tier: Tier; subscriptionStatus: SubscriptionStatus };
}

/**
 * How a path names a session: the SHA-256 of its token, or its id (the list cannot give tokens back:
 * only their hashes are kept). Either way the session must also be the caller's (`user_id`).
 */
export interface SessionKey {
  column: 'token_hash' | 'id';
  value: string;
}

/** One row of the caller's session list: the session and what its messages add. */
export interface ListedSession {
  session: ChatSessionEntity;
  messageCount: number;
  lastMessageAt: Date | null;
}

/** A session found by its key and user, with its membership. */
export interface FoundSession {
  session: ChatSessionEntity;
  membership: SessionMembership;
}

/**
 * A session's rows for a turn: the session (null when none), its sites found, its messages so far
 * (the newest WHOLE_HISTORY_MESSAGES with their brief too), and what they were read from.
 */
export interface TurnRows {
  found: FoundSession | null;
  sites: SiteEntity[];
  history: HistoryMessage[];
  version: TurnVersion | undefined;
}

/** A completed turn's two messages (the user's and the reply), written together. */
export interface SavedTurn {
  sessionId: string;
  content: string;
  reply: Pick<ChatMessageEntity, 'id' | 'content' | 'toolCalls' | 'modelMessages' | 'parts' | 'usage' | 'cut'> &
    Partial<Pick<ChatMessageEntity, 'modelBrief'>>;
  /** The turn's slot, given back by the same statement (see takeTurnSlot). */
  slot?: Pick<TurnSlot, 'userId' | 'slot' | 'turn'>;
}

/** A chat-turn slot a turn took (takeTurnSlot): the user's slot number and the turn holding it. */
export interface TurnSlot {
  userId: string;
  slot: number;
  turn: string;
  /** Given back already (by the turn's save: ChatReplyService sets it once the save succeeded). */
  freed: boolean;
}

/** A jsonb parameter: pg would send a JS array as a PostgreSQL array, so every value goes as JSON text. */
function jsonParameter(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

/** The SQL of chat sessions and messages: raw SQL through the row mapper for a turn's hot reads. */
@Injectable()
export class ChatRepository {
  private readonly sessionRows: RowMapper<ChatSessionEntity>;
  private readonly siteRows: RowMapper<SiteEntity>;
  private readonly messageRows: RowMapper<ChatMessageEntity>;
  private readonly sessionQuery: Record<SessionKey['column'], string>;
  private readonly findQuery: Record<SessionKey['column'], string>;
  private readonly turnQuery: Record<SessionKey['column'], string>;
  private readonly saveTurnQuery: string;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.sessionRows = new RowMapper(dataSource, ChatSessionEntity, 'cs');
    this.siteRows = new RowMapper(dataSource, SiteEntity, 's');
    this.messageRows = new RowMapper(dataSource, ChatMessageEntity, 'm');
    // The session with its chosen sites (from the vault it belongs to: its workspace's, or its user's).
    // ... and the user's membership of its workspace as it is now (re-checked on every turn).
    const byKey = (query: (column: SessionKey['column']) => string): Record<SessionKey['column'], string> => ({
      token_hash: query('token_hash'),
      id: query('id'),
    });
    // The sites are looked up by their primary key: `s.id = ANY (ARRAY(…))` is an index condition,
    // whereas comparing `s.id::text` to the session's ids read every row of the sites table (of every
    // user) on every turn. The ids were validated as UUIDs when the session was created.
    this.sessionQuery = byKey(
      (column) =>
        `SELECT ${this.sessionRows.select()}, ${this.siteRows.select()}, ${MEMBERSHIP_COLUMNS} FROM chat_sessions cs ` +
        `${MEMBERSHIP_JOINS} ` +
        `LEFT JOIN sites s ON s.id = ANY (${SESSION_SITE_IDS}) ` +
        `AND ${inOwnersVaultSql('s', 'cs')} WHERE cs.${column} = $1 AND cs.user_id = $2`,
    );
    this.findQuery = byKey(
      (column) =>
        `SELECT ${this.sessionRows.select()}, ${MEMBERSHIP_COLUMNS} FROM chat_sessions cs ${MEMBERSHIP_JOINS} ` +
        `WHERE cs.${column} = $1 AND cs.user_id = $2`,
    );
    // A turn's one read: the session query above, and on its first row the session's messages so far,
    // in order, as one JSON array of [role, content, model messages, brief] (what the model is sent of
    // them): the newest WHOLE_HISTORY_MESSAGES whole, with their brief (what they are sent as once
    // older: the turn context cache keeps it), older replies brief (their large tool results as
    // placeholders, when the row has a brief), so the read stays small however long the session. And
    // on every row what the read depends on (TURN_VERSION_COLUMNS), from the same snapshot.
    // One statement and one snapshot instead of two statements side by side; the array travels (and
    // is parsed) once, whatever the number of site rows.
    this.turnQuery = byKey(
      (column) =>
        `WITH c AS (SELECT cs.id FROM chat_sessions cs WHERE cs.${column} = $1 AND cs.user_id = $2), ` +
        'w AS (SELECT coalesce((SELECT m.seq FROM chat_messages m JOIN c ON c.id = m.session_id ' +
        `ORDER BY m.seq DESC OFFSET ${WHOLE_HISTORY_MESSAGES - 1} LIMIT 1), 0) AS seq), ` +
        'h AS (SELECT coalesce(json_agg(json_build_array(m.role, m.content, CASE WHEN m.seq >= w.seq ' +
        'THEN m.model_messages ELSE coalesce(m.model_brief, m.model_messages) END, ' +
        "CASE WHEN m.seq >= w.seq THEN m.model_brief END) ORDER BY m.seq), '[]'::json) " +
        'AS history FROM chat_messages m JOIN c ON c.id = m.session_id CROSS JOIN w), ' +
        `v AS (SELECT ${TURN_VERSION_COLUMNS} FROM chat_sessions cs JOIN c ON c.id = cs.id ${MEMBERSHIP_JOINS}) ` +
        `SELECT t.*, CASE WHEN row_number() OVER () = 1 THEN h.history END AS history, v.* ` +
        `FROM (${this.sessionQuery[column]}) t CROSS JOIN h CROSS JOIN v`,
    );
    // VALUES rows are inserted in their order, each taking the next `seq`. The turn's slot is given
    // back in the same statement (a data-modifying WITH runs whether or not it is read): one round
    // trip fewer a turn, and the slot stays taken if the save fails (the turn frees it then).
    this.saveTurnQuery =
      'WITH freed AS (DELETE FROM chat_turn_slots WHERE user_id = $11 AND slot = $12 AND turn = $13) ' +
      'INSERT INTO chat_messages AS m ' +
      '(id, session_id, role, content, tool_calls, model_messages, model_brief, parts, usage, cut) ' +
      "VALUES (DEFAULT, $1, 'user', $2, NULL, NULL, NULL, NULL, NULL, false), " +
      "($3, $1, 'assistant', $4, $5::jsonb, $6::jsonb, $10::jsonb, $7::jsonb, $8::jsonb, $9) " +
      `RETURNING ${this.messageRows.select()}`;
  }

  private found(row: Record<string, unknown> | undefined): FoundSession | null {
    const session = row === undefined ? null : this.sessionRows.from(row);
    if (row === undefined || session === null) {
      return null;
    }
    return {
      session,
      membership: {
        role: row.member_role as WorkspaceRole | null,
        owner: { tier: row.owner_tier as Tier, subscriptionStatus: row.owner_status as SubscriptionStatus },
      },
    };
  }

  /** The user's session with this key, and their membership of its workspace. */
  async findByKey(key: SessionKey, userId: string): Promise<FoundSession | null> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(this.findQuery[key.column], [
      key.value,
      userId,
    ]);
    return this.found(rows[0]);
  }

  /** A turn's read: the session with its sites and membership, and its messages so far (one statement). */
  async turnRows(key: SessionKey, userId: string): Promise<TurnRows> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      preparedStatement(`chat_turn_by_${key.column}`, this.turnQuery[key.column]),
      [key.value, userId],
    );
    // On the first row as PostgreSQL numbered them; looked for rather than assumed to come first.
    const history = (rows.find((row) => row.history !== null)?.history ?? []) as Array<
      [ChatMessageEntity['role'], string, ModelMessage[] | null, ModelMessage[] | null]
    >;
    return {
      found: this.found(rows[0]),
      sites: rows.map((row) => this.siteRows.from(row)).filter((site) => site !== null),
      history: history.map(([role, content, modelMessages, modelBrief]) => ({
        role,
        content,
        modelMessages,
        modelBrief,
      })),
      version: turnVersionOf(rows[0]),
    };
  }

  /** The chosen sites, from the vault the session belongs to (its workspace's, or its user's), in its order. */
  async sitesOf(owner: { userId: string; workspaceId: string | null }, chosen: SessionSite[]): Promise<SiteEntity[]> {
    const ids = chosen.map((s) => s.siteId);
    const where =
      owner.workspaceId !== null ? { workspaceId: owner.workspaceId } : { userId: owner.userId, workspaceId: IsNull() };
    const found = ids.length ? await this.dataSource.getRepository(SiteEntity).findBy({ id: In(ids), ...where }) : [];
    return chosen.map((s) => found.find((f) => f.id === s.siteId)).filter((s): s is SiteEntity => s !== undefined);
  }

  credentialsOf(siteIds: string[]): Promise<CredentialEntity[]> {
    return siteIds.length
      ? this.dataSource.getRepository(CredentialEntity).findBy({ siteId: In(siteIds) })
      : Promise.resolve([]);
  }

  findSiteOrFail(id: string): Promise<SiteEntity> {
    return this.dataSource.getRepository(SiteEntity).findOneByOrFail({ id });
  }

  /**
   * One page of the user's live sessions in this scope (a workspace's, or personal ones), newest
   * first, `limit + 1` of them (see pageOf), each with its message count and last message time.
   */
  async listLive(owner: { userId: string; workspaceId: string | null }, query: PageQuery): Promise<ListedSession[]> {
    const qb = this.dataSource
      .getRepository(ChatSessionEntity)
      .createQueryBuilder('cs')
      .addSelect('(SELECT count(*) FROM chat_messages m WHERE m.session_id = cs.id)::int', 'message_count')
      .addSelect('(SELECT max(m.created_at) FROM chat_messages m WHERE m.session_id = cs.id)', 'last_message_at')
      .where('cs.user_id = :userId', { userId: owner.userId })
      .andWhere(owner.workspaceId === null ? 'cs.workspace_id IS NULL' : 'cs.workspace_id = :workspaceId', {
        workspaceId: owner.workspaceId,
      })
      .andWhere('cs.expires_at > now()')
      .orderBy('cs.created_at', 'DESC')
      .addOrderBy('cs.id', 'DESC')
      .limit(query.limit + 1);
    keysetWhere(qb, 'cs', query.cursor, 'DESC');
    const { entities, raw } = await qb.getRawAndEntities<{ message_count: number; last_message_at: Date | null }>();
    return entities.map((session, i) => ({
      session,
      messageCount: raw[i]?.message_count ?? 0,
      lastMessageAt: raw[i]?.last_message_at ?? null,
    }));
  }

  createSession(session: Omit<ChatSessionEntity, 'id' | 'createdAt'>): Promise<ChatSessionEntity> {
    return this.dataSource.getRepository(ChatSessionEntity).save(session);
  }

  async removeSession(id: string): Promise<void> {
    await this.dataSource.getRepository(ChatSessionEntity).delete({ id });
  }

  messages(sessionId: string): Promise<ChatMessageEntity[]> {
    return this.dataSource
      .getRepository(ChatMessageEntity)
      .createQueryBuilder('m')
      .where('m.session_id = :id', { id: sessionId })
      .orderBy('m.seq', 'ASC')
      .getMany();
  }

  /**
   * The user's message and the reply, both or neither: one INSERT of two rows (a statement is atomic,
   * so no transaction and no round trips for BEGIN and COMMIT), the user's first so that its `seq`
   * is the lower one, and the turn's slot given back (when given). Answers the saved reply.
   */
  async saveTurn(turn: SavedTurn): Promise<ChatMessageEntity> {
    return (await this.saveTurnRows(turn)).reply;
  }

  /** saveTurn, answering the user's message's `seq` too. */
  async saveTurnRows({
    sessionId,
    content,
    reply,
    slot,
  }: SavedTurn): Promise<{ reply: ChatMessageEntity; userSeq: string }> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      preparedStatement('chat_save_turn', this.saveTurnQuery),
      [
        sessionId,
        content,
        reply.id,
        reply.content,
        jsonParameter(reply.toolCalls),
        jsonParameter(reply.modelMessages),
        jsonParameter(reply.parts),
        jsonParameter(reply.usage),
        reply.cut,
        jsonParameter(reply.modelBrief),
        slot?.userId ?? null,
        slot?.slot ?? null,
        slot?.turn ?? null,
      ],
    );
    const saved = rows.map((row) => this.messageRows.from(row)!);
    const answer = saved.find((m) => m.role === 'assistant');
    const asked = saved.find((m) => m.role === 'user');
    if (answer === undefined || asked === undefined) {
      throw new Error('the reply was not saved');
    }
    return { reply: answer, userSeq: asked.seq };
  }

  /**
   * Takes one of the user's `max` chat-turn slots for `turn` (a free slot, or one whose turn expired:
   * its process died) and answers its number, or null when all are taken. Each slot is one atomic
   * upsert, so the slots hold across API processes.
   */
  async takeTurnSlot(userId: string, turn: string, max: number, ttlMs: number): Promise<number | null> {
    for (let slot = 1; slot <= max; slot += 1) {
      const rows: Array<{ slot: number }> = await this.dataSource.query(
        preparedStatement(
          'chat_take_turn_slot',
          `INSERT INTO chat_turn_slots AS t (user_id, slot, turn, expires_at)
             VALUES ($1, $2, $3, now() + $4 * interval '1 millisecond')
           ON CONFLICT (user_id, slot) DO UPDATE SET turn = EXCLUDED.turn, expires_at = EXCLUDED.expires_at
             WHERE t.expires_at <= now()
           RETURNING t.slot`,
        ),
        [userId, slot, turn, ttlMs],
      );
      if (rows.length > 0) {
        return slot;
      }
    }
    return null;
  }

  /** Frees the slot `turn` took (not another turn's that took it after it expired). */
  async freeTurnSlot(userId: string, slot: number, turn: string): Promise<void> {
    await this.dataSource.query(
      preparedStatement(
        'chat_free_turn_slot',
        'DELETE FROM chat_turn_slots WHERE user_id = $1 AND slot = $2 AND turn = $3',
      ),
      [userId, slot, turn],
    );
  }
}
