import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  SETTLE_CONFIRMATION,
  type Account,
  type AccountPage,
  type AccountShare,
  type AccountTask,
  type ApiKey,
  type AuditActorKind,
  type AuditEvent,
  type AuditEventPage,
  type BudgetBody,
  type CallerAccount,
  type Channel,
  type ChannelBreaker,
  type ChannelSwitchBody,
  type ConsoleInvitation,
  type ConsoleInvitationAcceptBody,
  type ConsoleInvitationBody,
  type ConsoleKeyCreateBody,
  type ConsolePasswordBody,
  type ConsoleRole,
  type ConsoleSession,
  type ConsoleSignInBody,
  type ConsoleSignUpBody,
  type ConsoleTotpEnableBody,
  type ConsoleTotpRemovalBody,
  type ConsoleUser,
  type ConsoleUserPage,
  type CreateAccountBody,
  type H3SettleBody,
  type KeyAllowedIpsBody,
  type KeyNames,
  type KeyRotateBody,
  type KeySpendRow,
  type LedgerReport,
  type ManualTopUpBody,
  type ModelPriceHistory,
  type ModelPrices,
  type OnlineTopUpBody,
  type OperatorRequestRecord as ProtocolOperatorRecord,
  type PaymentOrder,
  type PaymentOrderState,
  type PaymentStatus,
  type RedemptionBatchBody,
  type RedemptionBody,
  type RedemptionCodeBody,
  type ResolveRecordBody,
  type ResolveTaskBody,
  type ReviewUsageBody,
  type RotatedApiKey,
  type ShareDecisionBody,
  type ShareTargetBody,
  type StartedTopUp,
  type ToppedUpAccount,
  type UnresolvedQueue,
  type Asset,
  type ErrorBody,
  type AssetList,
  type OperatorRequestRecord,
  type OperatorShare,
  type OperatorTask,
  type Quote,
  type RecordBill,
  type RecordReserve,
  type RecordSettlement,
  type RequestRecord,
  type RequestResolution,
  type SettleBody,
  type Share,
  type ShareEvent,
  type Task,
  type TaskError,
  type TaskOutput,
  type TaskQuote,
  type TaskResolution,
  type TaskSettlement,
  type UsageExceededCap,
} from '@tollgate/protocol';
import ts from 'typescript';
import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import { accountView, type AccountService } from '../../src/accounts/account-service.js';
import type { AccountListing } from '../../src/accounts/account-listing.js';
import { auditEventView, type AuditLog } from '../../src/audit/audit-log.js';
import type { KeyService } from '../../src/auth/key-service.js';
import { checkLedger } from '../../src/billing/ledger-check.js';
import { modelPricesView, priceHistoryView } from '../../src/billing/price-view.js';
import { ownerTaskView } from '../../src/http/console/account-tasks.js';
import { CONSOLE_OPERATIONS } from '../../src/http/console/console-operations.js';
import { sessionView } from '../../src/users/console-sessions.js';
import { consoleUserView, withOrigin, type ConsoleUsers } from '../../src/users/console-users.js';
import type { OperatorActions } from '../../src/operator/operator-actions.js';
import { paymentOrderView } from '../../src/payments/payment-orders.js';
import type { PaymentService } from '../../src/payments/payment-service.js';
import type { ChannelStatus } from '../../src/routing/channel-router.js';
import type { BreakerState } from '../../src/routing/circuit-breaker.js';
import type { ShareService } from '../../src/shares/share-service.js';
import type {
  AuditActorKind as StoredActorKind,
  ConsoleRole as StoredConsoleRole,
  PaymentOrderState as StoredOrderState,
} from '../../src/store/schema.js';
import type { AccountUsageReader } from '../../src/usage/account-usage.js';
import { unresolvedQueue } from '../../src/usage/unresolved-queue.js';
import { assetView } from '../../src/assets/asset-view.js';
import { operatorRecordView, recordView } from '../../src/requests/record-view.js';
import { operatorShareView, shareView } from '../../src/shares/share-view.js';
import { operatorTaskView } from '../../src/tasks/task-operations.js';
import type { TaskService } from '../../src/families/media/media-task-service.js';
import {
  SETTLE_CONFIRMATION as SERVER_SETTLE_CONFIRMATION,
  settleBodySchema,
  type SettleBody as ServerSettleBody,
} from '../../src/tasks/task-settlement.js';
import { imageView, videoView } from '../../src/families/media/media-view.js';
import { describeEachDialect } from '../helpers/dialects.js';
import {
  ADMIN_TOKEN,
  shortTimeoutsConfig,
  startGateway,
  embeddingsOnlyConfig,
  type TestGateway,
} from '../helpers/gateway.js';
import { png } from '../helpers/media.js';
import {
  expectEachExact,
  expectExactKeys,
  lineItemKeys,
  taskBillingKeys,
  type KeyList,
  type Presence,
} from '../helpers/wire-keys.js';
import { finishedRequest, unknownOutcome } from '../helpers/records.js';
import { finishedTask, settleBodyOf, workUntil, type TaskBody } from '../helpers/tasks.js';

