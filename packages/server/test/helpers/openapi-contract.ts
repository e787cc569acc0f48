import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';

/** The parts of the served OpenAPI document the checker reads. */
export interface OpenApiDocument {
  paths: Record<string, Record<string, { responses: Record<string, DocumentedResponse> }>>;
  components: { responses: Record<string, DocumentedResponse> };
}
interface DocumentedResponse {
  $ref?: string;
  content?: Record<string, unknown>;
  headers?: Record<string, unknown>;
}

const escape = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');

/**
 * Checks real answers against the OpenAPI document (test/openapi/contract.test.ts): the status
 * must be listed for the operation, a JSON body must match its schema (Ajv, JSON Schema 2020-12,
 * the dialect of OpenAPI 3.1), a stream's events the chunk schema, binary content must be
 * documented as such, and the headers the gateway sends must be listed. Remembers which
 * operations reached a success and an error.
 */
export class ContractChecker {
  private readonly ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();
  /** `GET /v1/models` → the outcomes seen. */
  private readonly exercised = new Map<string, Set<'success' | 'error'>>();

  constructor(private readonly document: OpenApiDocument) {
    this.ajv.addSchema(document, 'openapi.json');
  }

  /** A validator for the schema at `pointer` in the document (`/components/schemas/Asset`). */
  validatorFor(pointer: string): ValidateFunction {
    let validate = this.validators.get(pointer);
    if (validate === undefined) {
      validate = this.ajv.compile({ $ref: `openapi.json#${pointer}` });
      this.validators.set(pointer, validate);
    }
    return validate;
  }

  /** Every operation of the document (`POST /v1/h3/tasks/{id}/settle`). */
  operations(): string[] {
    return Object.entries(this.document.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
  }

  /** The operations not yet driven to both a success and an error. */
  unexercised(): string[] {
    return this.operations().filter((operation) => {
      const outcomes = this.exercised.get(operation);
      return outcomes?.has('success') !== true || outcomes.has('error') !== true;
    });
  }

  /** Checks `response` against the document for `operation` (`GET /v1/requests/{id}`). */
  check(operation: string, response: LightMyRequestResponse): LightMyRequestResponse {
    const [method = '', path = ''] = operation.split(' ');
    const documented = this.document.paths[path]?.[method.toLowerCase()];
    expect(documented, `${operation} is not in the document`).toBeDefined();
    const status = String(response.statusCode);
    const listed = documented?.responses[status];
    // Error answers are shared: `{"$ref": "#/components/responses/Error404"}`.
    const shared = listed?.$ref?.replace('#/components/responses/', '');
    const answer = shared === undefined ? listed : this.document.components.responses[shared];
    const base =
      shared === undefined
        ? `/paths/${escape(path)}/${method.toLowerCase()}/responses/${status}`
        : `/components/responses/${shared}`;
    expect(
      answer,
      `${operation} answered ${status}, which the document does not list: ${response.body}`,
    ).toBeDefined();
    expect(response.headers['x-service-request-id']).toMatch(/^req_/);
    const type = String(response.headers['content-type'] ?? '').split(';')[0] ?? '';
    const content = answer?.content ?? {};
    if (type === 'application/json') {
      expect(Object.keys(content), `${operation} ${status}`).toContain('application/json');
      const pointer = `${base}/content/application~1json/schema`;
      const validate = this.validatorFor(pointer);
      const valid = validate(response.json());
      expect(
        valid,
        `${operation} ${status}: ${this.ajv.errorsText(validate.errors)}\n${response.body}`,
      ).toBe(true);
    } else if (type === 'text/event-stream') {
      expect(Object.keys(content)).toContain('text/event-stream');
      const chunk = this.validatorFor(`${base}/content/text~1event-stream/schema`);
      const frames = response.body.split('\n\n').filter((frame) => frame.trim() !== '');
      if (frames.every((frame) => frame.startsWith('event: '))) {
        // Named events (Responses, Anthropic Messages): each one's data is the stream schema,
        // its ending included (docs/agents.md).
        for (const frame of frames) {
          const data = /^data: (.*)$/m.exec(frame)?.[1] ?? 'null';
          const valid = chunk(JSON.parse(data));
          expect(valid, `${operation} event: ${this.ajv.errorsText(chunk.errors)}\n${frame}`).toBe(
            true,
          );
        }
      } else {
        const errorEvent = this.validatorFor('/components/schemas/ErrorBody');
        const events = frames
          .filter((event) => event.startsWith('data: '))
          .map((event) => event.slice('data: '.length));
        // A chat stream ends with `[DONE]`, or with one error event in OpenAI's shape (docs/chat.md).
        const last = events.pop();
        if (last !== '[DONE]') {
          const valid = errorEvent(JSON.parse(last ?? 'null'));
          expect(
            valid,
            `${operation} error event: ${this.ajv.errorsText(errorEvent.errors)}\n${last}`,
          ).toBe(true);
        }
        for (const event of events) {
          const valid = chunk(JSON.parse(event));
          expect(valid, `${operation} chunk: ${this.ajv.errorsText(chunk.errors)}\n${event}`).toBe(
            true,
          );
        }
      }
    } else if (response.statusCode !== 304) {
      expect(Object.keys(content), `${operation} ${status} ${type}`).toContain('*/*');
    }
    if (response.statusCode === 429) expect(response.headers['retry-after']).toMatch(/^[0-9]+$/);
    // Every header the gateway sent that the document names must be listed for this answer.
    for (const header of ['idempotent-replayed', 'x-tollgate-dropped-fields', 'retry-after'])
      if (response.headers[header] !== undefined)
        expect(
          Object.keys(answer?.headers ?? {}).map((name) => name.toLowerCase()),
          `${operation} ${status} sent ${header}`,
        ).toContain(header);
    const outcomes = this.exercised.get(operation) ?? new Set();
    outcomes.add(response.statusCode < 400 ? 'success' : 'error');
    this.exercised.set(operation, outcomes);
    return response;
  }
}
