import { sql, type Insertable, type Kysely } from 'kysely';
import { journalRow, type JournalEntry, type LedgerEffects } from '../billing/journal.js';
import { loggedEvent, type EventRow, type LoggedEvent } from '../events/projector.js';
import {
  claimPayloadOf,
  moneyPayloadOf,
  outcomePayloadOf,
  type ClaimPayload,
  type MoneyPayload,
  type OutcomeRecord,
} from '../events/request-events.js';
import type {
  Database,
  HoldState,
  HoldTable,
  JournalTable,
  RequestStatus,
} from '../store/schema.js';
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
    if (event.kind === 'claim') folded ??= claimedRow(claimPayloadOf(event));
    else if (folded !== undefined) folded = finishedRow(folded, finishOf(event));
  }
  return folded;
}

/** A claim's record as `requests` holds it, with its hold's state. */
function claimedRow(claim: ClaimPayload): RecordRow {
  return {
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
}

/** What a finish event records, parsed once: its outcome, and its money (null: none moved). */
interface Finish {
  readonly outcome: OutcomeRecord;
  readonly money: MoneyPayload | null;
}

/** The finish an event records, or null (a claim, a money guard). */
function finishOf(event: LoggedEvent): Finish | null {
  if (event.kind === 'outcome') return { outcome: outcomePayloadOf(event).outcome, money: null };
  if (event.kind !== 'money') return null;
  const money = moneyPayloadOf(event);
  return money === null ? null : { outcome: money.outcome, money };
}

/** A record after a finish: its outcome only from `FINISHED_FROM`, its hold's state always. */
function finishedRow(row: RecordRow, finish: Finish | null): RecordRow {
  if (finish === null) return row;
  const { money } = finish;
  const holdState = money === null ? row.hold_state : holdStateAfter(money);
  return FINISHED_FROM.includes(row.status)
    ? { ...row, ...finish.outcome, hold_state: holdState }
    : { ...row, hold_state: holdState };
}

/** A hold's state after its request's money event. */
const holdStateAfter = (money: MoneyPayload) =>
  money.move === 'capture' ? ('captured' as const) : ('released' as const);

/**
 * The states a logged finish moves a record from: running, or given up on by the sweeper. Every
 * outcome a finish records is a move RECORD_MOVES lists from both (record-states.ts); a record in
 * any other state is final, or awaits a settle that writes its own rows.
 */
const FINISHED_FROM: readonly RequestStatus[] = ['processing', 'submission_unknown'];

/** Most rows one multi-row statement writes (a statement's parameters are bounded on both stores). */
const ROWS_PER_INSERT = 100;

/** A request claimed in the batch being applied: the rows its claim inserts, finishes folded in. */
interface ClaimedInBatch {
  row: RecordRow;
  hold: Insertable<HoldTable> | null;
  /** The outcomes folded into `row`, in order: written by update if the record was there already. */
  readonly outcomes: OutcomeRecord[];
}

/**
 * Writes events into `requests`, `holds` and `journal`, in `trx`. The events must have been taken
 * off the log in the same transaction (`takeEvents`): that delete is what makes each event applied
 * once, whoever applies it. A request claimed in the batch is inserted as its finishes in the
 * batch left it (its record and hold final in one insert each: most requests finish within a
 * projector round); a finish of a request claimed before updates its rows, the batch's updates in
 * one statement each. Journal entries are the same as one event at a time, in sequence order, in
 * one insert: the same rows as applying one event at a time, in a few statements per batch.
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
  const claimed = new Map<string, ClaimedInBatch>();
  const resolved: ResolvedHold[] = [];
  const outcomes: OutcomeRecord[] = [];
  for (const event of ordered) {
    if (event.kind === 'claim') {
      const claim = claimPayloadOf(event);
      const hold = claim.hold === null || event.amount === null ? null : claim.hold;
      claimed.set(event.requestId, {
        row: claimedRow(claim),
        hold: hold === null ? null : openHold(event, hold),
        outcomes: [],
      });
      if (hold !== null)
        entry(event, {
          accountId: event.accountId,
          kind: 'hold',
          balanceDelta: 0,
          heldDelta: event.amount ?? 0,
          holdId: hold.id,
          requestId: event.requestId,
          reason: `reserve for ${event.requestId}`,
        });
      continue;
    }
    const finish = finishOf(event);
    // A guard moved nothing: the resolution that took it wrote its own rows.
    if (finish === null) continue;
    const { money } = finish;
    const outcome = { ...finish.outcome, id: event.requestId };
    const inBatch = claimed.get(event.requestId);
    if (inBatch !== undefined) {
      inBatch.row = finishedRow(inBatch.row, finish);
      inBatch.outcomes.push(outcome);
    } else outcomes.push(outcome);
    if (money === null) continue;
    const resolution: ResolvedHold = {
      holdId: money.holdId,
      state: holdStateAfter(money),
      captured: money.move === 'capture' ? event.amount : null,
      at: event.createdAt,
    };
    if (inBatch?.hold != null) Object.assign(inBatch.hold, resolvedColumns(resolution));
    else resolved.push(resolution);
    entry(event, {
      accountId: event.accountId,
      kind: money.move,
      balanceDelta: -(event.amount ?? 0),
      heldDelta: -(event.released ?? 0),
      holdId: money.holdId,
      requestId: event.requestId,
      reason: money.reason,
    });
  }
  await insertClaimed(trx, [...claimed.values()], outcomes);
  for (const rows of chunks(resolved)) await resolveHolds(trx, rows);
  // A request finished twice in one batch (a late finish after `submission_unknown`) is updated
  // once per finish, in order: one `update … from` takes one source row per target row.
  for (const layer of layers(outcomes))
    for (const rows of chunks(layer)) await recordOutcomes(trx, rows);
  for (const rows of chunks(journal)) await trx.insertInto('journal').values(rows).execute();
}

interface ResolvedHold {
  holdId: string;
  state: 'captured' | 'released';
  captured: number | null;
  at: number;
}

const resolvedColumns = (resolution: ResolvedHold) => ({
  state: resolution.state,
  captured_amount: resolution.captured,
  resolved_at: resolution.at,
});

function openHold(event: LoggedEvent, hold: NonNullable<ClaimPayload['hold']>) {
  return {
    id: hold.id,
    account_id: event.accountId,
    request_id: event.requestId,
    amount: event.amount ?? 0,
    state: 'open' as HoldState,
    captured_amount: null as number | null,
    price_version: hold.priceVersion,
    created_at: event.createdAt,
    resolved_at: null as number | null,
    budget_key_id: hold.budgetKeyId,
  } satisfies Insertable<HoldTable>;
}

/**
 * The batch's claimed records and holds, in multi-row inserts. A record already in `requests`
 * (inserted before: the insert does nothing) takes its folded outcomes as updates instead, in
 * `outcomes`.
 */
async function insertClaimed(
  trx: Kysely<Database>,
  claimed: readonly ClaimedInBatch[],
  outcomes: OutcomeRecord[],
): Promise<void> {
  for (const batch of chunks(claimed)) {
    const inserted = await trx
      .insertInto('requests')
      .values(batch.map(({ row: { hold_state: _, ...columns } }) => columns))
      .onConflict((conflict) => conflict.column('id').doNothing())
      .returning('id')
      .execute();
    if (inserted.length < batch.length) {
      const ids = new Set(inserted.map((row) => row.id));
      for (const request of batch) if (!ids.has(request.row.id)) outcomes.push(...request.outcomes);
    }
  }
  const holds = claimed.flatMap((request) => (request.hold === null ? [] : [request.hold]));
  for (const rows of chunks(holds)) await trx.insertInto('holds').values(rows).execute();
}

/** Outcomes split so that no layer names a record twice, each record's outcomes in order. */
function layers(outcomes: readonly OutcomeRecord[]): OutcomeRecord[][] {
  const out: OutcomeRecord[][] = [];
  const seen = new Map<string | undefined, number>();
  for (const outcome of outcomes) {
    const depth = seen.get(outcome.id) ?? 0;
    seen.set(outcome.id, depth + 1);
    (out[depth] ??= []).push(outcome);
  }
  return out;
}

/** The batch's holds resolved, each from `open` only (the money event made it the one move). */
async function resolveHolds(trx: Kysely<Database>, rows: readonly ResolvedHold[]): Promise<void> {
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
