/**
 * Every `/console/api` operation, for the console's OpenAPI document (console-openapi.ts): what
 * it does, who may call it, what it answers. Paths, methods, path parameters, query schemas and
 * whether a session is needed come from the routes themselves (http/openapi/route-catalog.ts);
 * the document refuses to build when a route is missing here or a row names no route.
 */

/**
 * Who may call: `public` needs no session (sign-in, invitations, this document); `session` any
 * signed-in user; `member` a member (the account it belongs to; an operator is 403); `operator`
 * the operator role (a member is 403, before anything is read).
 */
export type ConsoleAccess = 'public' | 'session' | 'member' | 'operator';

/** What a success answers: JSON; CSV; JSON or, with `Accept: text/csv`/`format=csv`, CSV; bytes. */
export type ConsoleAnswer = 'json' | 'csv' | 'json_or_csv' | 'binary' | 'none';

export interface ConsoleOperation {
  readonly summary: string;
  readonly access: ConsoleAccess;
  /** The success status (200 unless given). */
  readonly status?: 200 | 201 | 202 | 204;
  /** `json` unless given; `none` goes with 204. */
  readonly answer?: ConsoleAnswer;
  /** The JSON body's fields, when the call takes a body (empty: an object of its own shape). */
  readonly body?: readonly string[];
  /**
   * Who refuses a body field the call does not take. Unless given: the route's own body schema,
   * else the closed schema console-bodies.ts makes of `body` (a field not listed is 400 naming
   * it, as on `/v1`; a call without `body` takes no field). `service`: the service refuses
   * unknown fields itself (prices); `file`: the body is a file, not JSON.
   */
  readonly unknownFields?: 'service' | 'file';
  /** Query parameters read by routes that have no query schema. */
  readonly query?: readonly string[];
  /** The call needs an `Idempotency-Key` header (a settle). */
  readonly idempotent?: boolean;
}

const api = '/console/api';
const admin = `${api}/admin`;

