import type { Kysely } from 'kysely';
import { ApiError } from '../errors/api-error.js';
import type { Database } from '../store/schema.js';
import type { Clock } from '../util/effects.js';

/**
 * Conversations (`conversation_id` on chat): a conversation belongs to the key that opened it,
 * and runs one turn at a time. The turn is marked with a guarded update, so two concurrent turns
 * cannot both start. A turn whose instance died (kill -9, a lost host) never ends itself; the
 * next turn takes it over once it is over by other evidence: its request record has left
 * `processing` (it finished, or the sweeper moved it to `submission_unknown` after the stale
 * age), or it has no record at all and began more than `abandonedAfterMs` (the stale age) ago.
 */
export class Conversations {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly abandonedAfterMs: number,
  ) {}

  /** Marks `requestId` as the turn in flight, or throws the 409 that says why it cannot start. */
  async beginTurn(conversationId: string, keyId: string, requestId: string): Promise<void> {
    const now = this.clock.now();
    const created = await this.db
      .insertInto('conversations')
      .values({
        id: conversationId,
        key_id: keyId,
        pending_request_id: requestId,
        created_at: now,
        updated_at: now,
      })
      .onConflict((conflict) => conflict.column('id').doNothing())
      .executeTakeFirst();
    if (created.numInsertedOrUpdatedRows === 1n) return;
    // The turn in flight may end between any two of our statements (its `endTurn` runs after its
    // answer was sent): so one guarded update claims a free conversation or takes an abandoned
    // turn over, judged on the row as it is then; and a conversation read as free after that
    // update failed (its turn ended in between) is claimed again, once.
    for (let attempt = 0; attempt < 2; attempt += 1) {
      if (await this.claimOrTakeOver(conversationId, keyId, requestId, now)) return;
      const existing = await this.db
        .selectFrom('conversations')
        .select(['key_id', 'pending_request_id'])
        .where('id', '=', conversationId)
        .executeTakeFirst();
      if (existing !== undefined && existing.key_id !== keyId) {
        throw new ApiError(
          'CONVERSATION_KEY_MISMATCH',
          'this conversation was opened with another API key; continue it with that key or start a new conversation',
          'conversation_id',
        );
      }
      if (existing?.pending_request_id !== null) {
        throw new ApiError(
          'CONVERSATION_PENDING',
          `the previous turn of this conversation (${existing?.pending_request_id ?? 'unknown'}) is still running; read it with GET /v1/requests/{id}`,
          'conversation_id',
        );
      }
    }
    throw new ApiError(
      'CONVERSATION_PENDING',
      'the previous turns of this conversation keep ending and starting; send this one again',
      'conversation_id',
    );
  }

  /**
   * Marks `requestId` as the conversation's turn in flight, in one guarded update: when no turn is
   * in flight, or when the one in flight is over (class comment), judged on the row as it is
   * (so two turns cannot both start, nor both take one turn over).
   */
  private async claimOrTakeOver(
    conversationId: string,
    keyId: string,
    requestId: string,
    now: number,
  ): Promise<boolean> {
    const taken = await this.db
      .updateTable('conversations')
      .set({ pending_request_id: requestId, updated_at: now })
      .where('id', '=', conversationId)
      .where('key_id', '=', keyId)
      .where((eb) =>
        eb.or([
          eb('pending_request_id', 'is', null),
          eb.exists(
            eb
              .selectFrom('requests')
              .select('requests.id')
              .whereRef('requests.id', '=', 'conversations.pending_request_id')
              .where('requests.status', '!=', 'processing'),
          ),
          eb.and([
            eb.not(
              eb.exists(
                eb
                  .selectFrom('requests')
                  .select('requests.id')
                  .whereRef('requests.id', '=', 'conversations.pending_request_id'),
              ),
            ),
            // Nor a claim still in the event log (accounting.event_log: decision 0019).
            eb.not(
              eb.exists(
                eb
                  .selectFrom('events')
                  .select('events.seq')
                  .whereRef('events.request_id', '=', 'conversations.pending_request_id')
                  .where('events.kind', '=', 'claim'),
              ),
            ),
            eb('conversations.updated_at', '<', now - this.abandonedAfterMs),
          ]),
        ]),
      )
      .executeTakeFirst();
    return taken.numUpdatedRows === 1n;
  }

  /** Ends the turn `requestId` started (and only that one). */
  async endTurn(conversationId: string, requestId: string): Promise<void> {
    await this.db
      .updateTable('conversations')
      .set({ pending_request_id: null, updated_at: this.clock.now() })
      .where('id', '=', conversationId)
      .where('pending_request_id', '=', requestId)
      .execute();
  }
}
