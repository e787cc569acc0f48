import { wireSchemas } from '@tollgate/protocol/wire-schemas';
import { FORWARDED, REBUILT, SPECIAL } from '../../chat/validate-chat.js';
import { REQUEST_FIELDS } from '../../config/request-fields.js';
import { jsonSchemaOf } from '../../errors/input-schema.js';
import { codesOf, OPERATIONS, type Operation, type Success } from './operations.js';

type Json = Record<string, unknown>;
interface OperationObject extends Json {
  parameters?: Json[];
  responses?: Json;
}

const METHODS = ['get', 'post', 'delete', 'put', 'patch'] as const;

const HEADERS = {
  'X-Service-Request-Id': {
    description: 'Our request id (`req_…`), on every response, errors included',
    schema: { type: 'string' },
  },
  'Idempotent-Replayed': {
    description: '`true` when this answer replays the original request with this Idempotency-Key',
    schema: { type: 'string', enum: ['true'] },
  },
  'Retry-After': {
    description: 'Seconds to wait before trying again',
    schema: { type: 'string' },
  },
  'X-Tollgate-Dropped-Fields': {
    description: 'Request fields dropped because the upstream is not configured for them',
    schema: { type: 'string' },
  },
} as const;

/**
 * Relative: resolved against the URL the document itself was fetched from, so it is right for
 * whatever host, port and scheme a caller reached the gateway by (the paths carry `/v1`), with
 * no configuration (docs/openapi.md "Servers").
 */
const SERVERS = [
  { url: '/', description: 'This gateway: the origin the document was fetched from' },
] as const;
/** The licence of the code that serves the API (the root package.json). */
const LICENSE = { name: 'Apache-2.0', identifier: 'Apache-2.0' } as const;

/**
 * Completes the OpenAPI 3.1 document @fastify/swagger builds from the route schemas (the very
 * schemas Ajv validates requests with): keeps the `/v1` routes, adds each operation's responses
 * (schemas generated from the protocol types), headers, error codes and the bodies the routes
 * read themselves (chat, uploads). Throws when a `/v1` route is missing from `OPERATIONS`, or
 * `OPERATIONS` lists a route that does not exist: the document is complete or it is not served.
 */
export function completeDocument(document: Json): Json {
  const paths = (document['paths'] ?? {}) as Record<string, Record<string, OperationObject>>;
  const kept: Record<string, Json> = {};
  const seen = new Set<string>();
  for (const [path, item] of Object.entries(paths)) {
    if (!path.startsWith('/v1/')) continue;
    const out: Json = {};
    for (const method of METHODS) {
      const operation = item[method];
      if (operation === undefined) continue;
      const name = `${method.toUpperCase()} ${path}`;
      const documented = OPERATIONS[name];
      if (documented === undefined)
        throw new Error(`OpenAPI: ${name} is not in http/openapi/operations.ts`);
      seen.add(name);
      out[method] = describe(operation, documented, name);
    }
    kept[path] = out;
  }
  const missing = Object.keys(OPERATIONS).filter((name) => !seen.has(name));
  if (missing.length > 0)
    throw new Error(`OpenAPI: operations.ts lists routes that do not exist: ${missing.join(', ')}`);
  const components = (document['components'] ?? {}) as Json;
  const responses = errorResponses();
  const schemas = { ...(components['schemas'] as Json | undefined), ...wireSchemas };
  return {
    ...document,
    info: { ...(document['info'] as Json | undefined), license: LICENSE },
    servers: SERVERS,
    paths: kept,
    components: {
      ...components,
      schemas: reachableSchemas([kept, responses], schemas),
      responses,
    },
  };
}

/**
 * The schemas the document uses: those the paths and responses `$ref`, and those these refer
 * to, transitively. The protocol generates a schema for every wire type (the admin API's, the
 * settle bodies the routes validate with their own schemas, …); one nothing refers to would
 * only mislead readers and generators (openapi-document.test.ts fails on an unused component).
 */
