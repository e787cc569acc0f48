import type {
  Account,
  AccountPage,
  AccountStatement,
  ApiKey,
  ApiKeyList,
  AuditEventPage,
  BudgetBody,
  Channel,
  ChannelList,
  ChannelSwitchBody,
  ConsoleInvitation,
  ConsoleInvitationBody,
  ConsoleUser,
  ConsoleUserList,
  ConsoleUserPage,
  CreateAccountBody,
  KeyAllowedIpsBody,
  LedgerReport,
  ManualTopUpBody,
  ModelPriceHistory,
  ModelPrices,
  NamedOperatorRecordList,
  NamedOperatorTaskList,
  OperatorModelList,
  OperatorRequestRecord,
  OperatorShare,
  OperatorTask,
  PriceFields,
  RedemptionBatchBody,
  RequestRecord,
  ResolveRecordBody,
  ResolveTaskBody,
  ReviewShareList,
  ReviewUsageBody,
  ShareDecisionBody,
  ToppedUpAccount,
  UnresolvedQueue,
} from '@tollgate/protocol';
import { request, requestFile } from '../api.js';

/**
 * The operator pages' calls (`/console/api/admin/...`, docs/console.md "Operator pages"), through
 * the console's one request function (api.ts), answering the protocol's operator views.
 */

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

const FORMAT_TYPES = { json: 'application/json', csv: 'text/csv' } as const;

export const operatorApi = {
  accounts: (q: string) =>
    request<AccountPage>('GET', `${admin}/accounts${q === '' ? '' : `?q=${id(q)}`}`),
  createAccount: (email: string) =>
    request<Account>('POST', `${admin}/accounts`, { body: { email } satisfies CreateAccountBody }),
  account: (accountId: string) => request<Account>('GET', `${admin}/accounts/${id(accountId)}`),
  topUp: (accountId: string, amount: number, reference: string) =>
    request<ToppedUpAccount>('POST', `${admin}/accounts/${id(accountId)}/topups`, {
      body: { amount, reference } satisfies ManualTopUpBody,
    }),
  keys: (accountId: string) =>
    request<ApiKeyList>('GET', `${admin}/accounts/${id(accountId)}/keys`),
  members: (accountId: string) =>
    request<ConsoleUserList>('GET', `${admin}/accounts/${id(accountId)}/members`),
  disableKey: (keyId: string) =>
    request<ApiKey>('POST', `${admin}/keys/${id(keyId)}/disable`, { body: {} }),
  /** `null` clears the key's allowlist (every address allowed again). */
  setAllowedIps: (keyId: string, allowedIps: string[] | null) =>
    request<ApiKey>('PATCH', `${admin}/keys/${id(keyId)}`, {
      body: { allowed_ips: allowedIps } satisfies KeyAllowedIpsBody,
    }),
  /**
   * A budget of `owner` (`accounts` or `keys`) set (`limit` micro-yuan) or, with `null`,
   * removed; answers the account or the key with its budget.
   */
  setBudget: (owner: 'accounts' | 'keys', ownerId: string, budget: BudgetBody | null) =>
    budget === null
      ? request<Account | ApiKey>('DELETE', `${admin}/${owner}/${id(ownerId)}/budget`)
      : request<Account | ApiKey>('PUT', `${admin}/${owner}/${id(ownerId)}/budget`, {
          body: budget,
        }),
  channels: () => request<ChannelList>('GET', `${admin}/channels`),
  switchChannel: (channelId: string, action: 'disable' | 'enable', reason: string) =>
    request<Channel>('POST', `${admin}/channels/${id(channelId)}/${action}`, {
      body: (reason === '' ? {} : { reason }) satisfies ChannelSwitchBody,
    }),
  pendingShares: () => request<ReviewShareList>('GET', `${admin}/shares?state=pending_review`),
  shareContentUrl: (shareId: string) => `/console/api${admin}/shares/${id(shareId)}/content`,
  decideShare: (shareId: string, decision: 'approve' | 'reject', reason: string) =>
    request<OperatorShare>('POST', `${admin}/shares/${id(shareId)}/${decision}`, {
      body: (reason === '' ? {} : { reason }) satisfies ShareDecisionBody,
    }),
  unresolved: () => request<UnresolvedQueue>('GET', `${admin}/unresolved`),
  unresolvedRecords: () => request<NamedOperatorRecordList>('GET', `${admin}/requests/unresolved`),
  unresolvedTasks: () =>
    request<NamedOperatorTaskList>('GET', `${admin}/tasks?status=submission_unknown`),
  resolveRecord: (recordId: string, body: ResolveRecordBody) =>
    request<RequestRecord>('POST', `${admin}/requests/${id(recordId)}/resolve`, { body }),
  resolveTask: (taskId: string, reason: string) =>
    request<OperatorTask>('POST', `${admin}/tasks/${id(taskId)}/resolve`, {
      body: { action: 'release', reason } satisfies ResolveTaskBody,
    }),
  audit: (after: string | null) =>
    request<AuditEventPage>('GET', `${admin}/audit${after === null ? '' : `?after=${id(after)}`}`),
  /** A batch of codes as the server's CSV file (the codes exist only in this answer). */
  redemptionBatchCsv: (body: RedemptionBatchBody) =>
    requestFile('POST', `${admin}/redemption-codes/batches`, 'text/csv', { body }),
  models: () => request<OperatorModelList>('GET', `${admin}/models`),
  priceHistory: (model: string) =>
    request<ModelPriceHistory>('GET', `${admin}/models/${id(model)}/prices`),
  setPrices: (model: string, prices: PriceFields) =>
    request<ModelPrices>('PUT', `${admin}/models/${id(model)}/prices`, { body: prices }),
  flaggedUsage: () => request<NamedOperatorRecordList>('GET', `${admin}/requests/usage-beyond-cap`),
  reviewUsage: (recordId: string, reason: string) =>
    request<OperatorRequestRecord>('POST', `${admin}/requests/${id(recordId)}/review-usage`, {
      body: { reason } satisfies ReviewUsageBody,
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
  invite: (body: ConsoleInvitationBody) =>
    request<ConsoleInvitation>('POST', `${admin}/invitations`, { body }),
  users: (after: string | null) =>
    request<ConsoleUserPage>('GET', `${admin}/users${after === null ? '' : `?after=${id(after)}`}`),
  switchUser: (userId: string, action: 'disable' | 'enable') =>
    request<ConsoleUser>('POST', `${admin}/users/${id(userId)}/${action}`),
};
