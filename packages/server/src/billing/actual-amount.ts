import type { LineItem } from '@tollgate/protocol';

/**
 * What a task's delivery (or a failure its upstream billed) costs: the contract between the task
 * kernel, which captures or releases the hold on it, and each family's pricing rules, which
 * compute it (billing/task-pricing.ts, billing/h3-pricing.ts). Its own module so that the kernel
 * reads no family's rules (test/tasks/kernel-imports.test.ts).
 */
export interface ActualAmount {
  /** 0 when nothing was delivered or billed (the caller releases the hold); else the capture. */
  readonly amount: number;
  readonly lineItems: LineItem[];
  /** The computation with its numbers, for the record and the task's billing. */
  readonly rule: string;
  /** The upstream reported more than was asked; only what was asked is billed. */
  readonly reportExceededRequest: boolean;
}
