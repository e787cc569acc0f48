import { z } from 'zod';

/**
 * What each operator action takes (operator-actions.ts), one schema per action input, parsed
 * where the input arrives (the admin API's routes, the console's operator routes) with
 * `parseInput`, so an action only ever sees a parsed value of its own type.
 *
 * A field the action hands to another service unread is `given`: what it must be is that
 * service's rule, written there once with its message (the CLI and other doors call those
 * services directly), so it is not repeated here. A rule only the operator's door has is said
 * here. Each schema is closed: the routes make their body schemas of these fields
 * (`adminBodyOf`), so a field an action does not take is a 400 naming it before anything runs.
 */
const given = z.unknown().optional();

export const createAccountInput = z.strictObject({ email: given });
export type CreateAccountInput = z.output<typeof createAccountInput>;

export const topUpInput = z.strictObject({ amount: given, reference: given });
export type TopUpInput = z.output<typeof topUpInput>;

export const redeemInput = z.strictObject({ code: given });
export type RedeemInput = z.output<typeof redeemInput>;

export const redemptionCodeInput = z.strictObject({ amount: given, expires_at: given });
export type RedemptionCodeInput = z.output<typeof redemptionCodeInput>;

export const redemptionBatchInput = z.strictObject({
  amount: given,
  count: given,
  expires_at: given,
});
export type RedemptionBatchInput = z.output<typeof redemptionBatchInput>;

export const createKeyInput = z.strictObject({
  kind: given,
  models: given,
  expires_at: given,
  name: given,
  allowed_ips: given,
  idempotency: given,
});
export type CreateKeyInput = z.output<typeof createKeyInput>;

/** `PATCH` a key: its source-address allowlist, a list or `null` (the key service checks it). */
export const keyUpdateInput = z.strictObject({ allowed_ips: given });
export type KeyUpdateInput = z.output<typeof keyUpdateInput>;

export const rotateKeyInput = z.strictObject({ expire_old_in_seconds: given });
export type RotateKeyInput = z.output<typeof rotateKeyInput>;

/** A key's or an account's budget: the same input for both (BudgetService's rule). */
export const budgetInput = z.strictObject({ limit: given, window: given });
export type BudgetInput = z.output<typeof budgetInput>;

const CHANNEL_REASON = 'must be a string of at most 500 characters';

/** A channel disabled or enabled by hand, with an optional reason (the operator's own rule). */
export const channelSwitchInput = z.strictObject({
  reason: z.string({ error: CHANNEL_REASON }).max(500, { error: CHANNEL_REASON }).optional(),
});
export type ChannelSwitchInput = z.output<typeof channelSwitchInput>;

/**
 * Which fields go with which action (capture takes an amount, release none) and in which order
 * they are checked is SettlementService's rule, so the action is not a discriminated union here.
 */
export const resolveRequestInput = z.strictObject({ action: given, amount: given, reason: given });
export type ResolveRequestInput = z.output<typeof resolveRequestInput>;

export const reviewUsageInput = z.strictObject({ reason: given });
export type ReviewUsageInput = z.output<typeof reviewUsageInput>;

/** As a record's: which fields go with `release` and `attach` is TaskOperations' rule. */
export const resolveTaskInput = z.strictObject({
  action: given,
  upstream_task_id: given,
  reason: given,
});
export type ResolveTaskInput = z.output<typeof resolveTaskInput>;

/** Approve, reject or revoke a share: whether the reason is required is ShareService's rule. */
export const shareDecisionInput = z.strictObject({ reason: given });
export type ShareDecisionInput = z.output<typeof shareDecisionInput>;

export const invitationInput = z.strictObject({ email: given, role: given, account_id: given });
export type InvitationInput = z.output<typeof invitationInput>;
