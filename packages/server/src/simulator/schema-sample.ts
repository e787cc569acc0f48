/**
 * A deterministic value that satisfies a JSON Schema (the subset models are asked for: object,
 * array, string, number, integer, boolean, null, enum, const, anyOf/oneOf/allOf, min/max
 * bounds). The simulator answers `json_schema` requests and tool calls with it.
 */
type Schema = Record<string, unknown>;

const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function sampleFromSchema(schema: unknown, seed = 'value', depth = 0): unknown {
  if (!isSchema(schema) || depth > 8) return null;
  if ('const' in schema) return schema['const'];
  if (Array.isArray(schema['enum']) && schema['enum'].length > 0) return schema['enum'][0];
  for (const key of ['anyOf', 'oneOf']) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0)
      return sampleFromSchema(options[0], seed, depth + 1);
  }
  if (Array.isArray(schema['allOf'])) {
    const merged: Schema = {};
    for (const part of schema['allOf']) if (isSchema(part)) Object.assign(merged, part);
    return sampleFromSchema(merged, seed, depth + 1);
  }
  const declared: unknown = schema['type'];
  const type: unknown = Array.isArray(declared)
    ? ((declared as unknown[]).find((candidate) => candidate !== 'null') ?? 'null')
    : declared;
  switch (type ?? (isSchema(schema['properties']) ? 'object' : undefined)) {
    case 'object': {
      const properties = isSchema(schema['properties']) ? schema['properties'] : {};
      const value: Record<string, unknown> = {};
      for (const [name, inner] of Object.entries(properties))
        value[name] = sampleFromSchema(inner, name, depth + 1);
      return value;
    }
    case 'array': {
      const count = Math.max(1, typeof schema['minItems'] === 'number' ? schema['minItems'] : 1);
      const limited =
        typeof schema['maxItems'] === 'number' ? Math.min(count, schema['maxItems']) : count;
      return Array.from({ length: limited }, (_, index) =>
        sampleFromSchema(schema['items'], `${seed}${index}`, depth + 1),
      );
    }
    case 'string': {
      if (schema['format'] === 'date-time') return '2026-01-01T00:00:00Z';
      if (schema['format'] === 'date') return '2026-01-01';
      if (schema['format'] === 'email') return 'someone@example.com';
      const minimum = typeof schema['minLength'] === 'number' ? schema['minLength'] : 0;
      const maximum = typeof schema['maxLength'] === 'number' ? schema['maxLength'] : Infinity;
      return `sim ${seed}`.padEnd(minimum, 'x').slice(0, maximum);
    }
    case 'integer':
    case 'number': {
      const minimum =
        typeof schema['minimum'] === 'number'
          ? schema['minimum']
          : typeof schema['exclusiveMinimum'] === 'number'
            ? schema['exclusiveMinimum'] + 1
            : 0;
      const maximum = typeof schema['maximum'] === 'number' ? schema['maximum'] : Infinity;
      const value = Math.min(Math.ceil(minimum), maximum);
      return type === 'integer' ? Math.floor(value) : value;
    }
    case 'boolean':
      return true;
    default:
      return null;
  }
}
