/**
 * A deterministic value that satisfies a JSON Schema (the subset models are asked for: object,
 * array, string, number, integer, boolean, null, enum, const, anyOf/oneOf/allOf, min/max
 * bounds). The simulator answers `json_schema` requests and tool calls with it.
 *
 * Bounded whatever the schema asks: at most `budget.values` JSON values, `budget.characters`
 * characters of strings and keys (a `const`/`enum` value counts its JSON length), and
 * `budget.depth` levels. What does not fit is left out (arrays shorter, strings cut, deeper
 * values `null`) and the sample is marked `truncated` — like a model that ran out of tokens.
 */
type Schema = Record<string, unknown>;

export interface SampleBudget {
  values: number;
  characters: number;
  depth: number;
}

export interface Sample {
  value: unknown;
  /** The schema asked for more than the budget allowed; the value may not validate. */
  truncated: boolean;
}

const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A non-negative integer bound from a schema keyword (`Infinity` stays `Infinity`). */
const bound = (value: unknown, fallback: number): number =>
  typeof value === 'number' && !Number.isNaN(value) ? Math.max(0, Math.floor(value)) : fallback;

export function sampleFromSchema(schema: unknown, budget: SampleBudget): Sample {
  const sampler = new Sampler({ ...budget });
  const value = sampler.sample(schema, 'value', 0);
  return { value: value ?? null, truncated: sampler.truncated };
}

class Sampler {
  truncated = false;

  constructor(private readonly left: SampleBudget) {}

  /** Takes one value and `characters` characters from the budget; false (and truncated) if they do not fit. */
  private take(characters: number): boolean {
    if (this.left.values < 1 || this.left.characters < characters) {
      this.truncated = true;
      return false;
    }
    this.left.values -= 1;
    this.left.characters -= characters;
    return true;
  }

  sample(schema: unknown, seed: string, depth: number): unknown {
    if (!isSchema(schema)) return this.take(0) ? null : undefined;
    if (depth > this.left.depth) {
      this.truncated = true;
      return this.take(4) ? null : undefined;
    }
    if ('const' in schema) return this.literal(schema['const']);
    if (Array.isArray(schema['enum']) && schema['enum'].length > 0)
      return this.literal(schema['enum'][0]);
    for (const key of ['anyOf', 'oneOf']) {
      const options = schema[key];
      if (Array.isArray(options) && options.length > 0)
        return this.sample(options[0], seed, depth + 1);
    }
    if (Array.isArray(schema['allOf'])) {
      const merged: Schema = {};
      for (const part of schema['allOf']) if (isSchema(part)) Object.assign(merged, part);
      return this.sample(merged, seed, depth + 1);
    }
    const declared: unknown = schema['type'];
    const type: unknown = Array.isArray(declared)
      ? ((declared as unknown[]).find((candidate) => candidate !== 'null') ?? 'null')
      : declared;
    switch (type ?? (isSchema(schema['properties']) ? 'object' : undefined)) {
      case 'object':
        return this.object(schema, depth);
      case 'array':
        return this.array(schema, seed, depth);
      case 'string':
        return this.string(schema, seed);
      case 'integer':
      case 'number':
        return this.number(schema, type === 'integer');
      case 'boolean':
        return this.take(4) ? true : undefined;
      default:
        return this.take(4) ? null : undefined;
    }
  }

  /** `const` and `enum` values are the caller's own JSON: counted at their serialized length. */
  private literal(value: unknown): unknown {
    return this.take(JSON.stringify(value)?.length ?? 4) ? value : undefined;
  }

  private object(schema: Schema, depth: number): Record<string, unknown> | undefined {
    if (!this.take(2)) return undefined;
    const properties = isSchema(schema['properties']) ? schema['properties'] : {};
    const value: Record<string, unknown> = {};
    for (const name in properties) {
      if (!this.take(name.length)) break;
      const inner = this.sample(properties[name], name, depth + 1);
      if (inner === undefined) break;
      value[name] = inner;
    }
    return value;
  }

  private array(schema: Schema, seed: string, depth: number): unknown[] | undefined {
    if (!this.take(2)) return undefined;
    const count = Math.min(
      Math.max(1, bound(schema['minItems'], 1)),
      bound(schema['maxItems'], Infinity),
    );
    const value: unknown[] = [];
    for (let index = 0; index < count; index += 1) {
      const item = this.sample(schema['items'], `${seed}${index}`, depth + 1);
      if (item === undefined) break;
      value.push(item);
    }
    return value;
  }

  private string(schema: Schema, seed: string): string | undefined {
    let text: string;
    if (schema['format'] === 'date-time') text = '2026-01-01T00:00:00Z';
    else if (schema['format'] === 'date') text = '2026-01-01';
    else if (schema['format'] === 'email') text = 'someone@example.com';
    else {
      const base = `sim ${seed}`;
      const minimum = bound(schema['minLength'], 0);
      const maximum = bound(schema['maxLength'], Infinity);
      // Never build more than the budget holds: a huge minLength is cut to what is left.
      const length = Math.min(Math.max(base.length, minimum), maximum);
      const room = Math.max(0, this.left.characters - 2);
      if (length > room) this.truncated = true;
      text = base.padEnd(Math.min(length, room), 'x').slice(0, Math.min(length, room));
    }
    return this.take(text.length + 2) ? text : undefined;
  }

  private number(schema: Schema, integer: boolean): number | undefined {
    const minimum =
      typeof schema['minimum'] === 'number'
        ? schema['minimum']
        : typeof schema['exclusiveMinimum'] === 'number'
          ? schema['exclusiveMinimum'] + 1
          : 0;
    const maximum = typeof schema['maximum'] === 'number' ? schema['maximum'] : Infinity;
    const value = Math.min(Math.ceil(minimum), maximum);
    if (!this.take(String(value).length)) return undefined;
    return integer ? Math.floor(value) : value;
  }
}
