import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMA_LIMITS } from '../../src/chat/schema-limits.js';
import { SIMULATOR_LIMITS } from '../../src/simulator/limits.js';
import { sampleFromSchema } from '../../src/simulator/schema-sample.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Risk: a JSON Schema is an instruction to generate. `{"type": "array", "minItems": 100000000}`
 * made the in-process simulator build the array until the process died, leaving every request
 * in flight `processing`. The gateway refuses schemas above its limits for every upstream, and
 * the simulator bounds whatever it generates by the output cap and its own fixed limits.
 */

const THE_REPRODUCTION = { type: 'array', minItems: 100_000_000 };
const hello = [{ role: 'user', content: 'describe it' }];
const withSchema = (schema: unknown) => ({
  model: 'sim-chat',
  messages: hello,
  response_format: { type: 'json_schema', json_schema: { name: 'answer', schema } },
});
const withToolParameters = (parameters: unknown) => ({
  model: 'sim-chat',
  messages: [{ role: 'user', content: 'call lookup' }],
  tools: [{ type: 'function', function: { name: 'lookup', parameters } }],
});
/** A schema nested `levels` JSON levels deep: arrays of arrays of … strings. */
function nestedSchema(levels: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: 'string' };
  for (let level = 1; level < levels; level += 1) schema = { type: 'array', items: schema };
  return schema;
}
/** Passes every gateway limit, yet asks for 10,000 × 10,000 × 10,000 strings of 10,000 characters. */
const HUGE_BUT_ALLOWED = {
  type: 'array',
  minItems: 10_000,
  items: {
    type: 'array',
    minItems: 10_000,
    items: { type: 'array', minItems: 10_000, items: { type: 'string', minLength: 10_000 } },
  },
};

