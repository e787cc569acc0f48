import type { BudgetRefusal } from '../budgets/budget-ledger.js';
import { ApiError } from '../errors/api-error.js';

/** The errors a request record's life can answer with, shared by claim, finish and settlement. */

export function insufficientFunds(amount: number): ApiError {
  return new ApiError(
    'INSUFFICIENT_FUNDS',
    `insufficient funds: this request needs ${amount} micro-yuan available and nothing was done or recorded; top up, then send it again (the same Idempotency-Key works, and so does a new one)`,
  );
}

/**
 * A hold that would cross a budget (docs/errors.md): 402 `INSUFFICIENT_FUNDS`, as for a short
 * balance, with a message naming the budget, what it still admits and when it resets.
 */
export function overBudget(amount: number, refusal: BudgetRefusal): ApiError {
  const owner = refusal.scope === 'key' ? "this API key's" : "the account's";
  const resets =
    refusal.resetsAt === null
      ? 'it does not reset (a total budget): an operator may raise it'
      : `it resets at ${new Date(refusal.resetsAt).toISOString()}`;
  return new ApiError(
    'INSUFFICIENT_FUNDS',
    `over budget: this request needs ${amount} micro-yuan but ${owner} ${refusal.window} budget of ${refusal.limit} micro-yuan has ${refusal.remaining} left; ${resets}. Nothing was done or recorded; send it again then (the same Idempotency-Key works)`,
  );
}

export function awaitingFundsError(requestId: string, amount: number): ApiError {
  return new ApiError(
    'INSUFFICIENT_FUNDS',
    `the result is ready but costs ${amount} micro-yuan more than is available; top up, then POST /v1/requests/${requestId}/settle (it will not regenerate)`,
  );
}

export const recordNotFound = () => new ApiError('NOT_FOUND', 'no such request');

/**
 * The same idempotency key already names another request of this key (another body, another
 * path): refused before anything else is judged, so the answer never depends on the new body.
 */
export function idempotencyConflict(originalRequestId: string): ApiError {
  return new ApiError(
    'IDEMPOTENCY_CONFLICT',
    `this Idempotency-Key was used for a different request (${originalRequestId}); use a new key for a new request`,
    'Idempotency-Key',
  );
}