/**
 * The JSON the server sends and the types in packages/protocol (what the SDK imports) must not
 * drift apart. Two halves:
 * - types: every view function is declared to return its protocol type, so a view that builds
 *   another shape does not compile; the assertions below keep those declarations in place, and
 *   the last test of the first block runs the compiler on this file so they are enforced by
 *   `vitest run` too (vitest itself does not type-check);
 * - bodies: real responses carry exactly the keys their type lists, no undocumented extra (a
 *   spread of stored JSON could add one that the compiler never sees) and none missing.
 */

// Every list is checked against its type by `satisfies`: a key the type lacks, a key it has that
// the list lacks, or the wrong presence does not compile.
const quoteKeys = {
  object: 'always',
  model: 'always',
  quoted_amount: 'always',
  currency: 'always',
  price_version: 'always',
  line_items: 'always',
  closed_reasons: 'always',
} as const satisfies Presence<Quote>;
const taskKeys = {
  object: 'always',
  id: 'always',
  model: 'always',
  status: 'always',
  request_id: 'always',
  created_at: 'always',
  finished_at: 'optional',
  quote: 'always',
  billing: 'always',
  settlement: 'optional',
  outputs: 'optional',
  error: 'optional',
  resolution: 'optional',
} as const satisfies Presence<Task>;
const taskQuoteKeys = {
  quoted_amount: 'always',
  price_version: 'always',
  currency: 'always',
  line_items: 'always',
} as const satisfies Presence<TaskQuote>;
const settlementKeys = {
  url: 'always',
  method: 'always',
} as const satisfies Presence<RecordSettlement>;
/** A task's settlement also says until when it is possible (the settlement window). */
const taskSettlementKeys = {
  ...settlementKeys,
  expires_at: 'always',
} as const satisfies Presence<TaskSettlement>;
const taskOutputKeys = {
  asset_id: 'always',
  media_type: 'always',
  bytes: 'always',
  width: 'always',
  height: 'always',
  seconds: 'always',
  content_url: 'always',
} as const satisfies Presence<TaskOutput>;
const taskErrorKeys = { code: 'always', message: 'always' } as const satisfies Presence<TaskError>;
const taskResolutionKeys = {
  action: 'always',
  reason: 'always',
  by: 'always',
  at: 'always',
  upstream_task_id: 'optional',
} as const satisfies Presence<TaskResolution>;
const operatorTaskKeys = {
  ...taskKeys,
  account_id: 'always',
  key_id: 'always',
  upstream: 'always',
  upstream_task_id: 'always',
  submission: 'always',
  lease_owner: 'always',
  due_at: 'always',
  leases_taken: 'always',
  note: 'optional',
} as const satisfies Presence<OperatorTask>;
const recordKeys = {
  object: 'always',
  id: 'always',
  idempotency_key: 'always',
  method: 'always',
  path: 'always',
  model: 'always',
  status: 'always',
  http_status: 'always',
  result: 'always',
  error: 'always',
  usage: 'always',
  reserve: 'always',
  bill: 'always',
  usage_exceeded_cap: 'always',
  usage_counted_locally: 'always',
  canSettle: 'always',
  settlement: 'always',
  upstream_request_id: 'always',
  task_id: 'always',
  resolution: 'always',
  created_at: 'always',
  updated_at: 'always',
} as const satisfies Presence<RequestRecord>;
const errorKeys = {
  code: 'always',
  message: 'always',
  request_id: 'always',
  param: 'optional',
} as const satisfies Presence<ErrorBody['error']>;
const reserveKeys = {
  id: 'always',
  amount: 'always',
  state: 'always',
  currency: 'always',
} as const satisfies Presence<RecordReserve>;
const billKeys = {
  amount: 'always',
  currency: 'always',
  price_version: 'always',
  pricing_rule: 'always',
  line_items: 'always',
  captured: 'always',
} as const satisfies Presence<RecordBill>;
const usageExceededCapKeys = {
  detail: 'always',
  reviewed_at: 'always',
  review: 'always',
} as const satisfies Presence<UsageExceededCap>;
const settledResolutionKeys = {
  action: 'always',
  idempotency_key: 'always',
  at: 'always',
} as const satisfies Presence<Extract<RequestResolution, { action: 'settled' }>>;
const operatorResolutionKeys = {
  action: 'always',
  amount: 'always',
  reason: 'always',
  by: 'always',
  at: 'always',
} as const satisfies Presence<Exclude<RequestResolution, { action: 'settled' }>>;
const operatorRecordKeys = {
  ...recordKeys,
  key_id: 'always',
  account_id: 'always',
  ending_rule: 'always',
  channel: 'always',
  channel_attempts: 'always',
  channel_cost: 'always',
} as const satisfies Presence<OperatorRequestRecord>;
const accountKeys = {
  object: 'always',
  id: 'always',
  email: 'always',
  balance: 'always',
  held: 'always',
  owed: 'always',
  available: 'always',
  currency: 'always',
  created_at: 'always',
  budget: 'always',
} as const satisfies Presence<Account>;
const callerAccountKeys = {
  ...accountKeys,
  key_budget: 'always',
} as const satisfies Presence<CallerAccount>;
const assetKeys = {
  object: 'always',
  id: 'always',
  media_type: 'always',
  bytes: 'always',
  sha256: 'always',
  width: 'always',
  height: 'always',
  duration_seconds: 'always',
  file_name: 'always',
  model: 'always',
  content_url: 'always',
  created_at: 'always',
} as const satisfies Presence<Asset>;
const assetListKeys = {
  object: 'always',
  data: 'always',
  has_more: 'always',
  next_cursor: 'always',
} as const satisfies Presence<AssetList>;
const shareKeys = {
  object: 'always',
  id: 'always',
  state: 'always',
  task_id: 'always',
  asset_id: 'always',
  created_at: 'always',
  decided_at: 'always',
  reason: 'always',
  public_url: 'always',
} as const satisfies Presence<Share>;
const { public_url: _ownerOnly, ...sharedKeys } = shareKeys;
const operatorShareKeys = {
  ...sharedKeys,
  account_id: 'always',
  key_id: 'always',
  media_type: 'always',
  bytes: 'always',
  asset_deleted: 'always',
  serving: 'always',
  content_url: 'always',
  events: 'optional',
} as const satisfies Presence<OperatorShare>;
const shareEventKeys = {
  at: 'always',
  actor: 'always',
  action: 'always',
  reason: 'always',
} as const satisfies Presence<ShareEvent>;
const settleBodyKeys = {
  actual_amount: 'always',
  price_version: 'always',
  confirmation: 'always',
} as const satisfies Presence<SettleBody>;

