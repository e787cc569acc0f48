import { invalidInput } from '../errors/api-error.js';

/**
 * What the gateway passes on as a JSON Schema (`response_format.json_schema.schema`,
 * `tools.N.function.parameters`), whatever the upstream: a schema is an instruction to generate,
 * so a small one can ask for an unbounded answer (`{"type": "array", "minItems": 100000000}`),
 * and a large or deep one costs every upstream that compiles it. Limits (docs/chat.md):
 */
export const SCHEMA_LIMITS = {
  /** Serialized size, UTF-8 bytes of its JSON. */
  bytes: 64 * 1024,
  /** Nesting of objects and arrays; the schema object itself is level 1. */
  depth: 32,
  /** JSON values in it (objects, arrays, strings, numbers, booleans, nulls), keys not counted. */
  values: 10_000,
  /** Largest value of a lower-bound size keyword (below): integers from 0 up to it. */
  sizeKeyword: 10_000,
} as const;

/**
 * Size keywords. A lower bound asks for an amount of output and is held to
 * `SCHEMA_LIMITS.sizeKeyword`; an upper bound asks for nothing (the output cap bounds the answer
 * whatever it allows), so any non-negative integer is taken: stock agent tools declare
 * `maxLength: 524288` for a script. Checked wherever they hold a number, including inside
 * `const`/`enum` data: being strict there costs nothing real and keeps the walk simple.
 */
const LOWER_BOUNDS = new Set(['minItems', 'minLength', 'minProperties', 'minContains']);
const UPPER_BOUNDS = new Set(['maxItems', 'maxLength', 'maxProperties', 'maxContains']);

interface Visit {
  readonly value: unknown;
  readonly depth: number;
  readonly parent: Visit | undefined;
  readonly segment: string | number | undefined;
}

/**
 * Throws 400 `INVALID_INPUT` naming `param` when `schema` breaks a limit. Iterative (no
 * recursion), stops at the first value over the count, and serializes only once the depth is
 * known to be small.
 */
export function checkSchemaLimits(schema: unknown, param: string): void {
  const pending: Visit[] = [{ value: schema, depth: 1, parent: undefined, segment: undefined }];
  let values = 1;
  // Counted when queued, so a huge object or array is refused before its items are queued.
  const queue = (visit: Visit) => {
    values += 1;
    if (values > SCHEMA_LIMITS.values)
      throw invalidInput(param, `has more than ${SCHEMA_LIMITS.values} values`);
    pending.push(visit);
  };
  for (let visit = pending.pop(); visit !== undefined; visit = pending.pop()) {
    const { value, depth } = visit;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > SCHEMA_LIMITS.depth)
      throw invalidInput(
        param,
        `nests deeper than ${SCHEMA_LIMITS.depth} levels (at ${pathOf(visit)})`,
      );
    if (Array.isArray(value)) {
      if (values + value.length > SCHEMA_LIMITS.values)
        throw invalidInput(param, `has more than ${SCHEMA_LIMITS.values} values`);
      value.forEach((item: unknown, index) =>
        queue({ value: item, depth: depth + 1, parent: visit, segment: index }),
      );
      continue;
    }
    for (const key in value) {
      const inner = (value as Record<string, unknown>)[key];
      if ((LOWER_BOUNDS.has(key) || UPPER_BOUNDS.has(key)) && typeof inner === 'number')
        checkSize(key, inner, visit, param);
      queue({ value: inner, depth: depth + 1, parent: visit, segment: key });
    }
  }
  const bytes = Buffer.byteLength(JSON.stringify(schema));
  if (bytes > SCHEMA_LIMITS.bytes)
    throw invalidInput(
      param,
      `is ${bytes} bytes of JSON; at most ${SCHEMA_LIMITS.bytes} are accepted`,
    );
}

function checkSize(keyword: string, amount: number, at: Visit, param: string): void {
  const most = LOWER_BOUNDS.has(keyword) ? SCHEMA_LIMITS.sizeKeyword : Number.MAX_SAFE_INTEGER;
  if (Number.isInteger(amount) && amount >= 0 && amount <= most) return;
  const where = at.parent === undefined ? '' : ` at ${pathOf(at)}`;
  throw invalidInput(
    param,
    LOWER_BOUNDS.has(keyword)
      ? `${keyword}${where} is ${amount}; it must be an integer from 0 to ${most}`
      : `${keyword}${where} is ${amount}; it must be a non-negative integer`,
  );
}

/** Dotted path of a visited value inside the schema, shortened for the message. */
function pathOf(visit: Visit): string {
  const segments: (string | number)[] = [];
  for (let at: Visit | undefined = visit; at?.segment !== undefined; at = at.parent)
    segments.push(at.segment);
  segments.reverse();
  const shown = segments.slice(0, 8).map((segment) => String(segment).slice(0, 64));
  return `${shown.join('.')}${segments.length > 8 ? '.…' : ''}`;
}
