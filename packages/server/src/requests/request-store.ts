import type { Kysely } from 'kysely';
import { preparedQuery } from '../store/prepared-query.js';
import type { Database, RequestStatus, RequestTable } from '../store/schema.js';
import { BatchedFingerprints, type Fingerprint } from './batched-fingerprints.js';
import { assertMove } from './record-states.js';
import type { RecordRow } from './record-view.js';
import { setOutcomeColumns, type RecordedOutcomeColumns } from './outcome-columns.js';
import type { RecordLog } from './record-log.js';
import type { ClaimedRecord } from '../events/request-events.js';

/** How old a stored Responses turn without a record must be to be purged (`purgeExpired`). */
const ORPHAN_TURN_AGE_MS = 3_600_000;

/** The outcome's move: the state it expects the record in (compare-and-set) and its columns. */
type GuardedOutcome = RecordedOutcomeColumns & { expected_status: RequestStatus };

/**
 * What a transition may write besides the status: any column but the record's identity and
 * what the claim fixed; `updated_at` always (the sweeper reads it as a sign of life).
 */
export type TransitionColumns = Partial<
  Omit<
    RequestTable,
    | 'id'
    | 'status'
    | 'key_id'
    | 'account_id'
    | 'idempotency_key'
    | 'fingerprint'
    | 'method'
    | 'path'
    | 'hold_id'
    | 'created_at'
  >
> & { updated_at: number };

/** A new record: the review columns start empty (they belong to an operator). */
export type NewRecord = ClaimedRecord;

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
      task_id: slot.task_id,
      created_at: slot.created_at,
      updated_at: slot.updated_at,
      expires_at: slot.expires_at,
    })
    .onConflict((conflict) => conflict.columns(['key_id', 'idempotency_key']).doNothing()),
);
// The hot path's transition (see `transition`): prepared, guarded on the expected state.
const recordOutcome = preparedQuery<GuardedOutcome>((db, slot) =>
  db
    .updateTable('requests')
    // Every outcome column (outcome-columns.ts), as the batched captures write them.
    .set(
      Object.fromEntries(setOutcomeColumns.map((column) => [column, slot[column]])) as Omit<
        RecordedOutcomeColumns,
        'id'
      >,
    )
    .where('id', '=', slot.id)
    .where('status', '=', slot.expected_status),
);

// What the idempotency guard reads before every business POST (http/plugins/idempotency-guard.ts):
// only what it judges, by the unique (key_id, idempotency_key) index, compiled once.
const fingerprintByIdempotencyKey = preparedQuery<
  { key_id: string; idempotency_key: string },
  { id: string; fingerprint: string }
>((db, slot) =>
  db
    .selectFrom('requests')
    .select(['id', 'fingerprint'])
    .where('key_id', '=', slot.key_id)
    .where('idempotency_key', '=', slot.idempotency_key),
);

/**
 * Request records: reads joined with their hold's state (one round trip), the claim's insert,
 * and every later write as a guarded `transition`: there is no unguarded update.
 */
