import { sql, type RawBuilder } from 'kysely';
import type { RequestTable } from '../store/schema.js';

/** A column's PostgreSQL type, for values it cannot infer (the rows of a `values` list). */
type SqlType = 'text' | 'bigint' | 'integer';

/**
 * The columns finishing a request writes into its record, with their types: the one list that
 * both writers follow, the single compare-and-set (request-store.ts) and the batched captures'
 * multi-row update (batched-capture.ts), and that every outcome fills (`RecordedOutcomeColumns`,
 * record-outcome.ts). A column added here is required of every outcome and written by both
 * paths. `id` names the record; the others are set. The order is the SQL's order.
 */
export const OUTCOME_COLUMNS = {
  id: 'text',
  upstream_request_id: 'text',
  updated_at: 'bigint',
  transcript: 'text',
  status: 'text',
  http_status: 'integer',
  response_body: 'text',
  error_code: 'text',
  usage: 'text',
  amount: 'bigint',
  pricing_rule: 'text',
  usage_flag: 'text',
  channel: 'text',
  channel_attempts: 'text',
  channel_cost: 'bigint',
  line_items: 'text',
} as const satisfies { readonly [Column in keyof RequestTable]?: SqlType };

export type OutcomeColumn = keyof typeof OUTCOME_COLUMNS;

/** What finishing a request writes into its record (every column given, `null` for none). */
export type RecordedOutcomeColumns = Pick<RequestTable, OutcomeColumn>;

/** Every outcome column, `id` first. */
export const outcomeColumns = Object.keys(OUTCOME_COLUMNS) as readonly OutcomeColumn[];

/** The columns an outcome sets: all but the record's `id`. */
export const setOutcomeColumns = outcomeColumns.filter(
  (column): column is Exclude<OutcomeColumn, 'id'> => column !== 'id',
);

/** Each outcome column's type, in `outcomeColumns`' order. */
const outcomeTypes = outcomeColumns.map((column) => sql.raw(OUTCOME_COLUMNS[column]));

/** A record's outcome, its values in `outcomeColumns`' order (the columns of a `values` list). */
export function outcomeValues(record: Partial<RecordedOutcomeColumns>): unknown[] {
  return outcomeColumns.map((column) => record[column] ?? null);
}

/**
 * One record's outcome (`outcomeValues`) as a row of a `values` list, each value cast to its
 * column's type: PostgreSQL cannot infer the types of a `values` list's parameters.
 */
export function typedOutcomeRow(values: readonly unknown[]): RawBuilder<unknown> {
  return sql`(${sql.join(values.map((value, index) => sql`cast(${value} as ${outcomeTypes[index]!})`))})`;
}
