import { modelPricesView } from '../billing/price-view.js';
import { notFound } from '../errors/api-error.js';
import type { AccountService } from '../accounts/account-service.js';
import { RedemptionBatches } from '../accounts/redemption-batches.js';
import type { KeyService } from '../auth/key-service.js';
import type { PriceBook } from '../billing/price-book.js';
import type { BudgetService } from './budget-service.js';
import type { ConsoleUsers } from '../users/console-users.js';
import type { RequestService } from '../requests/request-service.js';
import type { SettlementService } from '../requests/settlement-service.js';
import type { UsageReviewService } from '../requests/usage-review-service.js';
import type { ChannelRouter } from '../routing/channel-router.js';
import type { TaskOperations } from '../tasks/task-operations.js';
import type { AuditLog } from '../audit/audit-log.js';
import { shareServiceOf, type ShareService } from '../shares/share-service.js';
import type { AccessChange } from '../users/console-user-access.js';
import type { AuditActor } from '../audit/audit-log.js';
import type {
  BudgetInput,
  ChannelSwitchInput,
  CreateAccountInput,
  CreateKeyInput,
  InvitationInput,
  KeyUpdateInput,
  RedeemInput,
  RedemptionBatchInput,
  RedemptionCodeInput,
  ResolveRequestInput,
  ResolveTaskInput,
  ReviewUsageInput,
  RotateKeyInput,
  ShareDecisionInput,
  TopUpInput,
} from './operator-inputs.js';

/**
 * The services an operator action calls, and what the share service it builds needs: named here,
 * not taken from the HTTP layer's bag (`AppDeps` satisfies it).
 */
export type OperatorActionDeps = Parameters<typeof shareServiceOf>[0] & {
  readonly accounts: AccountService;
  readonly audit: AuditLog;
  readonly budgets: BudgetService;
  readonly channels: ChannelRouter;
  readonly consoleUsers: ConsoleUsers;
  readonly keys: KeyService;
  readonly prices: PriceBook;
  readonly requests: RequestService;
  readonly settlements: SettlementService;
  readonly taskOperations: TaskOperations;
  readonly usageReviews: UsageReviewService;
};

/**
 * A field the service checks, as the audit row keeps it: text (a reason trimmed), else null. The
 * row is written only after the service took the input, so it never records a refused value.
 */
const textOf = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const reasonOf = (value: unknown): string | null => textOf(value)?.trim() ?? null;

/**
 * Every operator action that changes something, audited (docs/audit.md). The admin API and the
 * console's operator pages both call these, so an action is audited the same way whichever door
 * it came through, and the rule that does it is the service's, written once. Actions that move
 * money hand their audit row to the service, which writes it in the movement's transaction; the
 * others write it after the service succeeded (a refused action writes nothing). Each action takes
 * its input already parsed with its schema (operator-inputs.ts) by the door it came through.
 */
export class OperatorActions {
  private readonly shares: ShareService;
  private readonly batches: RedemptionBatches;

  constructor(private readonly deps: OperatorActionDeps) {
    this.shares = shareServiceOf(deps);
    this.batches = new RedemptionBatches(deps.store.db, deps.clock);
  }

  async createAccount(actor: AuditActor, input: CreateAccountInput) {
    const account = await this.deps.accounts.create({ email: input.email });
    await this.deps.audit.record(actor, {
      action: 'account.create',
      targetId: account.id,
      accountId: account.id,
      detail: { email: account.email },
    });
    return account;
  }

  topUp(actor: AuditActor, accountId: string, input: TopUpInput) {
    const reference = textOf(input.reference);
    return this.deps.accounts.topUp(
      accountId,
      { amount: input.amount, reference: input.reference },
      this.deps.audit.within(actor, {
        action: 'account.top_up',
        targetId: accountId,
        accountId,
        reason: reference,
        detail: { reference },
      }),
    );
  }

  redeem(actor: AuditActor, accountId: string, input: RedeemInput) {
    return this.deps.accounts.redeem(
      accountId,
      { code: input.code },
      this.deps.audit.within(actor, { action: 'account.redeem', targetId: accountId, accountId }),
    );
  }

  async createRedemptionCode(actor: AuditActor, input: RedemptionCodeInput) {
    const code = await this.deps.accounts.createRedemptionCode({
      amount: input.amount,
      expires_at: input.expires_at,
    });
    // The code itself is a bearer secret: the row names it by id only.
    await this.deps.audit.record(actor, {
      action: 'redemption_code.create',
      targetId: code.id,
      amount: code.amount,
      detail: { expires_at: code.expires_at },
    });
    return code;
  }

