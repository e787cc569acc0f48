import type {
  RequestStatus,
  TaskBillingState,
  TaskStatus,
  Wallet,
  WalletHoldRelease,
  WalletKey,
  WalletRequestHold,
  WalletTaskHold,
} from '@tollgate/protocol';
import type { Kysely } from 'kysely';
import type { AccountService } from '../accounts/account-service.js';
import { keyHint } from '../auth/key-view.js';
import type { Database } from '../store/schema.js';
import { pendingHoldsOf } from './wallet-pending.js';

/** The most open holds a wallet lists (oldest first); `holds_truncated` says when there are more. */
export const WALLET_HOLD_LIMIT = 200;

/**
 * The record states whose hold is still open (docs/requests.md, "States"): running, awaiting
 * funds, or unconfirmed. Every other state has charged or released it, in the transaction that
 * moved the record there (a task's creation record, `accepted`, holds for its task).
 */
const HOLDING_RECORDS = ['processing', 'awaiting_funds', 'submission_unknown'] as const;

/** The task billing states whose hold is open (ledger-check.ts, TASK_HOLD_STATES). */
const HOLDING_TASKS = ['reserved', 'pending'] as const;

interface HoldRow {
  id: string;
  amount: number;
  since: number;
  request_id: string;
  model: string | null;
  key_name: string | null;
  key_hint: string | null;
}

/**
 * A member's wallet (docs/console.md, "Wallet"): the account's money as `GET /v1/account`
 * answers it (`AccountService.get`), and each open hold with what holds it, since when and what
 * ends it. Holds are found from what holds them — the account's records in a holding state and
 * its tasks in a holding billing state, each by the account's own indexes — never by scanning
 * every hold (the holds table has no index by account: migrations/030). The listed holds add up
 * to `held` (tested: console-wallet.test.ts).
 */
export class Wallets {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly accounts: Pick<AccountService, 'get'>,
  ) {}

  async read(accountId: string): Promise<Wallet> {
    // The event log's pending claims and finishes (accounting.event_log) first, then the rows: a
    // batch applied in between is then in the rows (requests/record-log.ts `overlay`); the listed
    // holds add up to `held` at every instant, applied or not (wallet-pending.ts).
    const pending = await pendingHoldsOf(this.db, accountId);
    const account = await this.accounts.get(accountId);
    const requests = await this.db
      .selectFrom('requests')
      .innerJoin('holds', 'holds.id', 'requests.hold_id')
      .leftJoin('api_keys', 'api_keys.id', 'requests.key_id')
      .select([
        'holds.id as id',
        'holds.amount as amount',
        'holds.created_at as since',
        'requests.id as request_id',
        'requests.model as model',
        'requests.status as status',
        'api_keys.name as key_name',
        'api_keys.key_hint as key_hint',
      ])
      .where('requests.account_id', '=', accountId)
      .where('requests.status', 'in', HOLDING_RECORDS)
      .where('holds.state', '=', 'open')
      .orderBy('holds.created_at')
      .orderBy('holds.id')
      .limit(WALLET_HOLD_LIMIT + 1)
      .execute();
    const tasks = await this.db
      .selectFrom('tasks')
      .innerJoin('holds', 'holds.id', 'tasks.hold_id')
      .leftJoin('api_keys', 'api_keys.id', 'tasks.key_id')
      .select([
        'holds.id as id',
        'holds.amount as amount',
        'holds.created_at as since',
        'tasks.request_id as request_id',
        'tasks.id as task_id',
        'tasks.model as model',
        'tasks.status as status',
        'tasks.billing_state as billing_state',
        'tasks.settlement_expires_at as settlement_expires_at',
        'api_keys.name as key_name',
        'api_keys.key_hint as key_hint',
      ])
      .where('tasks.account_id', '=', accountId)
      .where('tasks.billing_state', 'in', HOLDING_TASKS)
      .where('holds.state', '=', 'open')
      .orderBy('holds.created_at')
      .orderBy('holds.id')
      .limit(WALLET_HOLD_LIMIT + 1)
      .execute();
    const taskHolds = new Set(tasks.map((row) => row.id));
    const holds = [
      ...requests
        .filter((row) => !taskHolds.has(row.id) && !pending.resolved.has(row.request_id))
        .map((row) => requestHold(row, pending.status.get(row.request_id) ?? row.status)),
      ...pending.added
        // Applied since the log was read: listed from the rows already.
        .filter((row) => !requests.some((listed) => listed.request_id === row.request_id))
        .filter((row) => (HOLDING_RECORDS as readonly string[]).includes(row.status))
        .map((row) => requestHold(row, row.status)),
      ...tasks.map((row) =>
        taskHold(row, row.task_id, row.status, row.billing_state, row.settlement_expires_at),
      ),
    ].sort((a, b) => a.since.localeCompare(b.since) || a.id.localeCompare(b.id));
    return {
      object: 'wallet',
      account_id: account.id,
      currency: account.currency,
      balance: account.balance,
      held: account.held,
      available: account.available,
      owed: account.owed,
      holds: holds.slice(0, WALLET_HOLD_LIMIT),
      holds_truncated: holds.length > WALLET_HOLD_LIMIT,
    };
  }
}

function keyOf(row: HoldRow): WalletKey | null {
  return row.key_hint === null ? null : { name: row.key_name, hint: keyHint(row.key_hint) };
}

/** What ends a record's hold, by the record's state (docs/requests.md, the table of moves). */
const RECORD_RELEASES: Readonly<Record<(typeof HOLDING_RECORDS)[number], WalletHoldRelease>> = {
  processing: 'request_finishes',
  awaiting_funds: 'request_settled',
  submission_unknown: 'request_reconciled',
};

function requestHold(row: HoldRow, status: RequestStatus): WalletRequestHold {
  return {
    id: row.id,
    kind: 'request',
    request_id: row.request_id,
    task_id: null,
    model: row.model,
    key: keyOf(row),
    amount: row.amount,
    since: new Date(row.since).toISOString(),
    status,
    billing_state: null,
    released_by: RECORD_RELEASES[status as keyof typeof RECORD_RELEASES],
    until: null,
  };
}

/**
 * What ends a task's hold (docs/tasks.md): priced and awaiting settlement, its settle or, at the
 * end of its settlement window, its expiry; unconfirmed, an operator; else its end.
 */
function taskHold(
  row: HoldRow,
  taskId: string,
  status: TaskStatus,
  billing: TaskBillingState,
  settlementExpiresAt: number | null,
): WalletTaskHold {
  const pending = billing === 'pending';
  return {
    id: row.id,
    kind: 'task',
    request_id: row.request_id,
    task_id: taskId,
    model: row.model,
    key: keyOf(row),
    amount: row.amount,
    since: new Date(row.since).toISOString(),
    status,
    billing_state: billing,
    released_by: pending
      ? 'task_settled'
      : status === 'submission_unknown'
        ? 'task_reconciled'
        : 'task_finishes',
    until:
      pending && settlementExpiresAt !== null ? new Date(settlementExpiresAt).toISOString() : null,
  };
}
