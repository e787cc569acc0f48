import type { H3Task, RequestRecord, Task } from '@tollgate/protocol';
import { TollgateError } from './errors.js';

/*
 * Errors of the SDK's own decisions: nothing was sent that these refuse. Each carries what was
 * read, so the caller can decide (settle by hand, raise the limit, quote again).
 */

/** `requests.settle`: the record's `canSettle` is false, so no settle was sent (spec 4.2). */
export class SettlementNotAllowedError extends TollgateError {
  override readonly name = 'SettlementNotAllowedError';

  constructor(readonly record: RequestRecord) {
    super(`request ${record.id} cannot be settled: it is ${record.status} (canSettle false)`);
  }
}

/** A task's settle: the task read offers no settlement, or its billing values are missing. */
export class TaskNotSettleableError extends TollgateError {
  override readonly name = 'TaskNotSettleableError';

  constructor(
    readonly task: Task | H3Task,
    reason: string,
  ) {
    super(`task ${task.id} cannot be settled: ${reason}`);
  }
}

/**
 * `generate` stopped on a money guard: the quote (`stage: 'quote'`, nothing created) or the
 * task's actual amount (`stage: 'bill'`, the task is kept awaiting settlement, unsettled)
 * is above `maxAmount`. Calling `generate` again with the same input and a higher
 * `maxAmount` settles the same task; nothing is created twice.
 */
export class MaxAmountExceededError extends TollgateError {
  override readonly name = 'MaxAmountExceededError';

  constructor(
    readonly stage: 'quote' | 'bill',
    readonly amount: number,
    readonly maxAmount: number,
    readonly task?: Task | H3Task,
  ) {
    super(
      stage === 'quote'
        ? `quoted ${amount} micro-yuan, above maxAmount ${maxAmount}: nothing was created`
        : `task ${task?.id ?? '?'} costs ${amount} micro-yuan, above maxAmount ${maxAmount}: not settled`,
    );
  }
}

/** `generate`: the quote has `closed_reasons` or no confirmed amount; nothing was created. */
export class QuoteClosedError extends TollgateError {
  override readonly name = 'QuoteClosedError';

  constructor(readonly closedReasons: readonly string[]) {
    super(
      closedReasons.length > 0
        ? `the combination is not open: ${closedReasons.join('; ')}`
        : 'the quote has no confirmed amount',
    );
  }
}

/**
 * `generate`: the task failed (or succeeded with nothing delivered). Its billing state decides
 * the cost (spec 2.6): `task.billing.settlement_pending` true means the upstream billed the
 * failure and the task awaits a settlement the SDK did not send.
 */
export class TaskFailedError extends TollgateError {
  override readonly name = 'TaskFailedError';

  constructor(readonly task: Task | H3Task) {
    super(
      `task ${task.id} ${task.status}` +
        (task.error === undefined ? '' : `: ${task.error.code} ${task.error.message}`) +
        ` (billing ${task.billing.state})`,
    );
  }
}

/** `generate` or `requests.recover`: still not final after the wait; read again later. */
export class WaitTimeoutError extends TollgateError {
  override readonly name = 'WaitTimeoutError';

  constructor(
    readonly lastRead: Task | H3Task | RequestRecord,
    waitedMs: number,
  ) {
    super(`${lastRead.id} is still ${lastRead.status} after ${waitedMs} ms`);
  }
}