/** The files that declare the views; the compiler test checks them with this file. */
const VIEW_FILES = [
  'packages/server/src/requests/record-view.ts',
  'packages/server/src/tasks/task-view.ts',
  'packages/server/src/tasks/task-operations.ts',
  'packages/server/src/families/media/media-task-service.ts',
  'packages/server/src/families/media/media-view.ts',
  'packages/server/src/h3/h3-view.ts',
  'packages/server/src/shares/share-view.ts',
  'packages/server/src/assets/asset-view.ts',
  'packages/server/src/accounts/account-service.ts',
  // The console API's answers (docs/console.md): its views and the routes that build lists.
  'packages/server/src/users/console-users.ts',
  'packages/server/src/users/console-sessions.ts',
  'packages/server/src/http/console/console-names.ts',
  'packages/server/src/http/console/account-tasks.ts',
  'packages/server/src/http/console/session-routes.ts',
  'packages/server/src/http/console/caller-routes.ts',
  'packages/server/src/http/console/caller-request-routes.ts',
  'packages/server/src/http/console/caller-task-routes.ts',
  'packages/server/src/http/console/caller-asset-routes.ts',
  'packages/server/src/http/console/payment-routes.ts',
  'packages/server/src/http/console/operator-routes.ts',
];

function expectQuote(label: string, body: unknown): void {
  const quote = expectExactKeys(label, body, quoteKeys);
  expectEachExact(`${label}.line_items`, quote['line_items'], lineItemKeys);
}

/** A task (or, with `operatorTaskKeys`, an operator's task) and every object in it. */
function expectTask(label: string, body: unknown, keys: KeyList = taskKeys): void {
  const task = expectExactKeys(label, body, keys);
  const quote = expectExactKeys(`${label}.quote`, task['quote'], taskQuoteKeys);
  expectEachExact(`${label}.quote.line_items`, quote['line_items'], lineItemKeys);
  const billing = expectExactKeys(`${label}.billing`, task['billing'], taskBillingKeys);
  if ('line_items' in billing)
    expectEachExact(`${label}.billing.line_items`, billing['line_items'], lineItemKeys);
  if ('settlement' in task)
    expectExactKeys(`${label}.settlement`, task['settlement'], taskSettlementKeys);
  if ('outputs' in task) expectEachExact(`${label}.outputs`, task['outputs'], taskOutputKeys);
  if ('error' in task) expectExactKeys(`${label}.error`, task['error'], taskErrorKeys);
  if ('resolution' in task)
    expectExactKeys(`${label}.resolution`, task['resolution'], taskResolutionKeys);
}

/** A request record (or an operator's) and every object in it that is not `null`. */
function expectRecord(label: string, body: unknown, keys: KeyList = recordKeys): void {
  const record = expectExactKeys(label, body, keys);
  const nested: [string, KeyList][] = [
    ['reserve', reserveKeys],
    ['bill', billKeys],
    ['usage_exceeded_cap', usageExceededCapKeys],
    ['usage_counted_locally', usageExceededCapKeys],
    ['settlement', settlementKeys],
  ];
  for (const [field, fieldKeys] of nested)
    if (record[field] !== null) expectExactKeys(`${label}.${field}`, record[field], fieldKeys);
  const resolution = record['resolution'] as { action?: unknown } | null;
  if (resolution !== null)
    expectExactKeys(
      `${label}.resolution`,
      resolution,
      resolution.action === 'settled' ? settledResolutionKeys : operatorResolutionKeys,
    );
  if (record['error'] !== null) expectExactKeys(`${label}.error`, record['error'], errorKeys);
}