function reachableSchemas(roots: unknown, schemas: Json): Json {
  const prefix = '#/components/schemas/';
  const kept: Json = {};
  const pending = refsIn(roots);
  for (let ref = pending.pop(); ref !== undefined; ref = pending.pop()) {
    const name = ref.startsWith(prefix) ? ref.slice(prefix.length) : undefined;
    if (name === undefined || name in kept || !(name in schemas)) continue;
    kept[name] = schemas[name];
    pending.push(...refsIn(schemas[name]));
  }
  // In the order the protocol generates them, not the order they were reached.
  return Object.fromEntries(
    Object.keys(schemas).flatMap((name) => (name in kept ? [[name, kept[name]]] : [])),
  );
}

function refsIn(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(refsIn);
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) =>
    key === '$ref' && typeof inner === 'string' ? [inner] : refsIn(inner),
  );
}

function describe(operation: OperationObject, documented: Operation, name: string): Json {
  const parameters = [...(operation.parameters ?? [])];
  if (documented.idempotent === true)
    parameters.push({
      in: 'header',
      name: 'Idempotency-Key',
      required: true,
      description: 'A UUID naming this request; the same key replays the original answer',
      schema: { type: 'string', format: 'uuid' },
    });
  const responses: Json = {};
  for (const [status, success] of Object.entries(documented.success))
    responses[status] = successResponse(success, documented, name);
  for (const status of documented.errors)
    responses[String(status)] = {
      $ref: `#/components/responses/${errorResponseName(status, documented)}`,
    };
  const requestBody = requestBodyOf(documented) ?? operation['requestBody'];
  const { responses: _generated, ...rest } = operation;
  return {
    ...rest,
    summary: documented.summary,
    operationId: operationId(name),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(requestBody === undefined ? {} : { requestBody }),
    responses,
  };
}

function successResponse(success: Success, documented: Operation, name: string): Json {
  const headers: Json = { 'X-Service-Request-Id': HEADERS['X-Service-Request-Id'] };
  if (documented.idempotent === true)
    headers['Idempotent-Replayed'] = HEADERS['Idempotent-Replayed'];
  if (documented.dropsFields === true)
    headers['X-Tollgate-Dropped-Fields'] = HEADERS['X-Tollgate-Dropped-Fields'];
  if ('binary' in success)
    return {
      description: `${name}: the content (Range and If-None-Match supported)`,
      headers,
      content: {
        '*/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } },
      },
    };
  const names = typeof success.json === 'string' ? [success.json] : success.json;
  const content: Json = { 'application/json': { schema: oneOf(names) } };
  // OpenAPI 3.1 has no schema for the items of a stream (3.2's `itemSchema`): the schema of a
  // `text/event-stream` answer is that of one `data:` event, as generators read it.
  if ('stream' in success && success.named === true)
    content['text/event-stream'] = {
      schema: {
        description: `Server-sent events (\`stream: true\`): every event has an \`event:\` line naming it, and its \`data:\` is one JSON ${success.stream} whose \`type\` repeats the name, the stream's ending included (docs/agents.md)`,
        $ref: `#/components/schemas/${success.stream}`,
      },
    };
  else if ('stream' in success)
    content['text/event-stream'] = {
      schema: {
        description: `Server-sent events (\`stream: true\`): each \`data:\` event is one JSON ${success.stream}; the stream ends with \`data: [DONE]\`, or instead with one error event, an ErrorBody (docs/chat.md)`,
        oneOf: [
          { $ref: `#/components/schemas/${success.stream}` },
          { $ref: '#/components/schemas/ErrorBody' },
        ],
      },
    };
  return { description: names.join(' or '), headers, content };
}

/**
 * One shared response per error status and error shape: the spec's (listing that status's
 * codes), and Anthropic's for the routes that answer in it (`anthropicErrors`).
 */
