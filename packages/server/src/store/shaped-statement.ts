import type { CompiledQuery, Kysely, RawBuilder, RootOperationNode } from 'kysely';
import type { Database } from './schema.js';

/** Stands for one plain value of a shaped statement's input: its place among them, in order. */
class Leaf {
  constructor(readonly index: number) {}
}

interface Template {
  readonly sql: string;
  readonly query: RootOperationNode;
  /** Per SQL parameter: the index of the input's value, or a constant of the statement itself. */
  readonly parameters: readonly ({ readonly leaf: number } | { readonly constant: unknown })[];
}

/** A statement compiled for `values`, ready for `executeQuery`; `build` is its builder. */
export type ShapedStatement<Values> = ((db: Kysely<Database>, values: Values) => CompiledQuery) & {
  readonly build: (db: Kysely<Database>, values: Values) => RawBuilder<unknown>;
};

/** At most this many shapes are kept per statement and executor (a bounded cache). */
const MAX_SHAPES = 256;

/** At most this many shapes are told apart per statement; beyond, a call is compiled uncached. */
const MAX_SHAPE_NODES = 20_000;

/**
 * A statement whose SQL text depends only on the shape of its input (how many rows, which keys
 * are given), built and compiled by Kysely once per shape and then filled with the input's
 * values: the batched money statements (requests/one-statement.ts) are rebuilt for every batch
 * otherwise, and building and compiling their trees costs more CPU and garbage than the rest of
 * the request's database work on the gateway (bench/RESULTS.md, "Statements compiled once per
 * shape"). preparedQuery (prepared-query.ts) is the same idea for one fixed shape.
 *
 * The contract of `build`: it reads its input only to place values in the statement (a value,
 * a row of an insert, a `values` list's item) and never decides the SQL by a value (no `if`,
 * no arithmetic, no `.length` of a string): it is called with stand-ins in place of the values,
 * once per shape. Array lengths and which keys are present are the shape, and may decide the
 * SQL. Values must be plain (string, number, bigint, boolean or null); an `undefined` key counts
 * as missing, as Kysely's inserts treat it (an `undefined` item of an array is a NULL). A test
 * compares each statement with its builder run on the real values
 * (test/store/shaped-statement.test.ts and the statements' own tests).
 */
export function shapedStatement<Values extends object>(
  build: (db: Kysely<Database>, values: Values) => RawBuilder<unknown>,
  /** How many shapes it tells apart before compiling each call anew (a test sets it low). */
  maxShapeNodes = MAX_SHAPE_NODES,
): ShapedStatement<Values> {
  const templates = new WeakMap<object, Map<number, Template>>();
  const shapes = new Shapes(maxShapeNodes);
  const statement = (db: Kysely<Database>, values: Values): CompiledQuery => {
    const leaves: unknown[] = [];
    const shape = shapes.of(values, leaves);
    // Per executor: a database and its plugins (a plugin may rewrite what it compiles). A
    // transaction is an executor of its own: run these on the database, not inside one.
    const executor = db.getExecutor();
    let byShape = templates.get(executor);
    if (byShape === undefined) templates.set(executor, (byShape = new Map<number, Template>()));
    let template = shape === undefined ? undefined : byShape.get(shape);
    if (template === undefined) {
      let next = 0;
      const compiled = build(db, standIns(values, () => new Leaf(next++)) as Values).compile(db);
      template = {
        sql: compiled.sql,
        query: compiled.query,
        parameters: compiled.parameters.map((parameter) =>
          parameter instanceof Leaf ? { leaf: parameter.index } : { constant: parameter },
        ),
      };
      if (shape !== undefined && byShape.size < MAX_SHAPES) byShape.set(shape, template);
    }
    return {
      sql: template.sql,
      query: template.query,
      queryId: { queryId: 'shaped' },
      parameters: template.parameters.map((parameter) =>
        'leaf' in parameter ? leaves[parameter.leaf] : parameter.constant,
      ),
    };
  };
  return Object.assign(statement, { build });
}

/**
 * Tells shapes apart by number, without building a text per call (a batch's shape is read for
 * every batch, and a text of every row's keys was most of a batch's garbage): an object's shape
 * is the path from the object root through each present key and its value's shape, an array's
 * the path from the array root through each item's shape; each step is found once and then
 * reused. Values (shape 0) are appended to `leaves` in traversal order, as `standIns` visits them.
 */
class Shapes {
  #nodes = 0;
  readonly #arrays: ShapeNode;
  readonly #objects: ShapeNode;

  constructor(private readonly maxNodes: number) {
    this.#arrays = this.#node();
    this.#objects = this.#node();
  }

  /** The shape of `value` (a number above 0), or `undefined` once too many shapes were seen. */
  of(value: unknown, leaves: unknown[]): number | undefined {
    if (Array.isArray(value)) {
      let node: ShapeNode | undefined = this.#arrays;
      for (const item of value) {
        const shape = this.of(item, leaves);
        node = shape === undefined || node === undefined ? undefined : this.#step(node, '', shape);
      }
      return node?.id;
    }
    if (isRecord(value)) {
      let node: ShapeNode | undefined = this.#objects;
      for (const key in value) {
        const item = value[key];
        if (item === undefined) continue;
        const shape = this.of(item, leaves);
        node = shape === undefined || node === undefined ? undefined : this.#step(node, key, shape);
      }
      return node?.id;
    }
    leaves.push(plain(value));
    return 0;
  }

  #step(node: ShapeNode, key: string, shape: number): ShapeNode | undefined {
    const known = node.next.get(key)?.get(shape);
    if (known !== undefined || this.#nodes >= this.maxNodes) return known;
    let byShape = node.next.get(key);
    if (byShape === undefined) node.next.set(key, (byShape = new Map<number, ShapeNode>()));
    const next = this.#node();
    byShape.set(shape, next);
    return next;
  }

  #node(): ShapeNode {
    return { id: ++this.#nodes, next: new Map() };
  }
}

interface ShapeNode {
  readonly id: number;
  /** By key (an array's items: the empty key), then by the shape of the value under it. */
  readonly next: Map<string, Map<number, ShapeNode>>;
}

/** `value` with each plain value replaced by `leaf()`, in the traversal order of `Shapes.of`. */
function standIns(value: unknown, leaf: () => Leaf): unknown {
  if (Array.isArray(value)) return value.map((item) => standIns(item, leaf));
  if (isRecord(value)) {
    const copy: Record<string, unknown> = {};
    for (const key in value) {
      const item = value[key];
      if (item !== undefined) copy[key] = standIns(item, leaf);
    }
    return copy;
  }
  plain(value);
  return leaf();
}

function isRecord(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/** A plain value as a parameter; `undefined` (in an array: a key's is left out) as SQL NULL. */
function plain(value: unknown): unknown {
  if (value === undefined) return null;
  const type = typeof value;
  if (
    value === null ||
    type === 'string' ||
    type === 'number' ||
    type === 'bigint' ||
    type === 'boolean'
  )
    return value;
  throw new TypeError(`a shaped statement's values must be plain, not ${type}`);
}