  /** A batch: one audit row for the whole batch, its amount the batch's total value. */
  async createRedemptionCodes(actor: AuditActor, input: RedemptionBatchInput) {
    const { batch_id: batchId, codes } = await this.deps.accounts.createRedemptionBatch({
      amount: input.amount,
      count: input.count,
      expires_at: input.expires_at,
    });
    const first = codes[0];
    await this.deps.audit.record(actor, {
      action: 'redemption_code.create_batch',
      targetId: first?.id ?? null,
      amount: codes.reduce((total, code) => total + code.amount, 0),
      detail: {
        count: codes.length,
        each: first?.amount,
        expires_at: first?.expires_at ?? null,
        batch_id: batchId,
      },
    });
    return codes;
  }

  /**
   * Voids a batch's unredeemed codes (docs/console.md, "Redemption codes"); redeemed ones stay
   * redeemed. Idempotent: a call that voided nothing (done before, or every code redeemed)
   * writes no audit row; one that did writes it in the void's transaction, its amount the value
   * of the codes voided (no money moves: they were never credited).
   */
  voidRedemptionBatch(actor: AuditActor, batchId: string) {
    return this.batches.void(batchId, async (trx, voided) => {
      if (voided.count === 0) return;
      await this.deps.audit.within(actor, {
        action: 'redemption_code.void_batch',
        targetId: batchId,
        amount: voided.amount,
        detail: { voided: voided.count },
      })(trx);
    });
  }

  async createKey(actor: AuditActor, accountId: string, input: CreateKeyInput) {
    const key = await this.deps.keys.create(accountId, input);
    await this.deps.audit.record(actor, {
      action: 'key.create',
      targetId: key.id,
      accountId,
      detail: { kind: key.kind, name: key.name, idempotency: key.idempotency },
    });
    return key;
  }

  async disableKey(actor: AuditActor, keyId: string, accountId: string | null = null) {
    const key = await this.deps.keys.disable(keyId);
    await this.deps.audit.record(actor, { action: 'key.disable', targetId: keyId, accountId });
    return key;
  }

  async rotateKey(actor: AuditActor, keyId: string, input: RotateKeyInput) {
    const rotated = await this.deps.keys.rotate(keyId, {
      expire_old_in_seconds: input.expire_old_in_seconds,
    });
    await this.deps.audit.record(actor, {
      action: 'key.rotate',
      targetId: keyId,
      detail: { new_key_id: rotated.id },
    });
    return rotated;
  }

  /** A key's source-address allowlist set (a list) or cleared (`null`); the key service checks it. */
  async setAllowedIps(actor: AuditActor, keyId: string, input: KeyUpdateInput) {
    const key = await this.deps.keys.update(keyId, { allowed_ips: input.allowed_ips });
    await this.deps.audit.record(actor, {
      action: 'key.set_allowed_ips',
      targetId: keyId,
      accountId: key.account_id,
      detail: { allowed_ips: key.allowed_ips },
    });
    return key;
  }

  async setKeyBudget(actor: AuditActor, keyId: string, input: BudgetInput) {
    const key = await this.deps.budgets.setForKey(keyId, input);
    await this.deps.audit.record(actor, {
      action: 'key.set_budget',
      targetId: keyId,
      accountId: key.account_id,
      detail: { limit: input.limit, window: input.window },
    });
    return key;
  }

  async removeKeyBudget(actor: AuditActor, keyId: string) {
    const key = await this.deps.budgets.removeForKey(keyId);
    await this.deps.audit.record(actor, {
      action: 'key.remove_budget',
      targetId: keyId,
      accountId: key.account_id,
    });
    return key;
  }

  async setAccountBudget(actor: AuditActor, accountId: string, input: BudgetInput) {
    const account = await this.deps.budgets.setForAccount(accountId, input);
    await this.deps.audit.record(actor, {
      action: 'account.set_budget',
      targetId: accountId,
      accountId,
      detail: { limit: input.limit, window: input.window },
    });
    return account;
  }

  async removeAccountBudget(actor: AuditActor, accountId: string) {
    const account = await this.deps.budgets.removeForAccount(accountId);
    await this.deps.audit.record(actor, {
      action: 'account.remove_budget',
      targetId: accountId,
      accountId,
    });
    return account;
  }

