import { sql, type Insertable, type Kysely } from 'kysely';
import { journalRow, type JournalEntry, type LedgerEffects } from '../billing/journal.js';
import { loggedEvent, type EventRow, type LoggedEvent } from '../events/projector.js';
import {
  claimPayloadOf,
  moneyPayloadOf,
  outcomePayloadOf,
  type ClaimedRecord,
  type OutcomeRecord,
} from '../events/request-events.js';
import type { Database, HoldTable, JournalTable, RequestStatus } from '../store/schema.js';
import { canMove, RECORD_MOVES } from './record-states.js';
import type { RecordRow } from './record-view.js';

/**
 * The text records' read model (decision 0019): what the log's events of a request make of its
 * `requests` row, its hold and its journal entries. One rule, two uses: `foldRecord` overlays a
 * row with its request's pending events for an exact read (record-log.ts), and `applyEvents`
 * writes the same into the tables, for the projector and for a writer that needs the tables exact.
 *
 * An outcome (of a `money` or `outcome` event) moves the record only where RECORD_MOVES allows
 * from the state it is in: a record the sweeper gave up on (`submission_unknown`) takes a late
 * finish; one already final keeps its state.
 */
export function foldRecord(
  row: RecordRow | undefined,
  events: readonly LoggedEvent[],
): RecordRow | undefined {
  let folded = row;
  for (const event of events) {
    if (event.kind === 'claim') {
      if (folded !== undefined) continue;
      const claim = claimPayloadOf(event);
      folded = {
        ...claim.record,
        usage_flag: null,
        usage_reviewed_at: null,
        usage_review: null,
        channel: null,
        channel_attempts: null,
        channel_cost: null,
        line_items: null,
        hold_state: claim.hold === null ? null : 'open',
      };
    } else if (folded !== undefined) {
      const outcome = outcomeOf(event);
      if (outcome === null) continue;
      const money = event.kind === 'money' ? moneyPayloadOf(event) : null;
      const holdState =
        money === null ? folded.hold_state : money.move === 'capture' ? 'captured' : 'released';
      folded = canMove(folded.status, outcome.status)
        ? { ...folded, ...outcome, hold_state: holdState }
        : { ...folded, hold_state: holdState };
    }
  }
  return folded;
}

/** The outcome an event records, or null (a claim, a money guard). */
function outcomeOf(event: LoggedEvent): OutcomeRecord | null {
  if (event.kind === 'outcome') return outcomePayloadOf(event).outcome;
  if (event.kind === 'money') return moneyPayloadOf(event)?.outcome ?? null;
  return null;
}

/** The states an outcome of status `to` may move a record from. */
const movesInto = (to: RequestStatus): RequestStatus[] =>
  (Object.keys(RECORD_MOVES) as RequestStatus[]).filter((from) => canMove(from, to));

/** Most rows one multi-row insert writes (a statement's parameters are bounded on both stores). */
const ROWS_PER_INSERT = 100;

/**
 * Writes events into `requests`, `holds` and `journal`, in `trx`. The events must have been taken
 * off the log in the same transaction (`takeEvents`): that delete is what makes each event applied
 * once, whoever applies it. A batch's claims go first, in multi-row inserts, then its finishes in
 * sequence order (a request's finish always comes after its claim), their journal entries last in
 * one insert: the same rows as one at a time, in a few statements per batch.
 */
