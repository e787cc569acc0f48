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

/** True for a positive safe integer: the only shape an amount takes on the wire. */
export function isPositiveAmount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}