  /**
   * A channel disabled or enabled by hand (docs/routing.md), with an optional reason of at most
   * 500 characters (`channelSwitchInput`); every instance skips a disabled channel within the
   * disabled list's refresh.
   */
  async setChannelDisabled(
    actor: AuditActor,
    channelId: string,
    disabled: boolean,
    input: ChannelSwitchInput,
  ) {
    const status = await this.deps.channels.setDisabled(channelId, disabled, input.reason ?? null);
    if (status === undefined) throw notFound('channel');
    await this.deps.audit.record(actor, {
      action: disabled ? 'channel.disable' : 'channel.enable',
      targetId: channelId,
      reason: reasonOf(input.reason),
    });
    return status;
  }

  /**
   * The body is the price book's to parse: which price fields a model takes follows its families
   * (config/price-rules.ts), and an unknown model is a 404 before the body is read.
   */
  async setPrices(actor: AuditActor, model: string, body: unknown) {
    const entry = await this.deps.prices.set(model, body);
    await this.deps.audit.record(actor, {
      action: 'prices.set',
      targetId: model,
      detail: { price_version: entry.priceVersion },
    });
    return modelPricesView(entry);
  }

  async resolveRequest(actor: AuditActor, requestId: string, input: ResolveRequestInput) {
    const row = await this.deps.requests.records.byId(requestId);
    return this.deps.settlements.resolve(
      requestId,
      { action: input.action, amount: input.amount, reason: input.reason },
      this.deps.audit.within(actor, {
        action: `request.resolve_${String(input.action)}`,
        targetId: requestId,
        accountId: row?.account_id ?? null,
        reason: reasonOf(input.reason),
      }),
    );
  }

  async reviewUsage(actor: AuditActor, requestId: string, input: ReviewUsageInput) {
    const reviewed = await this.deps.usageReviews.review(requestId, { reason: input.reason });
    await this.deps.audit.record(actor, {
      action: 'request.review_usage',
      targetId: requestId,
      accountId: reviewed.account_id,
      reason: reasonOf(input.reason),
    });
    return reviewed;
  }

  async resolveTask(actor: AuditActor, taskId: string, input: ResolveTaskInput) {
    const task = await this.deps.taskOperations.show(taskId);
    const upstreamTaskId = textOf(input.upstream_task_id);
    return this.deps.taskOperations.resolve(
      taskId,
      {
        action: input.action,
        upstream_task_id: input.upstream_task_id,
        reason: input.reason,
      },
      this.deps.audit.within(actor, {
        action: `task.resolve_${String(input.action)}`,
        targetId: taskId,
        accountId: task.account_id,
        reason: reasonOf(input.reason),
        ...(upstreamTaskId === null ? {} : { detail: { upstream_task_id: upstreamTaskId } }),
      }),
    );
  }

  async decideShare(
    actor: AuditActor,
    shareId: string,
    decision: 'approve' | 'reject' | 'revoke',
    input: ShareDecisionInput,
  ) {
    const share = await this.shares[decision](shareId, { reason: input.reason });
    await this.deps.audit.record(actor, {
      action: `share.${decision}`,
      targetId: shareId,
      accountId: share.account_id,
      reason: reasonOf(input.reason),
    });
    return share;
  }

  async invite(actor: AuditActor, input: InvitationInput) {
    const invitation = await this.deps.consoleUsers.invite({
      email: input.email,
      role: input.role,
      account_id: input.account_id,
    });
    // The link is a bearer secret: the row names the user, never the token.
    await this.deps.audit.record(actor, {
      action: 'console_user.invite',
      targetId: invitation.user.id,
      accountId: invitation.user.account_id,
      detail: { email: invitation.user.email, role: invitation.user.role },
    });
    return invitation;
  }

  /**
   * A console user disabled or enabled again (docs/console.md, "Taking access away"). The row
   * names the user by id, email and role; a call that changed nothing (already in that state)
   * writes none. `rules` are the door's: the console passes the acting operator (who may not
   * disable themselves there), the CLI's `--force` allows disabling the last operator.
   */
  async setUserDisabled(
    actor: AuditActor,
    userId: string,
    disabled: boolean,
    rules: Pick<AccessChange, 'actingUserId' | 'allowLastOperator'> = {},
  ) {
    const { user, changed } = await this.deps.consoleUsers.setDisabled({
      userId,
      disabled,
      ...rules,
    });
    if (changed)
      await this.deps.audit.record(actor, {
        action: disabled ? 'console_user.disable' : 'console_user.enable',
        targetId: user.id,
        accountId: user.account_id,
        detail: { email: user.email, role: user.role },
      });
    return user;
  }
}
