import type {
  Account,
  AccountStatement,
  BudgetWindow,
  OperatorRequestRecord,
  OperatorShare,
  OperatorTask,
  RequestRecord,
  TaskKind,
} from '@tollgate/protocol';
import { request, requestFile } from '../api.js';
import type {
  ApiKey,
  AuditEvent,
  Channel,
  ConsoleUser,
  Invitation,
  LedgerReport,
  List,
  ListPage,
  ModelPrices,
  AccountEmail,
  KeyNames,
  OperatorModel,
  UnresolvedSummary,
} from '../console-types.js';

/**
 * The operator pages' calls (`/console/api/admin/...`, docs/console.md "Operator pages"), through
 * the console's one request function (api.ts), answering the protocol's operator views.
 */

const admin = '/admin';
const id = encodeURIComponent;

/** A row of the console's operator answers, with its account's email and its key's name. */
export type Named<Row> = Row & AccountEmail & KeyNames;

/** A share in the review queue, named: its account, its key, and its task's kind and model. */
export type ReviewShare = Named<OperatorShare> & {
  task_kind: TaskKind | null;
  task_model: string | null;
};

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

const FORMAT_TYPES = { json: 'application/json', csv: 'text/csv' } as const;

export const operatorApi = {
  accounts: (q: string) =>
    request<ListPage<Account>>('GET', `${admin}/accounts${q === '' ? '' : `?q=${id(q)}`}`),
  createAccount: (email: string) =>
    request<Account>('POST', `${admin}/accounts`, { body: { email } }),
  account: (accountId: string) => request<Account>('GET', `${admin}/accounts/${id(accountId)}`),
  topUp: (accountId: string, amount: number, reference: string) =>
    request<Account>('POST', `${admin}/accounts/${id(accountId)}/topups`, {
      body: { amount, reference },
    }),
  keys: (accountId: string) =>
    request<List<ApiKey>>('GET', `${admin}/accounts/${id(accountId)}/keys`),
  members: (accountId: string) =>
    request<List<ConsoleUser>>('GET', `${admin}/accounts/${id(accountId)}/members`),
  disableKey: (keyId: string) =>
    request<ApiKey>('POST', `${admin}/keys/${id(keyId)}/disable`, { body: {} }),
  /** `null` clears the key's allowlist (every address allowed again). */
  setAllowedIps: (keyId: string, allowedIps: string[] | null) =>
    request<ApiKey>('PATCH', `${admin}/keys/${id(keyId)}`, { body: { allowed_ips: allowedIps } }),
  /**
   * A budget of `owner` (`accounts` or `keys`) set (`limit` micro-yuan) or, with `null`,
   * removed; answers the account or the key with its budget.
   */
  setBudget: (
    owner: 'accounts' | 'keys',
    ownerId: string,
    budget: { limit: number; window: BudgetWindow } | null,
  ) =>
    budget === null
      ? request<Account | ApiKey>('DELETE', `${admin}/${owner}/${id(ownerId)}/budget`)
      : request<Account | ApiKey>('PUT', `${admin}/${owner}/${id(ownerId)}/budget`, {
          body: budget,
        }),
  channels: () => request<List<Channel>>('GET', `${admin}/channels`),
  switchChannel: (channelId: string, action: 'disable' | 'enable', reason: string) =>
    request<Channel>('POST', `${admin}/channels/${id(channelId)}/${action}`, {
      body: reason === '' ? {} : { reason },
    }),
  pendingShares: () =>
    request<ListPage<ReviewShare>>('GET', `${admin}/shares?state=pending_review`),
  shareContentUrl: (shareId: string) => `/console/api${admin}/shares/${id(shareId)}/content`,
  decideShare: (shareId: string, decision: 'approve' | 'reject', reason: string) =>
    request<OperatorShare>('POST', `${admin}/shares/${id(shareId)}/${decision}`, {
      body: reason === '' ? {} : { reason },
    }),
  unresolved: () => request<UnresolvedSummary>('GET', `${admin}/unresolved`),
  unresolvedRecords: () =>
    request<List<Named<OperatorRequestRecord>>>('GET', `${admin}/requests/unresolved`),
  unresolvedTasks: () =>
    request<List<Named<OperatorTask>>>('GET', `${admin}/tasks?status=submission_unknown`),
  resolveRecord: (
    recordId: string,
    body: { action: 'capture' | 'release'; amount?: number; reason: string },
  ) => request<RequestRecord>('POST', `${admin}/requests/${id(recordId)}/resolve`, { body }),
  resolveTask: (taskId: string, reason: string) =>
    request<OperatorTask>('POST', `${admin}/tasks/${id(taskId)}/resolve`, {
      body: { action: 'release', reason },
    }),
  audit: (after: string | null) =>
    request<ListPage<AuditEvent>>(
      'GET',
      `${admin}/audit${after === null ? '' : `?after=${id(after)}`}`,
    ),
  /** A batch of codes as the server's CSV file (the codes exist only in this answer). */
  redemptionBatchCsv: (body: { amount: number; count: number; expires_at?: string }) =>
    requestFile('POST', `${admin}/redemption-codes/batches`, 'text/csv', { body }),
  models: () => request<List<OperatorModel>>('GET', `${admin}/models`),
  priceHistory: (model: string) =>
    request<List<ModelPrices>>('GET', `${admin}/models/${id(model)}/prices`),
  setPrices: (model: string, prices: unknown) =>
    request<ModelPrices>('PUT', `${admin}/models/${id(model)}/prices`, { body: prices }),
  flaggedUsage: () =>
    request<List<Named<OperatorRequestRecord>>>('GET', `${admin}/requests/usage-beyond-cap`),
  reviewUsage: (recordId: string, reason: string) =>
    request<OperatorRequestRecord>('POST', `${admin}/requests/${id(recordId)}/review-usage`, {
      body: { reason },
    }),
  /** The statement's own address (a link's `href`; `statementFile` downloads it). */
  statementUrl: (accountId: string, period: Period, format: 'json' | 'csv') =>
    `/console/api${statementPath(accountId, period, format)}`,
  /** The statement downloaded as its file, JSON or CSV. */
  statementFile: (accountId: string, period: Period, format: 'json' | 'csv') =>
    requestFile('GET', statementPath(accountId, period, format), FORMAT_TYPES[format]),
  statement: (accountId: string, period: Period) =>
    request<AccountStatement>('GET', statementPath(accountId, period, 'json')),
  ledgerCheck: () => request<LedgerReport>('GET', `${admin}/ledger/check`),
  invite: (body: { email: string; role: 'member' | 'operator'; account_id?: string }) =>
    request<Invitation>('POST', `${admin}/invitations`, { body }),
  users: (after: string | null) =>
    request<ListPage<ConsoleUser>>(
      'GET',
      `${admin}/users${after === null ? '' : `?after=${id(after)}`}`,
    ),
  switchUser: (userId: string, action: 'disable' | 'enable') =>
    request<ConsoleUser>('POST', `${admin}/users/${id(userId)}/${action}`),
};