export const CONSOLE_OPERATIONS: Readonly<Record<string, ConsoleOperation>> = {
  [`GET ${api}/openapi.json`]: { summary: 'This document', access: 'public' },

  [`GET ${api}/invitations/{token}`]: {
    summary: 'Whom an invitation link is for (404 when unknown, used or expired)',
    access: 'public',
  },
  [`POST ${api}/invitations/{token}`]: {
    summary: 'Set the password of an invitation (uses the link up)',
    access: 'public',
    body: ['password'],
  },
  [`POST ${api}/session`]: {
    summary: 'Sign in: sets the session cookie, answers the session state with its csrf_token',
    access: 'public',
    body: ['email', 'password', 'totp'],
  },
  [`GET ${api}/session`]: { summary: 'The signed-in user and the csrf_token', access: 'session' },
  [`DELETE ${api}/session`]: {
    summary: 'Sign out (this session)',
    access: 'session',
    status: 204,
    answer: 'none',
  },
  [`GET ${api}/sessions`]: { summary: "The user's open sessions", access: 'session' },
  [`DELETE ${api}/sessions/{id}`]: {
    summary: 'End one of the user’s sessions',
    access: 'session',
    status: 204,
    answer: 'none',
  },
  [`POST ${api}/totp`]: { summary: 'A new TOTP secret (shown this once)', access: 'session' },
  [`POST ${api}/totp/enable`]: {
    summary: 'Turn the TOTP factor on with the app’s current code',
    access: 'session',
    status: 204,
    answer: 'none',
    body: ['code'],
  },
  [`POST ${api}/password`]: {
    summary: 'Change the password; ends every other session',
    access: 'session',
    status: 204,
    answer: 'none',
    body: ['current_password', 'new_password'],
  },

  [`GET ${api}/account`]: {
    summary: 'The member’s account: balance, held, available, budget',
    access: 'member',
  },
  [`GET ${api}/keys`]: { summary: 'The account’s API keys', access: 'member' },
  [`POST ${api}/keys`]: {
    summary: 'Create an API key (its plaintext is in this answer only)',
    access: 'member',
    body: ['name', 'kind', 'models', 'expires_at', 'idempotency'],
  },
  [`POST ${api}/keys/{id}/disable`]: {
    summary: 'Disable one of the account’s keys',
    access: 'member',
  },
  [`POST ${api}/redemptions`]: { summary: 'Redeem a code', access: 'member', body: ['code'] },
  [`GET ${api}/usage`]: { summary: 'Spend per UTC day and model', access: 'member' },
  [`GET ${api}/usage/keys`]: {
    summary: 'Spend per key over a range of UTC days',
    access: 'member',
  },
  [`GET ${api}/requests`]: {
    summary: 'The records of every key of the account: list, filters, search',
    access: 'member',
  },
  [`GET ${api}/requests.csv`]: {
    summary: 'The same records as CSV',
    access: 'member',
    answer: 'csv',
  },
  [`GET ${api}/requests/{id}`]: { summary: 'One record with its bill', access: 'member' },
  [`POST ${api}/requests/{id}/settle`]: {
    summary: 'Settle a record awaiting funds (empty body)',
    access: 'member',
    idempotent: true,
  },
  [`GET ${api}/tasks`]: { summary: 'The tasks of every key of the account', access: 'member' },
  [`GET ${api}/tasks/{id}`]: { summary: 'One task with its billing object', access: 'member' },
  [`POST ${api}/tasks/{id}/settle`]: {
    summary: 'Settle a task with the spec’s exact body',
    access: 'member',
    body: ['actual_amount', 'price_version', 'confirmation'],
    idempotent: true,
  },
  [`GET ${api}/assets/{id}/content`]: {
    summary: 'A delivered output’s bytes (also HEAD; Range)',
    access: 'member',
    answer: 'binary',
  },

  [`GET ${admin}/accounts`]: {
    summary: 'Search accounts',
    access: 'operator',
    query: ['q', 'id_prefix', 'limit', 'after'],
  },
  [`POST ${admin}/accounts`]: {
    summary: 'Create an account',
    access: 'operator',
    status: 201,
    body: ['email'],
  },
  [`GET ${admin}/accounts/{id}`]: { summary: 'One account with its budget', access: 'operator' },
  [`POST ${admin}/accounts/{id}/topups`]: {
    summary: 'Top up (a reference is credited once)',
    access: 'operator',
    body: ['amount', 'reference'],
  },
  [`GET ${admin}/accounts/{id}/keys`]: { summary: 'An account’s keys', access: 'operator' },
  [`GET ${admin}/accounts/{id}/members`]: {
    summary: 'An account’s console members',
    access: 'operator',
  },
  [`GET ${admin}/accounts/{id}/statement`]: {
    summary: 'An account’s statement for a period (JSON, or CSV to download)',
    access: 'operator',
    answer: 'json_or_csv',
  },
  [`PUT ${admin}/accounts/{id}/budget`]: {
    summary: 'Set an account’s budget',
    access: 'operator',
    body: ['limit', 'window'],
  },
  [`DELETE ${admin}/accounts/{id}/budget`]: {
    summary: 'Remove an account’s budget',
    access: 'operator',
  },
  [`POST ${admin}/keys/{id}/disable`]: { summary: 'Disable a key', access: 'operator' },
  [`PATCH ${admin}/keys/{id}`]: {
    summary: 'Set or clear a key’s allowed addresses',
    access: 'operator',
    body: ['allowed_ips'],
  },
  [`PUT ${admin}/keys/{id}/budget`]: {
    summary: 'Set a key’s budget',
    access: 'operator',
    body: ['limit', 'window'],
  },
  [`DELETE ${admin}/keys/{id}/budget`]: { summary: 'Remove a key’s budget', access: 'operator' },
  [`GET ${admin}/channels`]: {
    summary: 'Channels and their state in this instance',
    access: 'operator',
  },
  [`POST ${admin}/channels/{id}/disable`]: {
    summary: 'Disable a channel',
    access: 'operator',
    body: ['reason'],
  },
  [`POST ${admin}/channels/{id}/enable`]: {
    summary: 'Enable a channel',
    access: 'operator',
    body: ['reason'],
  },
  [`POST ${admin}/redemption-codes`]: {
    summary: 'Create one redemption code',
    access: 'operator',
    status: 201,
    body: ['amount', 'expires_at'],
  },
  [`POST ${admin}/redemption-codes/batches`]: {
    summary: 'Create a batch of redemption codes (CSV with Accept: text/csv)',
    access: 'operator',
    answer: 'json_or_csv',
    body: ['amount', 'count', 'expires_at'],
  },
  [`POST ${admin}/invitations`]: {
    summary: 'Invite a member or an operator (the link is in this answer only)',
    access: 'operator',
    status: 201,
    body: ['email', 'role', 'account_id'],
  },
  [`GET ${admin}/users`]: {
    summary: 'Console users, oldest first (`email`: the user of that address)',
    access: 'operator',
    query: ['email', 'limit', 'after'],
  },
  [`POST ${admin}/users/{id}/disable`]: {
    summary:
      'Disable a console user: every session ends at once, invitations die, sign-in is refused',
    access: 'operator',
  },
  [`POST ${admin}/users/{id}/enable`]: {
    summary: 'Let a disabled console user sign in again',
    access: 'operator',
  },
  [`GET ${admin}/shares`]: {
    summary: 'Shares by state (the review queue)',
    access: 'operator',
    query: ['state', 'limit', 'after'],
  },
  [`GET ${admin}/shares/{id}/content`]: {
    summary: 'The content of a share under review',
    access: 'operator',
    answer: 'binary',
  },
  [`POST ${admin}/shares/{id}/approve`]: {
    summary: 'Approve a share',
    access: 'operator',
    body: ['reason'],
  },
  [`POST ${admin}/shares/{id}/reject`]: {
    summary: 'Reject a share, with a reason',
    access: 'operator',
    body: ['reason'],
  },
  [`GET ${admin}/requests/unresolved`]: {
    summary: 'Records in submission_unknown',
    access: 'operator',
  },
  [`GET ${admin}/requests/usage-beyond-cap`]: {
    summary: 'Records whose upstream reported usage beyond the cap, not yet reviewed',
    access: 'operator',
  },
  [`POST ${admin}/requests/{id}/resolve`]: {
    summary: 'Resolve a submission_unknown record (capture an amount or release)',
    access: 'operator',
    body: ['action', 'amount', 'reason'],
  },
  [`POST ${admin}/requests/{id}/review-usage`]: {
    summary: 'Mark a record’s usage beyond the cap reviewed, with a reason (no money moves)',
    access: 'operator',
    body: ['reason'],
  },
  [`GET ${admin}/tasks`]: {
    summary: 'Tasks by status (submission_unknown by default)',
    access: 'operator',
    query: ['status'],
  },
  [`POST ${admin}/tasks/{id}/resolve`]: {
    summary: 'Resolve a submission_unknown task (release)',
    access: 'operator',
    body: ['action', 'upstream_task_id', 'reason'],
  },
  [`GET ${admin}/ledger/check`]: { summary: 'Run the ledger check', access: 'operator' },
  [`GET ${admin}/audit`]: {
    summary: 'The audit log',
    access: 'operator',
    query: ['account_id', 'action', 'limit', 'after'],
  },
  [`GET ${admin}/models`]: {
    summary: 'Configured models with their current prices',
    access: 'operator',
  },
  [`GET ${admin}/models/{model}/prices`]: {
    summary: 'A model’s price history',
    access: 'operator',
  },
  [`PUT ${admin}/models/{model}/prices`]: {
    summary: 'A model’s prices (the object GET answers as `prices`) saved as a new version',
    access: 'operator',
    body: [],
    unknownFields: 'service',
  },

  // Sign-up, security and keys (docs/console.md, "Self sign-up", "Security page", "Keys").
  [`GET ${api}/config`]: {
    summary: 'What the sign-in page needs to know (whether self sign-up is open)',
    access: 'public',
  },
  [`POST ${api}/signup`]: {
    summary:
      'Create an account and its member user, and sign in (only when server.console_self_signup is on)',
    access: 'public',
    status: 201,
    body: ['email', 'password'],
  },
  [`DELETE ${api}/totp`]: {
    summary: 'Remove the second factor, proved by a current code or the password',
    access: 'session',
    status: 204,
    answer: 'none',
    body: ['code', 'password'],
  },
  [`POST ${api}/keys/{id}/rotate`]: {
    summary: 'Rotate a key of the account: the new plaintext shown once',
    access: 'member',
    status: 201,
    body: ['expire_old_in_seconds'],
  },
  [`GET ${api}/models`]: {
    summary: 'The models a key of the account may be limited to',
    access: 'member',
  },
  [`GET ${api}/models/callable`]: {
    summary:
      'The models the account’s usable keys may call (every model when it has none), with their current prices',
    access: 'member',
  },

  // Files and shares (docs/console.md, "Assets and shares").
  [`GET ${api}/assets`]: { summary: 'The account’s files, newest first', access: 'member' },
  [`POST ${api}/assets`]: {
    summary: 'Upload a file: the body is the file (as POST /v1/assets takes it)',
    access: 'member',
    status: 201,
    unknownFields: 'file',
  },
  [`DELETE ${api}/assets/{id}`]: {
    summary: 'Delete a file (409 ASSET_IN_USE while a request or task uses it)',
    access: 'member',
  },
  [`GET ${api}/shares`]: { summary: 'The account’s shares, newest first', access: 'member' },
  [`GET ${api}/shares/{id}`]: {
    summary: 'One share, with its public link once approved (console shares)',
    access: 'member',
  },
  [`POST ${api}/shares`]: {
    summary: 'Ask for a share of a file or a task’s output (202 pending_review)',
    access: 'member',
    status: 202,
    body: ['asset_id', 'task_id'],
  },
  [`DELETE ${api}/shares/{id}`]: { summary: 'Revoke a share of the account', access: 'member' },

  // Online top-up (docs/payments.md).
  [`GET ${api}/topups`]: {
    summary: 'The account’s online top-up orders, and whether payments are enabled',
    access: 'member',
  },
  [`POST ${api}/topups`]: {
    summary: 'Open a checkout for an amount: the order and its checkout_url',
    access: 'member',
    status: 201,
    body: ['amount'],
  },
  // The member's wallet (docs/console.md, "Wallet").
  [`GET ${api}/wallet`]: {
    summary: 'The account’s balance, held and available, with each open hold explained',
    access: 'member',
  },
  [`GET ${api}/wallet/movements`]: {
    summary: 'A period’s journal entries, a page at a time, each with the running balance',
    access: 'member',
  },
  [`GET ${api}/wallet/statement.csv`]: {
    summary: 'A period’s journal entries as CSV (micro-yuan), opening and closing included',
    access: 'member',
    answer: 'csv',
  },
  [`GET ${admin}/payment-orders`]: {
    summary: 'Online top-up orders, refunds and flags',
    access: 'operator',
  },

  // The operator queue of unknown outcomes (docs/requests.md, "Reconciled by look-up").
  [`GET ${admin}/unresolved`]: {
    summary: 'submission_unknown records and tasks with open holds: counts, held totals, oldest',
    access: 'operator',
  },

  // The operator's dashboard, request log and code batches (docs/console.md, "Dashboard").
  [`GET ${admin}/dashboard`]: {
    summary:
      'Revenue (captures), channel cost and margin per day, model, channel and top account over UTC days (at most 366); money held now; the resolution queue',
    access: 'operator',
  },
  [`GET ${admin}/requests`]: {
    summary:
      'Every account’s request records, newest first (filters: account, key, model, status, from/to; cursor pages)',
    access: 'operator',
  },
  [`GET ${admin}/code-batches`]: {
    summary: 'Redemption code batches, newest first, with their redeemed and voided counts',
    access: 'operator',
  },
  [`POST ${admin}/code-batches/{id}/void`]: {
    summary: 'Void a batch’s unredeemed codes (idempotent; redeemed codes stay redeemed)',
    access: 'operator',
  },
};