describeEachDialect('JSON Schema bounds through the gateway on $name', (dialect) => {
  let gateway: TestGateway;
  let key: string;
  let accountId: string;
  beforeAll(async () => {
    gateway = await startGateway(dialect);
    ({ key, accountId } = await gateway.account(1_000_000_000));
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  /** Sends `body`, expects 400 INVALID_INPUT naming `param`, nothing recorded, nothing charged. */
  async function expectRefused(body: unknown, param: string, message: RegExp): Promise<void> {
    const before = await gateway.balance(accountId);
    const idempotencyKey = randomUUID();
    const response = await gateway.call('POST', '/v1/chat/completions', {
      key,
      body,
      idempotencyKey,
    });
    expect(response.statusCode).toBe(400);
    const error = response.json<{ error: { code: string; param: string; message: string } }>()
      .error;
    expect(error).toMatchObject({ code: 'INVALID_INPUT', param });
    expect(error.message).toMatch(message);
    const record = await gateway.call('GET', `/v1/requests?idempotency_key=${idempotencyKey}`, {
      key,
    });
    expect(record.statusCode).toBe(404);
    expect(await gateway.balance(accountId)).toEqual(before);
  }

  it('refuses the exact reproduction (minItems 100,000,000) and stays up', async () => {
    await expectRefused(
      withSchema(THE_REPRODUCTION),
      'response_format.json_schema.schema',
      /minItems is 100000000; it must be an integer from 0 to 10000/,
    );
    const next = await gateway.call('POST', '/v1/chat/completions', {
      key,
      body: { model: 'sim-chat', messages: hello },
    });
    expect(next.statusCode).toBe(200);
  });

  it('refuses the same schema as tool parameters', async () => {
    await expectRefused(
      withToolParameters({ type: 'object', properties: { ids: THE_REPRODUCTION } }),
      'tools.0.function.parameters',
      /minItems at properties\.ids is 100000000/,
    );
  });

  it.each([
    ['maxLength that is not an integer', { type: 'string', maxLength: 10.5 }, /maxLength is 10.5/],
    ['maxItems below zero', { type: 'array', maxItems: -1 }, /maxItems is -1/],
    ['minProperties above the limit', { type: 'object', minProperties: 1e9 }, /minProperties/],
    ['a negative minLength', { type: 'string', minLength: -1 }, /minLength is -1/],
    [
      'a schema larger than 64 KiB',
      { type: 'string', description: 'x'.repeat(SCHEMA_LIMITS.bytes) },
      /bytes of JSON; at most 65536/,
    ],
    ['a schema deeper than 32 levels', nestedSchema(SCHEMA_LIMITS.depth + 2), /deeper than 32/],
    [
      'a schema of more than 10,000 values',
      { type: 'integer', enum: Array.from({ length: SCHEMA_LIMITS.values }, (_, index) => index) },
      /more than 10000 values/,
    ],
  ])('refuses %s', async (_name, schema, message) => {
    await expectRefused(withSchema(schema), 'response_format.json_schema.schema', message);
  });

  it('accepts a schema at the limits', async () => {
    const response = await gateway.call('POST', '/v1/chat/completions', {
      key,
      body: withSchema({
        type: 'object',
        properties: {
          code: { type: 'string', minLength: 10_000, maxLength: 10_000 },
          nested: nestedSchema(SCHEMA_LIMITS.depth - 4),
        },
      }),
    });
    expect(response.statusCode).toBe(200);
  });

  it("takes a stock agent tool's large upper bound (Claude Code: maxLength 524288), which asks for nothing", async () => {
    const response = await gateway.call('POST', '/v1/chat/completions', {
      key,
      body: withToolParameters({
        type: 'object',
        properties: { script: { type: 'string', maxLength: 524_288 } },
        maxProperties: 1_000_000,
      }),
    });
    expect(response.statusCode).toBe(200);
  });

  it('answers a large schema within its limits with a bounded, cut answer', async () => {
    const response = await gateway.call('POST', '/v1/chat/completions', {
      key,
      body: { ...withSchema(HUGE_BUT_ALLOWED), max_tokens: 1_000 },
    });
    expect(response.statusCode).toBe(200);
    const body = response.json<{
      choices: { message: { content: string }; finish_reason: string }[];
      usage: { completion_tokens: number };
    }>();
    expect(body.choices[0]?.finish_reason).toBe('length');
    expect(body.usage.completion_tokens).toBeLessThanOrEqual(1_000);
    // The sample's budget, plus the spaces the cut to 1,000 tokens may put between tokens.
    expect(body.choices[0]?.message.content.length).toBeLessThanOrEqual(
      1_000 * SIMULATOR_LIMITS.charactersPerToken + 1_000,
    );
  });
});

describe('the simulator bounds what a schema asks for', () => {
  const budget = { values: 10_000, characters: 64 * 1024, depth: 16 };

  it.each([
    ['minItems 100,000,000', THE_REPRODUCTION],
    ['minItems beyond any number', { type: 'array', minItems: Infinity }],
    ['minLength 1,000,000,000', { type: 'string', minLength: 1_000_000_000 }],
    ['10,000^3 strings of 10,000 characters', HUGE_BUT_ALLOWED],
    ['200 levels of nesting', nestedSchema(400)],
    [
      '100,000 properties',
      {
        type: 'object',
        properties: Object.fromEntries(
          Array.from({ length: 100_000 }, (_, index) => [`p${index}`, { type: 'integer' }]),
        ),
      },
    ],
  ])('samples %s within the budget, quickly, marked truncated', (_name, schema) => {
    const started = performance.now();
    const sample = sampleFromSchema(schema, budget);
    const elapsed = performance.now() - started;
    expect(sample.truncated).toBe(true);
    expect(JSON.stringify(sample.value).length).toBeLessThanOrEqual(budget.characters + 16);
    expect(elapsed).toBeLessThan(1_000);
  });

  it('still satisfies schemas that fit', () => {
    const sample = sampleFromSchema(
      { type: 'array', minItems: 3, items: { type: 'string', minLength: 12 } },
      budget,
    );
    expect(sample.truncated).toBe(false);
    expect(sample.value).toEqual(['sim value0xx', 'sim value1xx', 'sim value2xx']);
  });
});

describe('the standalone simulator bounds every output', () => {
  let simulator: Simulator;
  beforeAll(async () => {
    simulator = await startSimulator();
  });
  afterAll(async () => {
    await simulator.close();
  });
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${simulator.url}/v1/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, text: await response.text() };
  };

  it('answers the reproduction with a bounded answer, whatever max_tokens says', async () => {
    const answer = await post('chat/completions', {
      ...withSchema(THE_REPRODUCTION),
      max_tokens: 1_000_000_000,
    });
    expect(answer.status).toBe(200);
    expect(answer.text.length).toBeLessThan(2 * SIMULATOR_LIMITS.outputCharacters);
    const body = JSON.parse(answer.text) as {
      choices: { finish_reason: string }[];
      usage: { completion_tokens: number };
    };
    expect(body.choices[0]?.finish_reason).toBe('length');
    expect(body.usage.completion_tokens).toBeLessThanOrEqual(SIMULATOR_LIMITS.outputTokens);
  });

  it('bounds tool-call arguments the same way', async () => {
    const answer = await post('chat/completions', {
      ...withToolParameters({ type: 'object', properties: { ids: THE_REPRODUCTION } }),
      max_tokens: 50,
    });
    expect(answer.status).toBe(200);
    const body = JSON.parse(answer.text) as {
      choices: { message: { tool_calls: { function: { arguments: string } }[] } }[];
    };
    expect(body.choices[0]?.message.tool_calls[0]?.function.arguments.length).toBeLessThanOrEqual(
      50 * SIMULATOR_LIMITS.charactersPerToken,
    );
  });

  it('refuses embeddings whose inputs × dimensions exceed its limit', async () => {
    const answer = await post('embeddings', {
      model: 'sim-embed',
      input: Array.from({ length: 2_048 }, () => 'a'),
      dimensions: 4_096,
    });
    expect(answer.status).toBe(400);
    expect(answer.text).toContain('inputs × dimensions');
  });

  it('refuses more rerank documents than its limit', async () => {
    const answer = await post('rerank', {
      model: 'sim-rerank',
      query: 'q',
      documents: Array.from({ length: SIMULATOR_LIMITS.rerankDocuments + 1 }, () => 'd'),
    });
    expect(answer.status).toBe(400);
  });

  it('ranks many documents against a long query in linear time', async () => {
    const vocabulary = Array.from({ length: 5_000 }, (_, index) => `w${index}`);
    const started = performance.now();
    const answer = await post('rerank', {
      model: 'sim-rerank',
      query: vocabulary.join(' '),
      documents: Array.from({ length: 2_000 }, (_, index) =>
        vocabulary.slice(index, index + 200).join(' '),
      ),
      top_n: 3,
    });
    expect(answer.status).toBe(200);
    // Scanning every query term against every document was ~2·10⁹ steps.
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('refuses a body nested deeper than its JSON depth limit', async () => {
    const response = await fetch(`${simulator.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"model":"sim-chat","messages":[{"role":"user","content":"x"}],"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`,
    });
    expect(response.status).toBe(400);
  });
});
