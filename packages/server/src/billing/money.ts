import { MAX_BALANCE_MICRO_YUAN, MAX_MOVEMENT_MICRO_YUAN } from '@tollgate/protocol';
import { z } from 'zod';
import { invalidInput } from '../errors/api-error.js';
import { requiredAs } from '../errors/input-schema.js';

export { MAX_BALANCE_MICRO_YUAN, MAX_MOVEMENT_MICRO_YUAN };

/**
 * Money arithmetic. Amounts are integer micro-yuan. A line item is `units × price-per-million`
 * divided by one million and rounded UP to the next micro-yuan (we never give away a fraction,
 * and never charge more than one micro-yuan above the exact value). BigInt keeps the product
 * exact far beyond 2^53.
 */
const MILLION = 1_000_000n;

export function costPerMillion(units: number, pricePerMillion: number): number {
  assertSafeNonNegative(units, 'units');
  assertSafeNonNegative(pricePerMillion, 'price');
  const product = BigInt(units) * BigInt(pricePerMillion);
  const cost = (product + MILLION - 1n) / MILLION;
  if (cost > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError('amount exceeds a safe integer');
  return Number(cost);
}

export function assertSafeNonNegative(value: number, name: string): void {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new RangeError(`${name} must be a non-negative safe integer, got ${value}`);
}

const NOT_AN_AMOUNT = 'must be a positive integer of micro-yuan';

/**
 * An amount one movement may move (a top-up, a redemption code, an online top-up, an operator
 * capture): a positive safe integer of at most MAX_MOVEMENT_MICRO_YUAN, required. The field of
 * the services' input schemas (accounts/account-service.ts, payments/payment-service.ts).
 */
export const movementAmount = requiredAs(
  NOT_AN_AMOUNT,
  z
    .int({ error: NOT_AN_AMOUNT })
    .positive({ error: NOT_AN_AMOUNT })
    .max(MAX_MOVEMENT_MICRO_YUAN, {
      error: `must be at most ${MAX_MOVEMENT_MICRO_YUAN} micro-yuan (10 million yuan) per movement`,
    }),
);

/** `movementAmount` for one value outside an input schema: anything else is the 400 naming `field`. */
export function parseMovementAmount(value: unknown, field: string): number {
  const parsed = movementAmount.safeParse(value);
  if (!parsed.success) throw invalidInput(field, parsed.error.issues[0]?.message ?? NOT_AN_AMOUNT);
  return parsed.data;
}

/**
 * The largest balance a credit of `amount` may be added to without passing MAX_BALANCE_MICRO_YUAN
 * (computed exactly here, so the database never forms a sum past the bound).
 */
export function maxBalanceBeforeCredit(amount: number): number {
  return MAX_BALANCE_MICRO_YUAN - amount;
}

/** The 400 for a credit that would take a balance above MAX_BALANCE_MICRO_YUAN. */
export function balanceLimitError(field: string, amount: number, balance: number) {
  return invalidInput(
    field,
    `crediting ${amount} would bring the balance (${balance}) above the maximum balance of ${MAX_BALANCE_MICRO_YUAN} micro-yuan (1 billion yuan); nothing was credited`,
  );
}
