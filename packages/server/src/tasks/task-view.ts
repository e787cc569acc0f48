import type { TaskBilling, TaskQuote, TaskSettlement } from '@tollgate/protocol';
import type { TaskRow } from './task-store.js';
import { actualLineItemsOf, quotedLineItemsOf, resolutionOf } from './task-stored-json.js';

export type { TaskOutput } from './task-stored-json.js';

/**
 * The parts of a task's view that every family shows alike (its own view adds the rest:
 * task-family.ts `view`). Stored JSON is parsed with its schema (task-stored-json.ts).
 */

/**
 * Where and how to settle, and until when: present only while the task awaits settlement
 * (billing `pending`), for every family alike. `path` is the family's path of the task.
 */
export function taskSettlementOf(row: TaskRow, path: string): TaskSettlement | undefined {
  if (row.billing_state !== 'pending') return undefined;
  // Every move to `pending` fixes the window (task-steps.ts), and migration 017 gave one to the
  // tasks that were pending before: a pending task without one is a bug, not a state.
  if (row.settlement_expires_at === null)
    throw new Error(`task ${row.id} awaits settlement without a settlement window`);
  return {
    url: `${path}/settle`,
    method: 'POST',
    expires_at: new Date(row.settlement_expires_at).toISOString(),
  };
}

/** The quote a task was created with, as it was held. */
export function taskQuoteOf(row: TaskRow): TaskQuote {
  return {
    quoted_amount: row.quoted_amount,
    price_version: row.price_version,
    currency: 'CNY_MICRO' as const,
    line_items: quotedLineItemsOf(row),
  };
}

/** The billing object of spec 2.5, the same for every task family. */
export function taskBillingOf(row: TaskRow): TaskBilling {
  const lineItems = actualLineItemsOf(row);
  return {
    settlement_pending: row.billing_state === 'pending',
    ...(row.actual_amount === null ? {} : { actual_amount: row.actual_amount }),
    price_version: row.price_version,
    reserved_amount: row.quoted_amount,
    settled_amount: row.settled_amount ?? 0,
    state: row.billing_state,
    currency: 'CNY_MICRO' as const,
    ...(lineItems === null ? {} : { line_items: lineItems }),
    ...(row.pricing_rule === null ? {} : { pricing_rule: row.pricing_rule }),
  };
}

/** The parts every family shows alike once the task moved on: when it ended, why it failed, how an operator resolved it. */
export function taskEndingOf(row: TaskRow) {
  const resolution = resolutionOf(row);
  return {
    ...(row.status === 'failed' && row.error_code !== null
      ? { error: { code: row.error_code, message: row.error_message ?? '' } }
      : {}),
    ...(resolution === null ? {} : { resolution }),
  };
}