describe('wire types: each server view is declared to return its packages/protocol type', () => {
  it('the views return exactly the protocol types (enforced by the compiler test below)', () => {
    expectTypeOf(recordView).returns.toEqualTypeOf<RequestRecord>();
    expectTypeOf(operatorRecordView).returns.toEqualTypeOf<OperatorRequestRecord>();
    expectTypeOf(imageView).returns.toEqualTypeOf<Task>();
    expectTypeOf(videoView).returns.toEqualTypeOf<Task>();
    expectTypeOf(operatorTaskView).returns.toEqualTypeOf<OperatorTask>();
    expectTypeOf<TaskService['quote']>().returns.resolves.toEqualTypeOf<Quote>();
    expectTypeOf<TaskService['read']>().returns.resolves.toEqualTypeOf<Task>();
    expectTypeOf(shareView).returns.toEqualTypeOf<Share>();
    expectTypeOf(operatorShareView).returns.toEqualTypeOf<OperatorShare>();
    expectTypeOf(assetView).returns.toEqualTypeOf<Asset>();
    expectTypeOf(accountView).returns.toEqualTypeOf<Account>();
    // The settle body the server parses is the protocol's, both ways (the server's is readonly).
    expectTypeOf<ServerSettleBody>().toExtend<SettleBody>();
    expectTypeOf<SettleBody>().toExtend<ServerSettleBody>();
  });

  it('the settle body schema the routes enforce has exactly the fields of SettleBody', () => {
    expect(SERVER_SETTLE_CONFIRMATION).toBe(SETTLE_CONFIRMATION);
    expect([...settleBodySchema.required].sort()).toEqual(Object.keys(settleBodyKeys).sort());
    expect(Object.keys(settleBodySchema.properties).sort()).toEqual(
      Object.keys(settleBodyKeys).sort(),
    );
    expect(settleBodySchema.additionalProperties).toBe(false);
    expect(settleBodySchema.properties.confirmation.const).toBe('settle_original_approved');
  });

  it('this file and the view files type-check: a view that drifts from its wire type fails here', () => {
    const thisFile = fileURLToPath(import.meta.url);
    const root = path.resolve(path.dirname(thisFile), '../../../..');
    const { config } = ts.readConfigFile(path.join(root, 'tsconfig.json'), (file) =>
      ts.sys.readFile(file),
    ) as { config: unknown };
    const { options } = ts.parseJsonConfigFileContent(config, ts.sys, root);
    // Against the protocol's sources, as vitest runs (vitest.config.ts), not a possibly stale build.
    options.paths = { '@tollgate/protocol': [path.join(root, 'packages/protocol/src/index.ts')] };
    const program = ts.createProgram({ rootNames: [thisFile], options });
    const checked = [thisFile, ...VIEW_FILES.map((file) => path.join(root, file))];
    const diagnostics = checked.flatMap((file) => {
      const source = program.getSourceFile(file);
      if (source === undefined) return [`${file} is not in the program`];
      return [
        ...program.getSyntacticDiagnostics(source),
        ...program.getSemanticDiagnostics(source),
      ].map((diagnostic) => {
        const line =
          diagnostic.start === undefined
            ? '?'
            : source.getLineAndCharacterOfPosition(diagnostic.start).line + 1;
        const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
        return `${path.relative(root, file)}:${line}: ${message}`;
      });
    });
    expect(diagnostics).toEqual([]);
  }, 60_000);
});

/** True when each type accepts the other's values: the same fields, the server's maybe `readonly`. */
type Mutual<Server, Wire> = [Server] extends [Wire]
  ? [Wire] extends [Server]
    ? true
    : false
  : false;

/** What an async method or function resolves to. */
type Resolved<Method extends (...args: never[]) => unknown> = Awaited<ReturnType<Method>>;

/** Every field name a body type has, of each variant of a union. */
type FieldsOf<Body> = Body extends unknown ? keyof Body : never;
/** A body type's fields, listed: a field missing from the list, or one it lacks, does not compile. */
type FieldList<Body> = Record<FieldsOf<Body>, true>;

/**
 * The console's body types (packages/protocol) by the operation that takes them: each must name
 * exactly the fields the route takes (console-operations.ts `body`, which its closed body schema
 * enforces), so the console cannot send a field the route refuses, nor miss one it reads.
 */
