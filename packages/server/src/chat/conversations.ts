import type { Kysely } from 'kysely';
import { ApiError } from '../errors/api-error.js';
import type { Database } from '../store/schema.js';
import type { Clock } from '../util/effects.js';

/**
 * Conversations (`conversation_id` on chat): a conversation belongs to the key that opened it,
 * and runs one turn at a time. The turn is marked with a guarded update, so two concurrent turns
 * cannot both start.
 */
export class Conversations {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
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
    const claimed = await this.db
      .updateTable('conversations')
      .set({ pending_request_id: requestId, updated_at: now })
      .where('id', '=', conversationId)
      .where('key_id', '=', keyId)
      .where('pending_request_id', 'is', null)
      .executeTakeFirst();
    if (claimed.numUpdatedRows === 1n) return;
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
    throw new ApiError(
      'CONVERSATION_PENDING',
      `the previous turn of this conversation (${existing?.pending_request_id ?? 'unknown'}) is still running; read it with GET /v1/requests/{id}`,
      'conversation_id',
    );
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
