import {
  ApiFailure,
  call,
  csrfHeaders,
  type Account,
  type ApiKey,
  type Budget,
  type BudgetWindow,
  type ConsoleUser,
  type Page,
} from '../api.js';

/** The operator pages' calls (`/console/api/admin/...`, docs/console.md "Operator pages"). */

export interface ReviewShare {
  id: string;
  account_id: string;
  state: string;
  asset_id: string;
  created_at: string;
}

export interface UnresolvedRecord {
  id: string;
  account_id: string;
  model: string | null;
  status: string;
  reserve?: { amount: number } | null;
  created_at: string;
}

export interface UnresolvedTask {
  id: string;
  account_id: string;
  kind: string;
  model: string;
  status: string;
  created_at: string;
}

/** One side of the unresolved queue's totals (`GET /admin/v1/unresolved`). */
export interface UnresolvedTotals {
  count: number;
  held: number;
  oldest_created_at: string | null;
  oldest_age_seconds: number | null;
}

export interface UnresolvedQueue {
  total: UnresolvedTotals;
  requests: UnresolvedTotals;
  tasks: UnresolvedTotals;
}

export interface AuditEvent {
  id: string;
  created_at: string;
  actor: {
    kind: 'admin_token' | 'console_user' | 'payment_provider' | 'cli';
    id: string | null;
    email: string | null;
  };
  action: string;
  target_id: string | null;
  account_id: string | null;
  amount: number | null;
  reason: string | null;
}

/** A console user as the users page lists it (`GET /console/api/admin/users`). */
export interface OperatorUser extends ConsoleUser {
  totp_enabled: boolean;
  disabled_at: string | null;
  created_at: string;
}

export interface ModelPrices {
  price_version: string;
  prices: Record<string, unknown>;
  created_at: string;
}

export interface OperatorModel {
  id: string;
  upstream: string;
  families: string[];
  current: ModelPrices;
}

export type { Budget, BudgetWindow };

/** An account or a key as the operator sees it: with its budget (and a key its allowlist). */
export type BudgetedAccount = Account & { budget: Budget | null };
export type LimitedKey = ApiKey & { budget: Budget | null; allowed_ips: string[] | null };

/** A channel and its state in this instance (docs/routing.md). */
export interface Channel {
  id: string;
  model: string;
  upstream: string;
  upstream_model: string;
  weight: number;
  priority: number;
  disabled: boolean;
  breaker: 'closed' | 'open' | 'half_open';
  consecutive_failures: number;
  cooldown_ends_at: string | null;
  in_flight: number;
}

/** A record whose upstream reported usage beyond the cap (`usage_exceeded_cap`). */
export interface FlaggedRecord {
  id: string;
  account_id: string;
  key_id: string;
  model: string | null;
  bill: { amount: number; pricing_rule: string } | null;
  usage_exceeded_cap: { detail: string; reviewed_at: string | null; review: string | null };
  created_at: string;
}

/** `AccountStatement` (protocol): every balance movement of a period. */
export interface Statement {
  account_id: string;
  email: string;
  from: string;
  to: string;
  complete: boolean;
  opening_balance: number;
  movements: {
    id: string;
    time: string;
    kind: string;
    amount: number;
    balance: number;
    description: string;
    reference: string | null;
    request_id: string | null;
    task_id: string | null;
  }[];
  totals: { movements: number; credits: number; debits: number };
  closing_balance: number;
}

export interface LedgerReport {
  violations: unknown[];
}

const admin = '/admin';
const id = encodeURIComponent;

/** UTC days `YYYY-MM-DD`; an empty one leaves the server's default (this month so far). */
export interface Period {
  from: string;
  to: string;
}

function statementPath(accountId: string, period: Period, format: 'json' | 'csv'): string {
  const query = new URLSearchParams({ format });
  if (period.from !== '') query.set('from', period.from);
  if (period.to !== '') query.set('to', period.to);
  return `${admin}/accounts/${id(accountId)}/statement?${query.toString()}`;
}

