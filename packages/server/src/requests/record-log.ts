import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { LedgerEffects } from '../billing/journal.js';
import { loggedEvent, Projector, type LoggedEvent } from '../events/projector.js';
import { claimPayloadOf } from '../events/request-events.js';
import type { DialectName } from '../store/dialect-name.js';
import type { Database } from '../store/schema.js';
import { applyEvents, foldRecord, takeEvents } from './record-projection.js';
import type { RecordRow } from './record-view.js';

/** How often the in-process projector looks for events when the last look found none. */
const IDLE_POLL_MS = 20;
/** How long one round of the projector may apply batches before it lets the writers go. */
const ROUND_BUDGET_MS = 50;

/**
 * The text records' event log as the rest of the gateway sees it (`accounting.event_log`,
 * decision 0019): exact reads overlay a record with its pending events; a writer that works on the
 * tables first applies its request's pending events (`flush`); the in-process projector applies
 * the rest in the background, and once more at shutdown.
 */
export class RecordLog {
  readonly #projector: Projector;
  #timer: NodeJS.Timeout | undefined;
  #round: Promise<void> = Promise.resolve();
  #stopped = true;

  constructor(
    private readonly db: Kysely<Database>,
    dialect: DialectName,
    private readonly effects: LedgerEffects,
    private readonly logger: Pick<FastifyBaseLogger, 'error'>,
  ) {
    this.#projector = new Projector(db, {
      name: 'text-records',
      dialect,
      clock: effects.clock,
      apply: async (trx, events) =>
        applyEvents(trx, effects, await takeEvents(trx, { seqs: events.map((e) => e.seq) })),
    });
  }

  /** Applies request `requestId`'s pending events to the tables, in `trx` (see record-projection.ts). */
  async flush(trx: Kysely<Database>, requestId: string): Promise<void> {
    const events = await takeEvents(trx, { requestId });
    if (events.length > 0) await applyEvents(trx, this.effects, events);
  }

  /**
   * A record as the tables will hold it once its pending events are applied: the events are read
   * first, then the row (`readRow`). In that order a batch applied in between is seen in the row
   * (the events it applied were read before it, and applying one again changes nothing); the other
   * order would miss it in both.
   */
  async overlay(
    executor: Kysely<Database>,
    requestId: string,
    readRow: () => Promise<RecordRow | undefined>,
  ): Promise<RecordRow | undefined> {
    const pending = await this.#pendingOf(executor, requestId);
    return foldRecord(await readRow(), pending);
  }

  /** The pending claim of an API key's idempotency key, if any. */
  async claimOf(
    executor: Kysely<Database>,
    keyId: string,
    idempotencyKey: string,
  ): Promise<{ requestId: string; fingerprint: string } | undefined> {
    const row = await executor
      .selectFrom('events')
      .selectAll()
      .where('key_id', '=', keyId)
      .where('idempotency_key', '=', idempotencyKey)
      .where('kind', '=', 'claim')
      .executeTakeFirst();
    if (row === undefined) return undefined;
    const event = loggedEvent(row);
    return { requestId: event.requestId, fingerprint: claimPayloadOf(event).record.fingerprint };
  }

  async #pendingOf(executor: Kysely<Database>, requestId: string): Promise<LoggedEvent[]> {
    const rows = await executor
      .selectFrom('events')
      .selectAll()
      .where('request_id', '=', requestId)
      .orderBy('seq')
      .execute();
    return rows.map((row) => loggedEvent(row));
  }

  /** How far behind the projector is: events pending, and the age of the oldest in seconds. */
  async backlog(): Promise<{ pending: number; oldestAgeSeconds: number }> {
    const row = await this.db
      .selectFrom('events')
      .select(({ fn }) => [fn.countAll<number>().as('pending'), fn.min('created_at').as('oldest')])
      .executeTakeFirstOrThrow();
    const oldest = row.oldest === null ? null : Number(row.oldest);
    return {
      pending: Number(row.pending),
      oldestAgeSeconds:
        oldest === null ? 0 : Math.max(0, (this.effects.clock.now() - oldest) / 1000),
    };
  }

  /** Applies everything pending now (tests, the CLI, shutdown); resolves with how many. */
  catchUp(): Promise<number> {
    return this.#projector.catchUp();
  }

  /** Starts the background projector. */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#schedule(0);
  }

  /**
   * Stops the background projector, then applies what is left. A failure is logged, not thrown:
   * the services still close, and the next start applies what is pending.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    try {
      await this.#round;
      await this.catchUp();
    } catch (error) {
      this.logger.error(
        { err: error },
        'the event log projector failed at shutdown; the next start applies the rest',
      );
    }
  }

  /**
   * One round: a read first, so that an idle log costs no write transaction (on SQLite every
   * write transaction takes the database's one write lock, shared with other processes).
   */
  async #projectRound(): Promise<number> {
    const any = await this.db.selectFrom('events').select('seq').limit(1).executeTakeFirst();
    return any === undefined ? 0 : this.#projector.catchUp(ROUND_BUDGET_MS);
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#round = this.#projectRound().then(
        (applied) => this.#schedule(applied > 0 ? 0 : IDLE_POLL_MS),
        (error: unknown) => {
          this.logger.error({ err: error }, 'the event log projector failed; it tries again');
          this.#schedule(IDLE_POLL_MS * 10);
        },
      );
    }, delayMs);
    this.#timer.unref();
  }
}
