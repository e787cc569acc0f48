import type { Compilable, Kysely, QueryResult, RootOperationNode } from 'kysely';
import type { Database } from './schema.js';
import { leaseOfTransaction } from './sqlite-group-commit.js';

/** Stands for a value in a query template; replaced by the caller's value at each run. */
class Slot {
  constructor(readonly name: string) {}
}

/** What a template's builder receives: one stand-in per value, typed as the value itself. */
export type Slots<Values> = { readonly [Name in keyof Values]: Values[Name] };

interface Template {
  readonly sql: string;
  readonly query: RootOperationNode;
  /** Per SQL parameter: the name of the caller's value, or a constant of the query itself. */
  readonly parameters: readonly ({ readonly slot: string } | { readonly constant: unknown })[];
}

/**
 * The SQL of every compiled template, with a statement name. PostgreSQL connections prepare these
 * by name, once per connection (database.ts), so the server skips parsing and planning them on
 * each run. Append-only, so a text keeps its name for the life of the process.
 */
const statementNames = new Map<string, string>();

/**
 * Names `sql` for PostgreSQL's connections to prepare once and reuse, like a prepared query's
 * (a statement built per call whose text repeats: requests/one-statement.ts). Names are never
 * given back: name only a bounded set of texts.
 */
export function prepareByName(sql: string): void {
  if (!statementNames.has(sql)) statementNames.set(sql, `tollgate_${statementNames.size + 1}`);
}

/** The statement name of a prepared query's SQL, or `undefined` for any other SQL. */
export function statementNameOf(sql: string): string | undefined {
  return statementNames.get(sql);
}

/** A query that runs with new values; `executor` is the database or a transaction. */
export type PreparedQuery<Values, Row> = (
  executor: Kysely<Database>,
  values: Values,
) => Promise<QueryResult<Row>>;

/**
 * A hot-path query built and compiled by Kysely once per database (dialect), then run with new
 * values: building and compiling a query tree costs more than SQLite takes to run the statement
 * (bench/RESULTS.md). `build` describes the query with `slots` in place of the values; the
 * compiled SQL (and on SQLite the prepared statement, cached by its text) is reused. Every value
 * must be given (`null` where SQL NULL is meant): unlike Kysely's builders, an `undefined`
 * value is not left out, it is an error; so is a value the query does not use.
 */
export function preparedQuery<Values extends object, Row = never>(
  build: (db: Kysely<Database>, slots: Slots<Values>) => Compilable<Row>,
): PreparedQuery<Values, Row> {
  const templates = new WeakMap<object, Template>();
  const slots = new Proxy({}, { get: (_target, name) => new Slot(String(name)) }) as Slots<Values>;
  return async (executor, values) => {
    const adapter = executor.getExecutor().adapter;
    let template = templates.get(adapter);
    if (template === undefined) {
      const compiled = build(executor, slots).compile();
      template = {
        sql: compiled.sql,
        query: compiled.query,
        parameters: compiled.parameters.map((parameter) =>
          parameter instanceof Slot ? { slot: parameter.name } : { constant: parameter },
        ),
      };
      // Name every value in the builder (`slot.x`): spreading `slots` yields nothing.
      const used = new Set(
        template.parameters.map((parameter) => 'slot' in parameter && parameter.slot),
      );
      const unused = Object.keys(values).filter((name) => !used.has(name));
      if (unused.length > 0) throw new Error(`prepared query does not use ${unused.join(', ')}`);
      templates.set(adapter, template);
      prepareByName(template.sql);
    }
    const parameters = template.parameters.map((parameter) => {
      if (!('slot' in parameter)) return parameter.constant;
      const value = (values as Record<string, unknown>)[parameter.slot];
      if (value === undefined) throw new Error(`prepared query: no value for ${parameter.slot}`);
      return value;
    });
    const compiled = {
      sql: template.sql,
      query: template.query,
      queryId: { queryId: 'prepared' },
      parameters,
    };
    // In a SQLite transaction, straight to its connection (sqlite-group-commit.ts says why).
    let lease = leaseOfTransaction(executor);
    if (lease instanceof Promise) lease = await lease;
    return lease === null
      ? executor.executeQuery<Row>(compiled)
      : lease.executeQuery<Row>(compiled);
  };
}