export const operatorApi = {
  accounts: (q: string) =>
    call<Page<Account>>('GET', `${admin}/accounts${q === '' ? '' : `?q=${id(q)}`}`),
  createAccount: (email: string) => call<Account>('POST', `${admin}/accounts`, { email }),
  account: (accountId: string) =>
    call<BudgetedAccount>('GET', `${admin}/accounts/${id(accountId)}`),
  topUp: (accountId: string, amount: number, reference: string) =>
    call<Account>('POST', `${admin}/accounts/${id(accountId)}/topups`, { amount, reference }),
  keys: (accountId: string) =>
    call<Page<LimitedKey>>('GET', `${admin}/accounts/${id(accountId)}/keys`),
  members: (accountId: string) =>
    call<Page<ConsoleUser>>('GET', `${admin}/accounts/${id(accountId)}/members`),
  disableKey: (keyId: string) => call<ApiKey>('POST', `${admin}/keys/${id(keyId)}/disable`, {}),
  /** `null` clears the key's allowlist (every address allowed again). */
  setAllowedIps: (keyId: string, allowedIps: string[] | null) =>
    call<LimitedKey>('PATCH', `${admin}/keys/${id(keyId)}`, { allowed_ips: allowedIps }),
  /** A budget of `owner` (`accounts` or `keys`) set (`limit` micro-yuan) or, with `null`, removed. */
  setBudget: (
    owner: 'accounts' | 'keys',
    ownerId: string,
    budget: { limit: number; window: BudgetWindow } | null,
  ) =>
    budget === null
      ? call<unknown>('DELETE', `${admin}/${owner}/${id(ownerId)}/budget`)
      : call<unknown>('PUT', `${admin}/${owner}/${id(ownerId)}/budget`, budget),
  channels: () => call<Page<Channel>>('GET', `${admin}/channels`),
  switchChannel: (channelId: string, action: 'disable' | 'enable', reason: string) =>
    call<Channel>(
      'POST',
      `${admin}/channels/${id(channelId)}/${action}`,
      reason === '' ? {} : { reason },
    ),
  pendingShares: () => call<Page<ReviewShare>>('GET', `${admin}/shares?state=pending_review`),
  shareContentUrl: (shareId: string) => `/console/api${admin}/shares/${id(shareId)}/content`,
  decideShare: (shareId: string, decision: 'approve' | 'reject', reason: string) =>
    call<ReviewShare>(
      'POST',
      `${admin}/shares/${id(shareId)}/${decision}`,
      reason === '' ? {} : { reason },
    ),
  unresolved: () => call<UnresolvedQueue>('GET', `${admin}/unresolved`),
  unresolvedRecords: () => call<Page<UnresolvedRecord>>('GET', `${admin}/requests/unresolved`),
  unresolvedTasks: () =>
    call<Page<UnresolvedTask>>('GET', `${admin}/tasks?status=submission_unknown`),
  resolveRecord: (
    recordId: string,
    body: { action: 'capture' | 'release'; amount?: number; reason: string },
  ) => call<unknown>('POST', `${admin}/requests/${id(recordId)}/resolve`, body),
  resolveTask: (taskId: string, reason: string) =>
    call<unknown>('POST', `${admin}/tasks/${id(taskId)}/resolve`, { action: 'release', reason }),
  audit: (after: string | null) =>
    call<Page<AuditEvent>>('GET', `${admin}/audit${after === null ? '' : `?after=${id(after)}`}`),
  /** A batch of codes as the server's CSV (the codes exist only in this answer). */
  redemptionBatchCsv: async (body: { amount: number; count: number; expires_at?: string }) => {
    const response = await fetch(`/console/api${admin}/redemption-codes/batches`, {
      method: 'POST',
      headers: { ...csrfHeaders(), 'content-type': 'application/json', accept: 'text/csv' },
      credentials: 'same-origin',
      body: JSON.stringify(body),
    });
    if (!response.ok) {
      const error = ((await response.json()) as { error?: { code?: string; message?: string } })
        .error;
      throw new ApiFailure(response.status, error?.code ?? 'UNKNOWN', error?.message ?? '');
    }
    return response.text();
  },
  models: () => call<Page<OperatorModel>>('GET', `${admin}/models`),
  priceHistory: (model: string) =>
    call<Page<ModelPrices>>('GET', `${admin}/models/${id(model)}/prices`),
  setPrices: (model: string, prices: unknown) =>
    call<ModelPrices>('PUT', `${admin}/models/${id(model)}/prices`, prices),
  flaggedUsage: () => call<Page<FlaggedRecord>>('GET', `${admin}/requests/usage-beyond-cap`),
  reviewUsage: (recordId: string, reason: string) =>
    call<FlaggedRecord>('POST', `${admin}/requests/${id(recordId)}/review-usage`, { reason }),
  /** Where the browser downloads a statement (the session cookie goes with a same-site link). */
  statementUrl: (accountId: string, period: Period, format: 'json' | 'csv') =>
    `/console/api${statementPath(accountId, period, format)}`,
  statement: (accountId: string, period: Period) =>
    call<Statement>('GET', statementPath(accountId, period, 'json')),
  ledgerCheck: () => call<LedgerReport>('GET', `${admin}/ledger/check`),
  invite: (body: { email: string; role: 'member' | 'operator'; account_id?: string }) =>
    call<{ invite_url: string }>('POST', `${admin}/invitations`, body),
  users: (after: string | null) =>
    call<Page<OperatorUser>>('GET', `${admin}/users${after === null ? '' : `?after=${id(after)}`}`),
  switchUser: (userId: string, action: 'disable' | 'enable') =>
    call<OperatorUser>('POST', `${admin}/users/${id(userId)}/${action}`),
};
