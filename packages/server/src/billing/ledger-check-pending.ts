import type { Kysely } from 'kysely';
import { loggedEvent, type LoggedEvent } from '../events/projector.js';
import { claimPayloadOf, moneyPayloadOf, outcomePayloadOf } from '../events/request-events.js';
import type { Database, TaskBillingState } from '../store/schema.js';

/** The rows the ledger check reads, as text amounts (ledger-check.ts). */
export interface CheckedRows {
  sums: { account_id: string; balance: string; held: string; owed: string }[];
  holds: {
    id: string;
    account_id: string;
    request_id: string;
    state: string;
    price_version: string;
    amount: string | null;
    captured_amount: string | null;
  }[];
  entries: {
    id: string;
    hold_id: string | null;
    kind: string;
    balance_delta: string | null;
    held_delta: string | null;
  }[];
  requests: {
    id: string;
    hold_id: string | null;
    amount: string | null;
    price_version: string | null;
    status: string;
    task_id: string | null;
    task_billing: TaskBillingState | null;
  }[];
}

/**
 * The events still in the log (accounting.event_log, decision 0019) added to the rows the check
 * read in the same snapshot, as the projector will write them (requests/record-projection.ts):
 * a claim's hold and `hold` entry, a money event's capture or release of it, an outcome's bill.
 * The accounts moved when the events were written; so every invariant holds over tables plus log
 * at every instant, and a pending event that does not add up is found like a row that does not.
 */
export async function withPendingEvents(
  db: Kysely<Database>,
  rows: CheckedRows,
): Promise<CheckedRows> {
  const events = await pendingEvents(db);
  if (events.length === 0) return rows;
  const sums = new Map(rows.sums.map((row) => [row.account_id, { ...row }]));
  const holds = new Map(rows.holds.map((hold) => [hold.id, { ...hold }]));
  const requests = new Map(rows.requests.map((request) => [request.id, { ...request }]));
  const entries = [...rows.entries];
  const move = (accountId: string, balance: bigint, held: bigint) => {
    const sum = sums.get(accountId) ?? {
      account_id: accountId,
      balance: '0',
      held: '0',
      owed: '0',
    };
    sums.set(accountId, {
      ...sum,
      balance: String(BigInt(sum.balance) + balance),
      held: String(BigInt(sum.held) + held),
    });
  };
  for (const event of events) {
    const amount = BigInt(event.amount ?? 0);
    if (event.kind === 'claim') {
      const { record, hold } = claimPayloadOf(event);
      if (hold === null || event.amount === null) continue;
      holds.set(hold.id, {
        id: hold.id,
        account_id: event.accountId,
        request_id: event.requestId,
        state: 'open',
        price_version: hold.priceVersion,
        amount: String(amount),
        captured_amount: null,
      });
      entries.push({
        id: `event ${event.seq}`,
        hold_id: hold.id,
        kind: 'hold',
        balance_delta: '0',
        held_delta: String(amount),
      });
      move(event.accountId, 0n, amount);
      requests.set(record.id, {
        id: record.id,
        hold_id: hold.id,
        amount: null,
        price_version: record.price_version,
        status: record.status,
        task_id: null,
        task_billing: null,
      });
      continue;
    }
    const outcome =
      event.kind === 'outcome'
        ? outcomePayloadOf(event).outcome
        : (moneyPayloadOf(event)?.outcome ?? null);
    const request = requests.get(event.requestId);
    if (outcome !== null && request !== undefined)
      requests.set(event.requestId, {
        ...request,
        amount: outcome.amount === null ? null : String(outcome.amount),
      });
    const money = event.kind === 'money' ? moneyPayloadOf(event) : null;
    if (money === null) continue;
    const released = BigInt(event.released ?? 0);
    const hold = holds.get(money.holdId);
    if (hold !== undefined && hold.state === 'open')
      holds.set(money.holdId, {
        ...hold,
        state: money.move === 'capture' ? 'captured' : 'released',
        captured_amount: money.move === 'capture' ? String(amount) : null,
      });
    entries.push({
      id: `event ${event.seq}`,
      hold_id: money.holdId,
      kind: money.move,
      balance_delta: String(-amount),
      held_delta: String(-released),
    });
    move(event.accountId, -amount, -released);
  }
  return {
    sums: [...sums.values()],
    holds: [...holds.values()],
    entries,
    requests: [...requests.values()],
  };
}

async function pendingEvents(db: Kysely<Database>): Promise<LoggedEvent[]> {
  // Every amount is within 2^53 (money.ts): read as numbers, they are exact.
  const rows = await db.selectFrom('events').selectAll().orderBy('seq').execute();
  return rows.map((row) => loggedEvent(row));
}