function errorResponses(): Json {
  const entries = Object.values(OPERATIONS).flatMap((operation) =>
    operation.errors.map(
      (status) => [errorResponseName(status, operation), errorResponse(status, operation)] as const,
    ),
  );
  return Object.fromEntries(entries.sort(([a], [b]) => a.localeCompare(b)));
}

function errorResponseName(status: number, operation: Operation): string {
  return operation.anthropicErrors === true ? `AnthropicError${status}` : `Error${status}`;
}

function errorResponse(status: number, operation: Operation): Json {
  const headers: Json = { 'X-Service-Request-Id': HEADERS['X-Service-Request-Id'] };
  if (status === 429) headers['Retry-After'] = { ...HEADERS['Retry-After'], required: true };
  // SERVICE_UNAVAILABLE (the database could not be used) carries it; MODEL_UNAVAILABLE need not.
  if (status === 503) headers['Retry-After'] = HEADERS['Retry-After'];
  const codes = codesOf(status);
  if (operation.anthropicErrors === true)
    return {
      description: `Error in Anthropic's shape (docs/anthropic-messages.md): ${codes.join(', ')}`,
      headers,
      content: {
        'application/json': { schema: { $ref: '#/components/schemas/AnthropicErrorBody' } },
      },
    };
  return {
    description: `Error: ${codes.join(', ')}`,
    headers,
    content: {
      'application/json': {
        schema: {
          allOf: [
            { $ref: '#/components/schemas/ErrorBody' },
            {
              type: 'object',
              properties: { error: { type: 'object', properties: { code: { enum: codes } } } },
            },
          ],
        },
      },
    },
  };
}

function requestBodyOf(documented: Operation): Json | undefined {
  if (documented.body === 'upload')
    return {
      required: true,
      description: 'The file itself; its Content-Type names its media type (checked by its bytes)',
      content: {
        '*/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } },
      },
    };
  if (documented.body === 'chat')
    return { required: true, content: { 'application/json': { schema: chatRequestSchema() } } };
  if (typeof documented.body === 'object')
    return {
      required: true,
      content: { 'application/json': { schema: jsonSchemaOf(documented.body.zod) } },
    };
  return undefined;
}

/**
 * The chat body, from the tables its validator uses (validate-chat.ts reads `REBUILT`,
 * `FORWARDED` and `SPECIAL` itself; request-fields.ts holds the optional OpenAI fields with
 * their rules). Values are checked by that validator, not by a schema: each field says its rule.
 */
export function chatRequestSchema(): Json {
  const properties: Json = {};
  for (const field of [...REBUILT, ...FORWARDED, ...SPECIAL])
    properties[field] = { description: 'checked by the chat validator (docs/chat.md)' };
  for (const [field, rule] of Object.entries(REQUEST_FIELDS))
    properties[field] = { description: `${rule.rule} (${rule.handling})` };
  return {
    type: 'object',
    required: ['model', 'messages'],
    properties: {
      ...properties,
      model: { type: 'string', minLength: 1 },
      messages: { type: 'array', minItems: 1, items: { type: 'object' } },
      stream: { type: 'boolean' },
      // Read by chat/resolve-assets.ts before validation (docs/assets.md).
      assetIds: {
        type: 'array',
        minItems: 1,
        maxItems: 16,
        items: { type: 'string' },
        description: 'personal assets given to the model, appended to the last user message',
      },
    },
  };
}

function oneOf(names: readonly string[]): Json {
  const refs = names.map((name) => {
    if (!(name in wireSchemas)) throw new Error(`OpenAPI: no wire schema named ${name}`);
    return { $ref: `#/components/schemas/${name}` };
  });
  return refs.length === 1 ? (refs[0] as Json) : { oneOf: refs };
}

/** `POST /v1/h3/tasks/{id}/settle` → `post_v1_h3_tasks_id_settle`. */
function operationId(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/_+$/, '');
}