export class RequestStore {
  readonly #fingerprints: BatchedFingerprints | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    /** PostgreSQL: the guard's reads of one event-loop turn share a statement (batched-fingerprints.ts). */
    batchReads = false,
    /**
     * `accounting.event_log`: the text records' pending events (record-log.ts). Reads by id and
     * by idempotency key overlay them; inside a transaction, and before every transition, they
     * are applied to the tables first, so that the writer works on exact rows.
     */
    readonly log?: RecordLog,
  ) {
    this.#fingerprints = batchReads
      ? new BatchedFingerprints(db, (keyId, idempotencyKey) =>
          this.#fingerprintOf(keyId, idempotencyKey),
        )
      : undefined;
  }

  private base(executor: Kysely<Database> = this.db) {
    return executor
      .selectFrom('requests')
      .leftJoin('holds', 'holds.id', 'requests.hold_id')
      .selectAll('requests')
      .select('holds.state as hold_state');
  }

  /** Records whose upstream reported usage beyond the cap, newest first (one query). */
  flagged(options: { includeReviewed: boolean; limit: number }): Promise<RecordRow[]> {
    let query = this.base()
      .where('requests.usage_flag', 'is not', null)
      .orderBy('requests.created_at', 'desc')
      .limit(options.limit);
    if (!options.includeReviewed) query = query.where('requests.usage_reviewed_at', 'is', null);
    return query.execute();
  }

  /** Records whose outcome was never confirmed, oldest first: the operator's resolution queue. */
  awaitingResolution(limit: number): Promise<RecordRow[]> {
    return this.base()
      .where('requests.status', '=', 'submission_unknown')
      .orderBy('requests.created_at', 'asc')
      .orderBy('requests.id', 'asc')
      .limit(limit)
      .execute();
  }

  /**
   * `submission_unknown` records of the given paths that still hold money and created no task,
   * oldest first: what the reconciler looks up (request-reconciler.ts).
   */
  awaitingLookup(paths: readonly string[], limit: number): Promise<RecordRow[]> {
    return this.base()
      .where('requests.status', '=', 'submission_unknown')
      .where('requests.path', 'in', [...paths])
      .where('requests.hold_id', 'is not', null)
      .where('requests.task_id', 'is', null)
      .orderBy('requests.created_at', 'asc')
      .orderBy('requests.id', 'asc')
      .limit(limit)
      .execute();
  }

  /**
   * Applies request `id`'s pending events to the tables in `trx` (nothing without the log): a
   * writer that works on the record's rows calls it first. `byId` in a transaction does too.
   */
  async applyPending(trx: Kysely<Database>, id: string): Promise<void> {
    await this.log?.flush(trx, id);
  }

  async byId(id: string, executor?: Kysely<Database>): Promise<RecordRow | undefined> {
    const inTransaction = executor?.isTransaction === true;
    if (inTransaction) await this.applyPending(executor, id);
    const read = () => this.base(executor).where('requests.id', '=', id).executeTakeFirst();
    if (this.log === undefined || inTransaction) return read();
    return this.log.overlay(this.db, id, read);
  }

  async byIdempotencyKey(
    keyId: string,
    idempotencyKey: string,
    executor?: Kysely<Database>,
  ): Promise<RecordRow | undefined> {
    const read = () =>
      this.base(executor)
        .where('requests.key_id', '=', keyId)
        .where('requests.idempotency_key', '=', idempotencyKey)
        .executeTakeFirst();
    if (this.log === undefined) return read();
    // The log first, then the table (record-log.ts `overlay` says why).
    const claim = await this.log.claimOf(executor ?? this.db, keyId, idempotencyKey);
    const id = (await read())?.id ?? claim?.requestId;
    return id === undefined ? undefined : this.byId(id, executor);
  }

  /** The id and fingerprint of the record an API key's idempotency key names, if any. */
  fingerprintOf(keyId: string, idempotencyKey: string): Promise<Fingerprint> {
    return (
      this.#fingerprints?.fingerprintOf(keyId, idempotencyKey) ??
      this.#fingerprintOf(keyId, idempotencyKey)
    );
  }

  async #fingerprintOf(keyId: string, idempotencyKey: string): Promise<Fingerprint> {
    // The log first, then the table (record-log.ts `overlay` says why).
    // Off the log, no read and no await: this is every business POST's guard.
    const claim =
      this.log === undefined ? undefined : await this.log.claimOf(this.db, keyId, idempotencyKey);
    const found = await fingerprintByIdempotencyKey(this.db, {
      key_id: keyId,
      idempotency_key: idempotencyKey,
    });
    const row = found.rows[0];
    if (row !== undefined || claim === undefined) return row;
    return { id: claim.requestId, fingerprint: claim.fingerprint };
  }

  /** Inserts a new record; `false` when the key already has a record with this idempotency key. */
  async insertUnlessKeyUsed(executor: Kysely<Database>, row: NewRecord): Promise<boolean> {
    const inserted = await insertUnlessKeyUsed(executor, row);
    return inserted.numAffectedRows === 1n;
  }

  /**
   * The one way a record's status changes: moves record `id` from `from` to `to` (a move
   * RECORD_MOVES lists, else RecordMoveNotAllowed is thrown) and writes `columns`, only if the
   * record is still in `from` — and, with `updatedBefore`, not touched since (the sweeper must not
   * take a record that has just shown a sign of life). Returns whether it moved; `false` means
   * someone else moved it first, and the caller must handle that (roll its transaction back,
   * answer from the record), never overwrite.
   */
  async transition(
    executor: Kysely<Database>,
    id: string,
    from: RequestStatus,
    to: RequestStatus,
    columns: TransitionColumns,
    guard: { updatedBefore?: number } = {},
  ): Promise<boolean> {
    assertMove(from, to);
    if (this.log !== undefined && !executor.isTransaction)
      return executor
        .transaction()
        .execute((trx) => this.transition(trx, id, from, to, columns, guard));
    await this.applyPending(executor, id);
    let update = executor
      .updateTable('requests')
      .set({ ...columns, status: to })
      .where('id', '=', id)
      .where('status', '=', from);
    if (guard.updatedBefore !== undefined)
      update = update.where('updated_at', '<', guard.updatedBefore);
    const result = await update.executeTakeFirst();
    return result.numUpdatedRows === 1n;
  }

  /**
   * `transition` for a request's outcome (every column given), run as a prepared statement: it
   * is on every request's hot path (bench/RESULTS.md). Same table, same compare-and-set.
   */
  async recordOutcome(
    executor: Kysely<Database>,
    from: RequestStatus,
    columns: RecordedOutcomeColumns,
  ): Promise<boolean> {
    assertMove(from, columns.status);
    // The spread last (record-outcome.ts, `succeededColumns`, says why).
    const result = await recordOutcome(executor, { expected_status: from, ...columns });
    return result.numAffectedRows === 1n;
  }

  /** Deletes expired finished records; open holds keep their records whatever their age. */
  async purgeExpired(now: number): Promise<number> {
    const result = await this.db
      .deleteFrom('requests')
      .where('expires_at', '<', now)
      .where((eb) =>
        eb.or([
          eb('status', 'in', ['succeeded', 'failed', 'resolved']),
          // A task's creation record goes once its task's money is resolved (settled, released, expired).
          eb.and([
            eb('status', '=', 'accepted'),
            eb(
              'task_id',
              'in',
              eb
                .selectFrom('tasks')
                .select('tasks.id')
                .where('tasks.billing_state', 'in', ['settled', 'released', 'expired']),
            ),
          ]),
        ]),
      )
      .executeTakeFirst();
    const purged = Number(result.numDeletedRows);
    // A stored Responses turn lives as long as its record (migration 038-response-turns). It is
    // kept just before its request is claimed (chat/response-turns.ts): a turn without a record
    // is an orphan only once it is older than that gap can be, and not while its claim is still
    // in the event log (accounting.event_log).
    if (purged > 0)
      await this.db
        .deleteFrom('response_turns')
        .where('id', 'not in', this.db.selectFrom('requests').select('requests.id'))
        .where('id', 'not in', this.db.selectFrom('events').select('events.request_id'))
        .where('created_at', '<', now - ORPHAN_TURN_AGE_MS)
        .execute();
    return purged;
  }
}