export async function applyEvents(
  trx: Kysely<Database>,
  effects: LedgerEffects,
  events: readonly LoggedEvent[],
): Promise<void> {
  const ordered = [...events].sort((a, b) => a.seq - b.seq);
  const journal: JournalTable[] = [];
  const entry = (event: LoggedEvent, line: JournalEntry) =>
    journal.push(journalRow(atTheEventsTime(effects, event), line));
  const records: ClaimedRecord[] = [];
  const holds: Insertable<HoldTable>[] = [];
  for (const event of ordered) {
    if (event.kind !== 'claim') continue;
    const { record, hold } = claimPayloadOf(event);
    records.push(record);
    if (hold === null || event.amount === null) continue;
    holds.push({
      id: hold.id,
      account_id: event.accountId,
      request_id: event.requestId,
      amount: event.amount,
      state: 'open',
      captured_amount: null,
      price_version: hold.priceVersion,
      created_at: event.createdAt,
      resolved_at: null,
      budget_key_id: hold.budgetKeyId,
    });
    entry(event, {
      accountId: event.accountId,
      kind: 'hold',
      balanceDelta: 0,
      heldDelta: event.amount,
      holdId: hold.id,
      requestId: event.requestId,
      reason: `reserve for ${event.requestId}`,
    });
  }
  for (const rows of chunks(records))
    await trx
      .insertInto('requests')
      .values(rows)
      .onConflict((conflict) => conflict.column('id').doNothing())
      .execute();
  for (const rows of chunks(holds)) await trx.insertInto('holds').values(rows).execute();
  for (const event of ordered) {
    if (event.kind === 'money') await applyMoney(trx, event, entry);
    else if (event.kind === 'outcome') await recordOutcome(trx, event.requestId, outcomeOf(event));
  }
  for (const rows of chunks(journal)) await trx.insertInto('journal').values(rows).execute();
}

async function applyMoney(
  trx: Kysely<Database>,
  event: LoggedEvent,
  entry: (event: LoggedEvent, line: JournalEntry) => void,
) {
  const money = moneyPayloadOf(event);
  // A guard moved nothing: the resolution that took it wrote its own rows.
  if (money === null) return;
  const captured = money.move === 'capture';
  await trx
    .updateTable('holds')
    .set({
      state: captured ? 'captured' : 'released',
      captured_amount: captured ? event.amount : null,
      resolved_at: event.createdAt,
    })
    .where('id', '=', money.holdId)
    .where('state', '=', 'open')
    .execute();
  entry(event, {
    accountId: event.accountId,
    kind: money.move,
    balanceDelta: -(event.amount ?? 0),
    heldDelta: -(event.released ?? 0),
    holdId: money.holdId,
    requestId: event.requestId,
    reason: money.reason,
  });
  await recordOutcome(trx, event.requestId, money.outcome);
}

async function recordOutcome(
  trx: Kysely<Database>,
  requestId: string,
  outcome: OutcomeRecord | null,
): Promise<void> {
  if (outcome === null) return;
  await trx
    .updateTable('requests')
    .set(outcome)
    .where('id', '=', requestId)
    .where('status', 'in', movesInto(outcome.status))
    .execute();
}

function chunks<T>(rows: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < rows.length; start += ROWS_PER_INSERT)
    out.push(rows.slice(start, start + ROWS_PER_INSERT));
  return out;
}

/** The journal entry of an event is dated when the event happened, not when it was applied. */
const atTheEventsTime = (effects: LedgerEffects, event: LoggedEvent): LedgerEffects => ({
  ...effects,
  clock: { now: () => event.createdAt },
});

/**
 * Takes events off the log for applying them in `trx`: those of `requestId` (a writer about to
 * read or write its record), or those of `seqs` (the projector's batch). A money guard stays (its
 * resolution's transaction is still open: events/request-events.ts) unless the projector takes it.
 * Another transaction applying the same events waits on their rows, then finds them gone.
 */
export async function takeEvents(
  trx: Kysely<Database>,
  which: { requestId: string } | { seqs: readonly number[] },
): Promise<LoggedEvent[]> {
  let query = trx.deleteFrom('events');
  if ('requestId' in which)
    query = query
      .where('request_id', '=', which.requestId)
      .where(sql<boolean>`not (kind = 'money' and payload is null)`);
  else query = query.where('seq', 'in', [...which.seqs]);
  const rows = (await query.returningAll().execute()) as unknown as EventRow[];
  return rows.map((row) => loggedEvent(row)).sort((a, b) => a.seq - b.seq);
}
