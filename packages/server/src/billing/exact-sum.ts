import { sql, type RawBuilder } from 'kysely';

/**
 * A SQL sum of micro-yuan, exact on both dialects: cast to text in SQL (`pg` hands sums over as
 * strings anyway; better-sqlite3 would round an integer past 2^53 to a lossy number), read back
 * as a safe integer. An empty sum is 0. `expression` must be SQL text without user input.
 */
export function exactSum(expression: string): RawBuilder<string> {
  return sql<string>`cast(coalesce(sum(${sql.raw(expression)}), 0) as text)`;
}

/**
 * Reads an exact sum back. Amounts on the wire are safe integers; a sum beyond 2^53 micro-yuan
 * (9 billion yuan) cannot be shown exactly as a JSON number, so it throws (a 500) rather than
 * rounding money.
 */
export function safeAmount(text: string): number {
  const value = BigInt(text);
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER))
    throw new RangeError(`a sum of ${text} micro-yuan is beyond a safe integer`);
  return Number(value);
}