const CONSOLE_BODIES: Readonly<Record<string, Readonly<Record<string, true>>>> = {
  'POST /console/api/session': {
    email: true,
    password: true,
    totp: true,
  } satisfies FieldList<ConsoleSignInBody>,
  'POST /console/api/signup': {
    email: true,
    password: true,
  } satisfies FieldList<ConsoleSignUpBody>,
  'POST /console/api/invitations/{token}': {
    password: true,
  } satisfies FieldList<ConsoleInvitationAcceptBody>,
  'POST /console/api/password': {
    current_password: true,
    new_password: true,
  } satisfies FieldList<ConsolePasswordBody>,
  'POST /console/api/totp/enable': { code: true } satisfies FieldList<ConsoleTotpEnableBody>,
  'DELETE /console/api/totp': {
    code: true,
    password: true,
  } satisfies FieldList<ConsoleTotpRemovalBody>,
  'POST /console/api/keys': {
    name: true,
    kind: true,
    models: true,
    expires_at: true,
    idempotency: true,
  } satisfies FieldList<ConsoleKeyCreateBody>,
  'POST /console/api/keys/{id}/rotate': {
    expire_old_in_seconds: true,
  } satisfies FieldList<KeyRotateBody>,
  'POST /console/api/redemptions': { code: true } satisfies FieldList<RedemptionBody>,
  'POST /console/api/tasks/{id}/settle': {
    actual_amount: true,
    price_version: true,
    confirmation: true,
  } satisfies FieldList<SettleBody | H3SettleBody>,
  'POST /console/api/shares': {
    asset_id: true,
    task_id: true,
  } satisfies FieldList<ShareTargetBody>,
  'POST /console/api/topups': { amount: true } satisfies FieldList<OnlineTopUpBody>,
  'POST /console/api/admin/accounts': { email: true } satisfies FieldList<CreateAccountBody>,
  'POST /console/api/admin/accounts/{id}/topups': {
    amount: true,
    reference: true,
  } satisfies FieldList<ManualTopUpBody>,
  'PUT /console/api/admin/accounts/{id}/budget': {
    limit: true,
    window: true,
  } satisfies FieldList<BudgetBody>,
  'PUT /console/api/admin/keys/{id}/budget': {
    limit: true,
    window: true,
  } satisfies FieldList<BudgetBody>,
  'PATCH /console/api/admin/keys/{id}': {
    allowed_ips: true,
  } satisfies FieldList<KeyAllowedIpsBody>,
  'POST /console/api/admin/channels/{id}/disable': {
    reason: true,
  } satisfies FieldList<ChannelSwitchBody>,
  'POST /console/api/admin/channels/{id}/enable': {
    reason: true,
  } satisfies FieldList<ChannelSwitchBody>,
  'POST /console/api/admin/redemption-codes': {
    amount: true,
    expires_at: true,
  } satisfies FieldList<RedemptionCodeBody>,
  'POST /console/api/admin/redemption-codes/batches': {
    amount: true,
    count: true,
    expires_at: true,
  } satisfies FieldList<RedemptionBatchBody>,
  'POST /console/api/admin/invitations': {
    email: true,
    role: true,
    account_id: true,
  } satisfies FieldList<ConsoleInvitationBody>,
  'POST /console/api/admin/shares/{id}/approve': {
    reason: true,
  } satisfies FieldList<ShareDecisionBody>,
  'POST /console/api/admin/shares/{id}/reject': {
    reason: true,
  } satisfies FieldList<ShareDecisionBody>,
  'POST /console/api/admin/requests/{id}/resolve': {
    action: true,
    amount: true,
    reason: true,
  } satisfies FieldList<ResolveRecordBody>,
  'POST /console/api/admin/requests/{id}/review-usage': {
    reason: true,
  } satisfies FieldList<ReviewUsageBody>,
  'POST /console/api/admin/tasks/{id}/resolve': {
    action: true,
    upstream_task_id: true,
    reason: true,
  } satisfies FieldList<ResolveTaskBody>,
};

