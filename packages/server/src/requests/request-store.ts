import type { Kysely } from 'kysely';
import type { Database, RequestTable } from '../store/schema.js';
import type { RecordRow } from './record-view.js';

/** Reads of request records joined with their hold's state (one round trip). */
export class RequestStore {
  constructor(private readonly db: Kysely<Database>) {}

  private base(executor: Kysely<Database> = this.db) {
    return executor
      .selectFrom('requests')
      .leftJoin('holds', 'holds.id', 'requests.hold_id')
      .selectAll('requests')
      .select('holds.state as hold_state');
  }

  byId(id: string, executor?: Kysely<Database>): Promise<RecordRow | undefined> {
    return this.base(executor).where('requests.id', '=', id).executeTakeFirst();
  }

  byIdempotencyKey(
    keyId: string,
    idempotencyKey: string,
    executor?: Kysely<Database>,
  ): Promise<RecordRow | undefined> {
    return this.base(executor)
      .where('requests.key_id', '=', keyId)
      .where('requests.idempotency_key', '=', idempotencyKey)
      .executeTakeFirst();
  }

  async update(
    id: string,
    values: Partial<Omit<RequestTable, 'id'>>,
    executor: Kysely<Database> = this.db,
  ): Promise<void> {
    await executor.updateTable('requests').set(values).where('id', '=', id).execute();
  }

  /** Deletes expired finished records; open holds keep their records whatever their age. */
  async purgeExpired(now: number): Promise<number> {
    const result = await this.db
      .deleteFrom('requests')
      .where('expires_at', '<', now)
      .where('status', 'in', ['succeeded', 'failed', 'resolved'])
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
