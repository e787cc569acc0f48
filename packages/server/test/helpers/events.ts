import type { Kysely } from 'kysely';
import type { Database } from '../../src/store/schema.js';

/**
 * Appends an event of `kind` for `requestId` to the event log (migration 041-event-log), as a
 * writer will; a claim carries the idempotency key `idem-<requestId>`. Resolves with its sequence.
 */
export async function appendTestEvent(
  db: Kysely<Database>,
  requestId: string,
  kind = 'claim',
): Promise<number> {
  const row = await db
    .insertInto('events')
    .values({
      request_id: requestId,
      kind,
      account_id: 'acct_1',
      key_id: 'key_1',
      idempotency_key: kind === 'claim' ? `idem-${requestId}` : null,
      amount: 100,
      released: null,
      payload: null,
      created_at: 1,
    })
    .returning('seq')
    .executeTakeFirstOrThrow();
  return Number(row.seq);
}
