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
import {
  outcomeColumns,
  outcomeValues,
  setOutcomeColumns,
  typedOutcomeRow,
} from './outcome-columns.js';
import type { RecordRow } from './record-view.js';

/**
 * The text records' read model (decision 0019): what the log's events of a request make of its
 * `requests` row, its hold and its journal entries. One rule, two uses: `foldRecord` overlays a
 * row with its request's pending events for an exact read (record-log.ts), and `applyEvents`
 * writes the same into the tables, for the projector and for a writer that needs the tables exact.
 *
 * An outcome (of a `money` or `outcome` event) moves the record only from `FINISHED_FROM`: a
 * record the sweeper gave up on (`submission_unknown`) takes a late finish; one already final
 * keeps its state.
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
      folded = FINISHED_FROM.includes(folded.status)
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

/**
 * The states a logged finish moves a record from: running, or given up on by the sweeper. Every
 * outcome a finish records is a move RECORD_MOVES lists from both (record-states.ts); a record in
 * any other state is final, or awaits a settle that writes its own rows.
 */
const FINISHED_FROM: readonly RequestStatus[] = ['processing', 'submission_unknown'];

/** Most rows one multi-row statement writes (a statement's parameters are bounded on both stores). */
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
  const resolved: {
    holdId: string;
    state: 'captured' | 'released';
    captured: number | null;
    at: number;
  }[] = [];
  const outcomes: OutcomeRecord[] = [];
  for (const event of ordered) {
    if (event.kind === 'outcome')
      outcomes.push({ ...outcomePayloadOf(event).outcome, id: event.requestId });
    if (event.kind !== 'money') continue;
    const money = moneyPayloadOf(event);
    // A guard moved nothing: the resolution that took it wrote its own rows.
    if (money === null) continue;
    const captured = money.move === 'capture';
    resolved.push({
      holdId: money.holdId,
      state: captured ? 'captured' : 'released',
      captured: captured ? event.amount : null,
      at: event.createdAt,
    });
    entry(event, {
      accountId: event.accountId,
      kind: money.move,
      balanceDelta: -(event.amount ?? 0),
      heldDelta: -(event.released ?? 0),
      holdId: money.holdId,
      requestId: event.requestId,
      reason: money.reason,
    });
    outcomes.push({ ...money.outcome, id: event.requestId });
  }
  for (const rows of chunks(resolved)) await resolveHolds(trx, rows);
  for (const rows of chunks(outcomes)) await recordOutcomes(trx, rows);
  for (const rows of chunks(journal)) await trx.insertInto('journal').values(rows).execute();
}

/** The batch's holds resolved, each from `open` only (the money event made it the one move). */
async function resolveHolds(
  trx: Kysely<Database>,
  rows: readonly { holdId: string; state: string; captured: number | null; at: number }[],
): Promise<void> {
  const values = sql.join(
    rows.map(
      (row) =>
        sql`(cast(${row.holdId} as text), cast(${row.state} as text), cast(${row.captured} as bigint), cast(${row.at} as bigint))`,
    ),
  );
  await sql`with resolved (id, state, captured_amount, resolved_at) as (values ${values})
    update holds set state = resolved.state, captured_amount = resolved.captured_amount,
      resolved_at = resolved.resolved_at
    from resolved where holds.id = resolved.id and holds.state = 'open'`.execute(trx);
}

/**
 * The batch's outcomes written into their records, each only from a state a finish moves
 * (`FINISHED_FROM`): a record already final keeps its state (record-states.ts).
 */
async function recordOutcomes(trx: Kysely<Database>, outcomes: readonly OutcomeRecord[]) {
  const rows = sql.join(outcomes.map((outcome) => typedOutcomeRow(outcomeValues(outcome))));
  const names = sql.join(outcomeColumns.map((column) => sql.id(column)));
  const set = sql.join(
    setOutcomeColumns.map((column) => sql`${sql.id(column)} = ${sql.ref(`outcome.${column}`)}`),
  );
  await sql`with outcome (${names}) as (values ${rows})
    update requests set ${set} from outcome
    where requests.id = outcome.id and requests.status in ('processing', 'submission_unknown')`.execute(
    trx,
  );
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
