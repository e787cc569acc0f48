import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../src/http/plugins/json-body.js';
import { checkJsonShape } from '../../src/util/json-shape.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { ADMIN_TOKEN, startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Risk: a body nested thousands of levels deep overflows the stack of whatever recurses over it
 * next (validators, JSON.stringify, the canonical JSON of idempotency fingerprints): a 500, or
 * worse. Every JSON body is refused above MAX_JSON_DEPTH levels before it is parsed: 400
 * naming the top-level field, no record, no money moved.
 */

/** A JSON Schema nested `levels` JSON levels deep (each schema adds two: itself and `properties`). */
function deepSchema(levels: number): string {
  const schemas = Math.floor(levels / 2);
  return `${'{"type":"object","properties":{"a":'.repeat(schemas)}{"type":"string"}${'}}'.repeat(schemas)}`;
}
const deepArray = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
const user = '[{"role":"user","content":"hello"}]';

const cases: { name: string; body: string; field: string }[] = [
  {
    name: '10,000 levels in tool parameters',
    body: `{"model":"sim-chat","messages":${user},"tools":[{"type":"function","function":{"name":"lookup","parameters":${deepSchema(10_000)}}}]}`,
    field: 'tools',
  },
  {
    name: '10,000 levels in a response schema',
    body: `{"model":"sim-chat","messages":${user},"response_format":{"type":"json_schema","json_schema":{"name":"deep","schema":${deepSchema(10_000)}}}}`,
    field: 'response_format',
  },
  {
    name: '10,000 levels in a plain field',
    body: `{"model":"sim-chat","messages":${user},"user":${deepArray(10_000)}}`,
    field: 'user',
  },
  {
    name: 'a valid 2,000-level schema',
    body: `{"model":"sim-chat","messages":${user},"response_format":{"type":"json_schema","json_schema":{"name":"deep","schema":${deepSchema(2_000)}}}}`,
    field: 'response_format',
  },
  {
    name: 'a body that is itself 10,000 nested arrays',
    body: deepArray(10_000),
    field: 'body',
  },
];

describeEachDialect('deeply nested JSON bodies on $name', (dialect) => {
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

  it.each(cases)('refuses $name with 400 naming $field, recording nothing', async (example) => {
    const before = await gateway.balance(accountId);
    const idempotencyKey = randomUUID();
    const response = await gateway.call('POST', '/v1/chat/completions', {
      key,
      body: example.body,
      idempotencyKey,
      headers: { 'content-type': 'application/json' },
    });
    expect(response.statusCode).toBe(400);
    const error = response.json<{ error: { code: string; message: string; param: string } }>()
      .error;
    expect(error).toMatchObject({ code: 'INVALID_INPUT', param: example.field });
    expect(error.message).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
    const record = await gateway.call('GET', `/v1/requests?idempotency_key=${idempotencyKey}`, {
      key,
    });
    expect(record.statusCode).toBe(404);
    expect(await gateway.balance(accountId)).toEqual(before);
    // The process is fine: the next ordinary request is answered.
    const next = await gateway.call('POST', '/v1/chat/completions', {
      key,
      body: { model: 'sim-chat', messages: [{ role: 'user', content: 'still there?' }] },
    });
    expect(next.statusCode).toBe(200);
  });

  it('refuses a deep admin body the same way', async () => {
    const response = await gateway.app.inject({
      method: 'POST',
      url: '/admin/v1/accounts',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      payload: `{"email":"deep@example.test","note":${deepArray(10_000)}}`,
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param: 'note' } });
  });
});

describe('the depth scan reads JSON as the parser does', () => {
  const depthOf = (text: string, maxDepth: number) =>
    checkJsonShape(text, { maxDepth, maxItems: Number.MAX_SAFE_INTEGER });

  it('accepts exactly MAX_JSON_DEPTH levels and reports the path of the first level beyond', () => {
    expect(depthOf(deepArray(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBeUndefined();
    expect(depthOf(`{"a":[1,{"b":${deepArray(3)}}]}`, 4)).toEqual({
      kind: 'depth',
      path: ['a', 1, 'b', 0],
    });
  });

  it('does not count brackets, braces or escaped quotes inside strings', () => {
    const tricky = JSON.stringify({ 'key [{': '[[[[{{{{ \\" "[[[ \\\\', list: ['{{{', ']]]'] });
    expect(depthOf(tricky, 2)).toBeUndefined();
    expect(depthOf(`{"x\\"[":{"y":[[]]}}`, 3)).toEqual({ kind: 'depth', path: ['x"[', 'y', 0] });
  });
});
