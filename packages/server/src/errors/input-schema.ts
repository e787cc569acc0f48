import { z } from 'zod';
import { invalidInput, type ApiError } from './api-error.js';

/**
 * Parses a request body with its zod schema (the one validation style of the protocols' bodies:
 * the TypeScript type is derived from the same schema). The first issue becomes the spec's 400
 * `INVALID_INPUT` naming the field by its dotted path (`messages.2.content.0.source`, `input.1`),
 * or `body` for the body itself; a field the schema does not know is named as such.
 */
export function parseInput<Schema extends z.ZodType>(
  schema: Schema,
  body: unknown,
): z.output<Schema> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw invalidInput('body', 'must be a JSON object');
  const parsed = schema.safeParse(body, { reportInput: true });
  if (parsed.success) return parsed.data;
  const first = parsed.error.issues[0];
  throw first === undefined ? invalidInput('body', 'is not valid') : issueError(first, []);
}

/**
 * What a service is handed before it parses it with its schema (`parseInput`): the schema's
 * fields, each of any value, as a route's body, the console's form and the CLI's flags give them.
 */
export type Unparsed<Schema extends z.ZodObject> = {
  readonly [Field in keyof z.input<Schema>]?: unknown;
};

/**
 * A required field whose absence is refused in its rule's own words (`email: must be an email
 * address`, as a value of another type is), not in `parseInput`'s `is required`: for the
 * services' inputs, whose hand checks said so before they were schemas.
 */
export function requiredAs<Schema extends z.ZodType>(message: string, schema: Schema) {
  return z
    .unknown()
    .superRefine((value, context) => {
      if (value === undefined) context.addIssue({ code: 'custom', message });
    })
    .pipe(schema);
}

/**
 * One zod issue as a 400. A union reports each branch it tried; the branch that got furthest
 * into the value is the one the caller meant (a content array, not a string).
 */
function issueError(issue: z.core.$ZodIssue, prefix: readonly PropertyKey[]): ApiError {
  const path = [...prefix, ...issue.path];
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    const deepest = issue.errors
      .map((branch) => branch[0])
      .filter((first) => first !== undefined)
      .sort((a, b) => depth(b) - depth(a))[0];
    if (deepest !== undefined) return issueError(deepest, path);
  }
  if (issue.code === 'unrecognized_keys')
    return invalidInput(dotted([...path, issue.keys[0] ?? '']), 'is not a known field');
  if (issue.code === 'invalid_type' && issue.input === undefined)
    return invalidInput(dotted(path), 'is required');
  return invalidInput(dotted(path), issue.message);
}

function depth(issue: z.core.$ZodIssue): number {
  if (issue.code === 'invalid_union') {
    const inner = issue.errors.map((branch) => (branch[0] === undefined ? 0 : depth(branch[0])));
    return issue.path.length + Math.max(0, ...inner);
  }
  return issue.path.length;
}

const dotted = (path: readonly PropertyKey[]) =>
  path.length === 0 ? 'body' : path.map(String).join('.');

/**
 * A body's JSON Schema from its zod schema, as the caller sends it (before any defaults), for the
 * places that take JSON Schema: a route's Fastify schema (validated by Ajv before the handler
 * runs, its errors named by http/plugins/error-handler.ts) and the OpenAPI document. The zod
 * schema stays the one source: the TypeScript type is derived from it too. An enum or literal
 * marked `valuesOnly` is written without its `type` (below).
 */
export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    override: ({ zodSchema, jsonSchema }) => {
      if (namedValuesOnly.has(zodSchema)) delete jsonSchema.type;
      if (choices.has(zodSchema)) writeAsOneObject(jsonSchema);
    },
  });
  return json;
}

const namedValuesOnly = new WeakSet<z.core.$ZodType>();

/**
 * An enum or literal whose JSON Schema names its values alone (`{"enum": ["json", "csv"]}`,
 * `{"const": "settle_original_h3"}`), without zod's `"type": "string"`: Ajv then answers a value
 * of any other type (a number, a repeated query parameter, which arrives as an array) with the
 * values allowed (`query.format must be json or csv`) rather than `must be string`.
 */
export function valuesOnly<Schema extends z.ZodEnum | z.ZodLiteral>(schema: Schema): Schema {
  namedValuesOnly.add(schema);
  return schema;
}

const choices = new WeakSet<z.core.$ZodType>();

/**
 * A choice of exactly one field among several (`?usage_exceeded_cap=` or `?status=`, neither
 * both nor none): a `z.xor` of strict objects of one required field each, its type the union of
 * them. Its JSON Schema is the one object it is, those fields and no other, with a `oneOf` of
 * which one is `required`, rather than zod's `oneOf` of whole objects: Ajv then judges the field
 * given by its own schema (`querystring.status must be submission_unknown`), not by the first
 * branch it fails (`querystring.usage_exceeded_cap is required`). The same values pass either way.
 */
export function oneFieldOf<Schema extends z.ZodXor<readonly z.ZodObject[]>>(
  schema: Schema,
): Schema {
  const fields = schema.options.map((option) => {
    const shape: z.core.$ZodShape = option.shape;
    const entries = Object.entries(shape);
    const [only] = entries;
    const strict = option.def.catchall?._zod.def.type === 'never';
    if (entries.length !== 1 || only === undefined || !strict || only[1]._zod.optin === 'optional')
      throw new Error('oneFieldOf: each option is a strict object of one required field');
    return only[0];
  });
  if (new Set(fields).size !== fields.length)
    throw new Error('oneFieldOf: a field is offered twice');
  choices.add(schema);
  return schema;
}

/**
 * `{oneOf: [{type: object, properties: {a}, required: [a]}, …]}` becomes
 * `{type: object, additionalProperties: false, oneOf: [{required: [a]}, …], properties: {a, …}}`.
 */
function writeAsOneObject(json: z.core.JSONSchema.BaseSchema): void {
  const options = (json.oneOf ?? []) as z.core.JSONSchema.ObjectSchema[];
  const properties: Record<string, z.core.JSONSchema._JSONSchema> = {};
  for (const option of options) Object.assign(properties, option.properties);
  delete json.oneOf;
  Object.assign(json, {
    type: 'object',
    additionalProperties: false,
    oneOf: options.map((option) => ({ required: option.required })),
    properties,
  });
}
