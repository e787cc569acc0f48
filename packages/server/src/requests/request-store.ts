import type { Kysely } from 'kysely';
import { preparedQuery } from '../store/prepared-query.js';
import type { Database, RequestTable } from '../store/schema.js';
import type { RecordRow } from './record-view.js';

/** What finishing a request writes into its record (every column given, `null` for none). */
export type RecordedOutcomeColumns = Pick<
  RequestTable,
  | 'id'
  | 'upstream_request_id'
  | 'updated_at'
  | 'transcript'
  | 'status'
  | 'http_status'
  | 'response_body'
  | 'error_code'
  | 'usage'
  | 'amount'
  | 'pricing_rule'
  | 'usage_flag'
>;

/** A new record: the review columns start empty (they belong to an operator). */
export type NewRecord = Omit<RequestTable, 'usage_flag' | 'usage_reviewed_at' | 'usage_review'>;

// The two writes every request makes to its record, compiled once (store/prepared-query.ts).
const insertUnlessKeyUsed = preparedQuery<NewRecord>((db, slot) =>
  db
    .insertInto('requests')
    .values({
      id: slot.id,
      key_id: slot.key_id,
      account_id: slot.account_id,
      idempotency_key: slot.idempotency_key,
      fingerprint: slot.fingerprint,
      method: slot.method,
      path: slot.path,
      model: slot.model,
      status: slot.status,
      http_status: slot.http_status,
      response_body: slot.response_body,
      error_code: slot.error_code,
      usage: slot.usage,
      hold_id: slot.hold_id,
      reserve_amount: slot.reserve_amount,
      amount: slot.amount,
      price_version: slot.price_version,
      pricing_rule: slot.pricing_rule,
      upstream_request_id: slot.upstream_request_id,
      resolution: slot.resolution,
      transcript: slot.transcript,
      created_at: slot.created_at,
      updated_at: slot.updated_at,
      expires_at: slot.expires_at,
    })
    .onConflict((conflict) => conflict.columns(['key_id', 'idempotency_key']).doNothing()),
);
const recordOutcome = preparedQuery<RecordedOutcomeColumns>((db, slot) =>
  db
    .updateTable('requests')
    .set({
      upstream_request_id: slot.upstream_request_id,
      updated_at: slot.updated_at,
      transcript: slot.transcript,
      status: slot.status,
      http_status: slot.http_status,
      response_body: slot.response_body,
      error_code: slot.error_code,
      usage: slot.usage,
      amount: slot.amount,
      pricing_rule: slot.pricing_rule,
      usage_flag: slot.usage_flag,
    })
    .where('id', '=', slot.id),
);

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

  /** Inserts a new record; `false` when the key already has a record with this idempotency key. */
  async insertUnlessKeyUsed(executor: Kysely<Database>, row: NewRecord): Promise<boolean> {
    const inserted = await insertUnlessKeyUsed(executor, row);
    return inserted.numAffectedRows === 1n;
  }

  /** Writes a request's outcome into its record (inside the transaction that moves its money). */
  async recordOutcome(executor: Kysely<Database>, columns: RecordedOutcomeColumns): Promise<void> {
    await recordOutcome(executor, columns);
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
