import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';

export interface LedgerViolation {
  invariant: string;
  subject: string;
  detail: string;
}

export interface LedgerReport {
  ok: boolean;
  accounts: number;
  holds: number;
  hold_journal_entries: number;
  violations: LedgerViolation[];
}

/**
 * Verifies every ledger invariant (docs/billing.md):
 *  1. journal replay: each account's balance and held equal the sums of its journal deltas;
 *  2. nothing negative: balance >= 0, held >= 0, balance - held >= 0;
 *  3. held equals the sum of the account's open holds;
 *  4. one resolution per hold: an open hold has one `hold` entry and none else; a resolved one
 *     has exactly one `capture` or `release` entry matching its state and captured amount;
 *  5. one capture per request, and the request's bill equals the capture and carries the
 *     hold's price version;
 *  6. conservation: the sum of balances equals top-ups minus captures.
 * Reads are done in one pass per table; run it on a quiet database or accept that a request in
 * flight between two reads may show up as a transient difference (the CLI retries once).
 */
export async function checkLedger(db: Kysely<Database>): Promise<LedgerReport> {
  const violations: LedgerViolation[] = [];
  const add = (invariant: string, subject: string, detail: string) =>
    violations.push({ invariant, subject, detail });

  const accounts = await db.selectFrom('accounts').select(['id', 'balance', 'held']).execute();
  const sums = await db
    .selectFrom('journal')
    .select((eb) => [
      'account_id',
      eb.fn.sum<number>('balance_delta').as('balance'),
      eb.fn.sum<number>('held_delta').as('held'),
    ])
    .groupBy('account_id')
    .execute();
  const holds = await db.selectFrom('holds').selectAll().execute();
  const entries = await db
    .selectFrom('journal')
    .select(['hold_id', 'kind', 'balance_delta', 'held_delta'])
    .where('hold_id', 'is not', null)
    .execute();
  const topups = await db
    .selectFrom('topups')
    .select((eb) => eb.fn.sum<number>('amount').as('total'))
    .executeTakeFirst();
  const requests = await db
    .selectFrom('requests')
    .select(['id', 'hold_id', 'amount', 'price_version', 'status'])
    .where('hold_id', 'is not', null)
    .execute();

  const journalByAccount = new Map(
    sums.map((row) => [row.account_id, { balance: Number(row.balance), held: Number(row.held) }]),
  );
  const openHeld = new Map<string, number>();
  for (const hold of holds) {
    if (hold.state === 'open')
      openHeld.set(hold.account_id, (openHeld.get(hold.account_id) ?? 0) + hold.amount);
  }
  let balances = 0;
  for (const account of accounts) {
    balances += account.balance;
    const replay = journalByAccount.get(account.id) ?? { balance: 0, held: 0 };
    if (replay.balance !== account.balance || replay.held !== account.held) {
      add(
        'journal_replay',
        account.id,
        `columns ${account.balance}/${account.held}, journal ${replay.balance}/${replay.held}`,
      );
    }
    if (account.balance < 0 || account.held < 0 || account.balance - account.held < 0) {
      add('non_negative', account.id, `balance ${account.balance}, held ${account.held}`);
    }
    const open = openHeld.get(account.id) ?? 0;
    if (open !== account.held)
      add('held_matches_open_holds', account.id, `held ${account.held}, open holds ${open}`);
  }

  const entriesByHold = new Map<string, typeof entries>();
  for (const entry of entries) {
    const list = entriesByHold.get(entry.hold_id ?? '') ?? [];
    list.push(entry);
    entriesByHold.set(entry.hold_id ?? '', list);
  }
  const holdById = new Map(holds.map((hold) => [hold.id, hold]));
  let captured = 0;
  for (const hold of holds) {
    const list = entriesByHold.get(hold.id) ?? [];
    const placed = list.filter((entry) => entry.kind === 'hold');
    const resolutions = list.filter(
      (entry) => entry.kind === 'capture' || entry.kind === 'release',
    );
    if (placed.length !== 1 || placed[0]?.held_delta !== hold.amount)
      add('one_hold_entry', hold.id, `${placed.length} hold entries`);
    const expected = hold.state === 'open' ? 0 : 1;
    if (resolutions.length !== expected) {
      add(
        'one_resolution_per_hold',
        hold.id,
        `state ${hold.state}, ${resolutions.length} resolutions`,
      );
      continue;
    }
    const resolution = resolutions[0];
    if (resolution === undefined) continue;
    if (resolution.kind === 'capture') captured += -resolution.balance_delta;
    const kindMatches = (hold.state === 'captured') === (resolution.kind === 'capture');
    const amountMatches =
      hold.state !== 'captured' || -resolution.balance_delta === hold.captured_amount;
    if (!kindMatches || !amountMatches || resolution.held_delta !== -hold.amount) {
      add(
        'resolution_matches_hold',
        hold.id,
        `state ${hold.state}, entry ${resolution.kind} ${resolution.balance_delta}`,
      );
    }
  }

  const capturesPerRequest = new Map<string, number>();
  for (const hold of holds) {
    if (hold.state === 'captured')
      capturesPerRequest.set(hold.request_id, (capturesPerRequest.get(hold.request_id) ?? 0) + 1);
  }
  for (const [requestId, count] of capturesPerRequest) {
    if (count > 1) add('one_capture_per_request', requestId, `${count} captures`);
  }
  for (const request of requests) {
    const hold = holdById.get(request.hold_id ?? '');
    if (hold === undefined) {
      add('request_hold_exists', request.id, `hold ${request.hold_id} missing`);
      continue;
    }
    if (hold.request_id !== request.id)
      add('request_hold_exists', request.id, `hold belongs to ${hold.request_id}`);
    if (
      hold.state === 'captured' &&
      (request.amount !== hold.captured_amount || request.price_version !== hold.price_version)
    ) {
      add(
        'capture_matches_bill',
        request.id,
        `bill ${request.amount} @ ${request.price_version}, capture ${hold.captured_amount} @ ${hold.price_version}`,
      );
    }
  }

  const credited = Number(topups?.total ?? 0);
  if (balances !== credited - captured)
    add(
      'conservation',
      'all accounts',
      `balances ${balances}, top-ups ${credited} - captured ${captured}`,
    );

  return {
    ok: violations.length === 0,
    accounts: accounts.length,
    holds: holds.length,
    hold_journal_entries: entries.length,
    violations,
  };
}