describe('wire types: the console API answers and takes packages/protocol types', () => {
  it('its views and the services behind its answers return the protocol types (compiled above)', () => {
    expectTypeOf(consoleUserView).returns.toEqualTypeOf<ConsoleUser>();
    expectTypeOf(withOrigin).returns.toEqualTypeOf<ConsoleInvitation>();
    expectTypeOf<ConsoleUsers['invite']>().returns.resolves.toEqualTypeOf<ConsoleInvitation>();
    expectTypeOf<ConsoleUsers['list']>().returns.resolves.toEqualTypeOf<ConsoleUserPage>();
    expectTypeOf<ConsoleUsers['membersOf']>().returns.resolves.toEqualTypeOf<ConsoleUser[]>();
    expectTypeOf(sessionView).returns.toEqualTypeOf<ConsoleSession>();
    expectTypeOf(ownerTaskView).returns.toEqualTypeOf<AccountTask>();
    expectTypeOf<AccountService['topUp']>().returns.resolves.toEqualTypeOf<ToppedUpAccount>();
    expectTypeOf(paymentOrderView).returns.toEqualTypeOf<PaymentOrder>();
    expectTypeOf<PaymentService['status']>().returns.toEqualTypeOf<PaymentStatus>();
    expectTypeOf<PaymentService['startTopUp']>().returns.resolves.toEqualTypeOf<StartedTopUp>();
    expectTypeOf(auditEventView).returns.toEqualTypeOf<AuditEvent>();
    expectTypeOf(checkLedger).returns.resolves.toEqualTypeOf<LedgerReport>();
    // An intersection of the same fields: equal once merged (`branded`).
    expectTypeOf<Resolved<KeyService['rotate']>>().branded.toEqualTypeOf<RotatedApiKey>();
    // Declared `readonly` by their modules (lists of util/list-page.ts, channel and queue views).
    expectTypeOf<Mutual<Resolved<AuditLog['list']>, AuditEventPage>>().toEqualTypeOf<true>();
    expectTypeOf<Mutual<Resolved<AccountListing['list']>, AccountPage>>().toEqualTypeOf<true>();
    expectTypeOf<Mutual<ChannelStatus, Channel>>().toEqualTypeOf<true>();
    expectTypeOf<Mutual<Resolved<typeof unresolvedQueue>, UnresolvedQueue>>().toEqualTypeOf<true>();
    expectTypeOf<
      Mutual<Resolved<ShareService['readForAccount']>, AccountShare>
    >().toEqualTypeOf<true>();
    expectTypeOf<
      Mutual<Resolved<AccountUsageReader['readByKey']>['data'][number] & KeyNames, KeySpendRow>
    >().toEqualTypeOf<true>();
    // Prices: the server's are the configuration's typed fields, the wire's any JSON object.
    expectTypeOf(modelPricesView).returns.toExtend<ModelPrices>();
    expectTypeOf(priceHistoryView).returns.toExtend<ModelPriceHistory>();
    // What each operator action answers, in the console and the admin API alike.
    expectTypeOf<OperatorActions['createAccount']>().returns.resolves.toEqualTypeOf<Account>();
    expectTypeOf<OperatorActions['topUp']>().returns.resolves.toEqualTypeOf<ToppedUpAccount>();
    expectTypeOf<OperatorActions['disableKey']>().returns.resolves.toEqualTypeOf<ApiKey>();
    expectTypeOf<OperatorActions['setAllowedIps']>().returns.resolves.toEqualTypeOf<ApiKey>();
    expectTypeOf<OperatorActions['setKeyBudget']>().returns.resolves.toEqualTypeOf<ApiKey>();
    expectTypeOf<OperatorActions['setAccountBudget']>().returns.resolves.toEqualTypeOf<Account>();
    expectTypeOf<
      Mutual<Resolved<OperatorActions['setChannelDisabled']>, Channel>
    >().toEqualTypeOf<true>();
    expectTypeOf<OperatorActions['invite']>().returns.resolves.toEqualTypeOf<ConsoleInvitation>();
    expectTypeOf<
      OperatorActions['setUserDisabled']
    >().returns.resolves.toEqualTypeOf<ConsoleUser>();
    expectTypeOf<OperatorActions['decideShare']>().returns.resolves.toEqualTypeOf<OperatorShare>();
    expectTypeOf<OperatorActions['resolveTask']>().returns.resolves.toEqualTypeOf<OperatorTask>();
    expectTypeOf<
      OperatorActions['reviewUsage']
    >().returns.resolves.toEqualTypeOf<ProtocolOperatorRecord>();
    expectTypeOf<
      OperatorActions['resolveRequest']
    >().returns.resolves.toEqualTypeOf<RequestRecord>();
    expectTypeOf<OperatorActions['setPrices']>().returns.resolves.toExtend<ModelPrices>();
    // The closed sets of values the store keeps and the wire shows.
    expectTypeOf<StoredConsoleRole>().toEqualTypeOf<ConsoleRole>();
    expectTypeOf<StoredActorKind>().toEqualTypeOf<AuditActorKind>();
    expectTypeOf<StoredOrderState>().toEqualTypeOf<PaymentOrderState>();
    expectTypeOf<BreakerState>().toEqualTypeOf<ChannelBreaker>();
  });

  it('each body type names exactly the fields its route takes, and every route taking fields has one', () => {
    for (const [operation, fields] of Object.entries(CONSOLE_BODIES))
      expect(Object.keys(fields).sort(), operation).toEqual(
        [...(CONSOLE_OPERATIONS[operation]?.body ?? ['(no such operation)'])].sort(),
      );
    // A price change is the price book's object of fields, typed as `PriceFields`.
    const untyped = Object.entries(CONSOLE_OPERATIONS)
      .filter(([, operation]) => (operation.body ?? []).length > 0)
      .map(([name]) => name)
      .filter((name) => !(name in CONSOLE_BODIES));
    expect(untyped).toEqual([]);
  });
});

/** 1 micro-yuan per token, so a request whose usage exceeds its hold waits for funds. */
const awaitingFundsConfig = embeddingsOnlyConfig(1_000_000);

describeEachDialect('wire types: real responses carry exactly their keys, on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  /** An admin call that may fail (the gateway helper's `admin` throws on non-2xx). */
  function operator(client: TestGateway, method: 'GET' | 'POST', url: string, body?: unknown) {
    return client.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      ...(body === undefined ? {} : { payload: body as object }),
    });
  }

  it('a quote, an image task from creation to delivery, its record, the account, its assets and a share', async () => {
    gateway = await startGateway(dialect);
    const client = gateway;
    const { key } = await client.account(100_000_000);
    const body = { model: 'sim-image', prompt: 'a red fox', size: '256x256', n: 2 };

    const quote = await client.call('POST', '/v1/images/quote', { key, body });
    expect(quote.statusCode, quote.body).toBe(200);
    expectQuote('quote', quote.json());
    const closed = await client.call('POST', '/v1/images/quote', {
      key,
      body: { ...body, size: '999x999' },
    });
    expect(closed.json<Quote>().quoted_amount).toBeNull();
    expectQuote('closed quote', closed.json());

    const created = await client.call('POST', '/v1/images/generations', { key, body });
    expect(created.statusCode, created.body).toBe(202);
    expectTask('created task', created.json());
    const task = created.json<Task>();
    const taskPath = `/v1/images/${task.id}`;
    const record = await client.call('GET', `/v1/requests/${task.request_id}`, { key });
    expect(record.json<RequestRecord>().status).toBe('accepted');
    expectRecord('creation record', record.json());
    // The record's result is the 202 body, a task.
    expectTask('creation record result', record.json<RequestRecord>().result);

    const priced = await finishedTask(client, key, taskPath);
    expect(priced).toMatchObject({ status: 'succeeded', billing: { state: 'pending' } });
    expectTask('priced task', priced);
    const settled = await client.call('POST', `${taskPath}/settle`, {
      key,
      body: settleBodyOf(priced),
    });
    expect(settled.statusCode, settled.body).toBe(200);
    const delivered = settled.json<Task>();
    expect(delivered.outputs).toHaveLength(2);
    expectTask('settled task', delivered);
    expectTask('settled task, read', (await client.call('GET', taskPath, { key })).json());
    expectTask(
      'operator task',
      await client.admin('GET', `/admin/v1/tasks/${task.id}`),
      operatorTaskKeys,
    );
    expectRecord(
      'operator creation record',
      await client.admin('GET', `/admin/v1/requests/${task.request_id}`),
      operatorRecordKeys,
    );

    const account = await client.call('GET', '/v1/account', { key });
    expect(account.statusCode).toBe(200);
    expectExactKeys('account', account.json(), callerAccountKeys);

    const list = await client.call('GET', '/v1/assets', { key });
    expect(list.statusCode).toBe(200);
    const assets = expectExactKeys('asset list', list.json(), assetListKeys);
    expect(assets['data']).toHaveLength(2);
    expectEachExact('asset list data', assets['data'], assetKeys);

    const asked = await client.call('POST', '/v1/shares', { key, body: { task_id: task.id } });
    expect(asked.statusCode, asked.body).toBe(202);
    expectExactKeys('asked share', asked.json(), shareKeys);
    const shareId = asked.json<Share>().id;
    const approved = await client.admin('POST', `/admin/v1/shares/${shareId}/approve`, {
      reason: 'a fox',
    });
    expectExactKeys('approved share (operator)', approved, operatorShareKeys);
    expectEachExact('approved share events', approved['events'], shareEventKeys);
    const listed = (await client.admin('GET', '/admin/v1/shares')) as { data: unknown[] };
    expectEachExact('operator share list data', listed.data, operatorShareKeys);
    const owned = await client.call('GET', `/v1/shares/${shareId}`, { key });
    expect(owned.json<Share>().public_url).toMatch(/^\/s\//);
    expectExactKeys('served share (owner)', owned.json(), shareKeys);
  });

  it('an upload answers {"data": Asset}', async () => {
    gateway = await startGateway(dialect);
    const { key } = await gateway.account(0);
    const uploaded = await gateway.upload(key, png(16, 8), 'image/png', {
      'x-tollgate-file-name': 'grey.png',
    });
    expect(uploaded.statusCode, uploaded.body).toBe(201);
    const answer = expectExactKeys('upload answer', uploaded.json(), { data: 'always' });
    expectExactKeys('uploaded asset', answer['data'], assetKeys);
  });

  it('a failed task, then one an operator resolved, and their operator views', async () => {
    gateway = await startGateway(dialect, { config: shortTimeoutsConfig() });
    const client = gateway;
    const { key } = await client.account(100_000_000);
    const failedCreation = await client.call('POST', '/v1/videos', {
      key,
      body: { model: 'sim-video', prompt: 'storm [sim:task=fail]', seconds: 1, size: '320x240' },
    });
    expect(failedCreation.statusCode, failedCreation.body).toBe(202);
    const failed = await finishedTask(client, key, `/v1/videos/${failedCreation.json<Task>().id}`);
    expect(failed).toMatchObject({ status: 'failed', error: { code: expect.any(String) } });
    expectTask('failed task', failed);

    const created = await client.call('POST', '/v1/images/generations', {
      key,
      body: { model: 'sim-image', prompt: 'fog [sim:task=unknown]', size: '256x256' },
    });
    const id = created.json<TaskBody>().id;
    await workUntil(client, async () => {
      const task = (await client.call('GET', `/v1/images/${id}`, { key })).json<TaskBody>();
      return task.status === 'submission_unknown';
    });
    const unknown = await client.admin('GET', `/admin/v1/tasks/${id}`);
    expectTask('unknown task (operator)', unknown, operatorTaskKeys);
    const released = await operator(client, 'POST', `/admin/v1/tasks/${id}/resolve`, {
      action: 'release',
      reason: 'upstream says it never ran',
    });
    expect(released.statusCode, released.body).toBe(200);
    expect(released.json()).toMatchObject({ resolution: { action: 'release' } });
    expectTask('released task (operator)', released.json(), operatorTaskKeys);
    expectTask('released task', (await client.call('GET', `/v1/images/${id}`, { key })).json());
    const listed = (await client.admin('GET', '/admin/v1/tasks')) as { data: unknown[] };
    listed.data.forEach((task, index) =>
      expectTask(`operator task list[${index}]`, task, operatorTaskKeys),
    );
  });

  it('records: awaiting funds, settled by the caller, failed, usage beyond the cap reviewed, resolved by an operator', async () => {
    gateway = await startGateway(dialect, { config: awaitingFundsConfig });
    const client = gateway;
    const input = 'hello world [sim:extra_tokens=50]';
    const reserve = Buffer.byteLength(input) + 8;
    const { accountId, key } = await client.account(reserve);
    const first = await client.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input },
    });
    expect(first.statusCode).toBe(402);
    const requestId = String(first.headers['x-service-request-id']);
    const waiting = await client.call('GET', `/v1/requests/${requestId}`, { key });
    expect(waiting.json()).toMatchObject({ status: 'awaiting_funds', canSettle: true });
    expectRecord('record awaiting funds', waiting.json());

    await client.admin('POST', `/admin/v1/accounts/${accountId}/topups`, {
      amount: 1_000,
      reference: randomUUID(),
    });
    const settled = await client.call('POST', `/v1/requests/${requestId}/settle`, { key });
    expect(settled.statusCode, settled.body).toBe(200);
    expectRecord('settled record (settle answer)', settled.json());
    const read = await client.call('GET', `/v1/requests/${requestId}`, { key });
    expect(read.json()).toMatchObject({ status: 'succeeded', resolution: { action: 'settled' } });
    expectRecord('settled record', read.json());
    expectRecord(
      'settled record (operator)',
      await client.admin('GET', `/admin/v1/requests/${requestId}`),
      operatorRecordKeys,
    );

    const failedCall = await client.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'x [sim:fail=400]' },
    });
    expect(failedCall.statusCode).toBeGreaterThanOrEqual(400);
    const failedId = String(failedCall.headers['x-service-request-id']);
    const failedRecord = await client.call('GET', `/v1/requests/${failedId}`, { key });
    expect(failedRecord.json()).toMatchObject({
      status: 'failed',
      error: { code: expect.any(String) },
    });
    expectRecord('failed record', failedRecord.json());

    const beyondCap = await client.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'hello [sim:extra_tokens=100000]' },
    });
    expect(beyondCap.statusCode, beyondCap.body).toBe(200);
    const flaggedId = String(beyondCap.headers['x-service-request-id']);
    const reviewed = await client.admin('POST', `/admin/v1/requests/${flaggedId}/review-usage`, {
      reason: 'billed at the cap is right',
    });
    expect(reviewed).toMatchObject({
      usage_exceeded_cap: { review: 'billed at the cap is right' },
    });
    expectRecord('reviewed record (operator)', reviewed, operatorRecordKeys);
    const flaggedList = (await client.admin(
      'GET',
      '/admin/v1/requests?usage_exceeded_cap=all',
    )) as {
      data: unknown[];
    };
    expect(flaggedList.data).toHaveLength(1);
    expectRecord('flagged record list[0] (operator)', flaggedList.data[0], operatorRecordKeys);

    const unconfirmed = await finishedRequest(client.services, {
      key,
      hold: 5,
      outcome: unknownOutcome,
    });
    const resolved = await client.admin('POST', `/admin/v1/requests/${unconfirmed}/resolve`, {
      action: 'capture',
      amount: 3,
      reason: 'the upstream did the work',
    });
    expect(resolved).toMatchObject({ status: 'resolved', resolution: { action: 'capture' } });
    expectRecord('operator-resolved record', resolved);
    expectRecord(
      'operator-resolved record, read',
      (await client.call('GET', `/v1/requests/${unconfirmed}`, { key })).json(),
    );
  });
});
