import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { namedFrames } from '../helpers/sse-frames.js';
import { dialects } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

const [sqlite] = dialects;

interface RecordBody {
  id: string;
  status: string;
  path: string;
  result: unknown;
  bill: { amount: number; captured: boolean } | null;
  usage: Record<string, number> | null;
  usage_counted_locally: { detail: string } | null;
}

/** A response as the gateway sent it: less what the SDK adds (`output_text`, `parsed: null`). */
function answered(response: object): unknown {
  const {
    output_text: _text,
    output_parsed: _parsed,
    ...sent
  } = response as Record<string, unknown>;
  return JSON.parse(JSON.stringify(sent), (name, value: unknown) =>
    name === 'parsed' && value === null ? undefined : value,
  ) as unknown;
}

/**
 * `POST /v1/responses` through the official openai SDK (docs/agents.md). The risks: an agent
 * that speaks only Responses cannot use the gateway; a turn is billed other than its record
 * says; a stream whose events the SDK's helper refuses, or that ends without integer usage; a
 * retry billed twice; a conversation readable or continued by another key.
 */
describe('the Responses API through the official openai SDK', () => {
  let gateway: TestGateway;
  let baseURL: string;
  let accountId: string;
  let key: string;
  let client: OpenAI;
  beforeAll(async () => {
    if (sqlite === undefined) throw new Error('no sqlite');
    gateway = await startGateway(sqlite);
    baseURL = await gateway.listen();
    ({ accountId, key } = await gateway.account(1_000_000_000));
    client = new OpenAI({ apiKey: key, baseURL, maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  const idempotent = () => ({ headers: { 'Idempotency-Key': randomUUID() } });
  const record = async (requestId: string | null) =>
    (await gateway.call('GET', `/v1/requests/${String(requestId)}`, { key })).json<RecordBody>();
  /** The bill of every record, and the balance they must add up to. */
  const charges: number[] = [];
  const charged = async (requestId: string | null) => {
    const read = await record(requestId);
    expect(read.status).toBe('succeeded');
    charges.push(read.bill?.amount ?? 0);
    return read;
  };

  it('a plain response: output text, integer usage, the record holds the same object and its exact bill', async () => {
    const { data, response } = await client.responses
      .create({ model: 'sim-chat', input: 'hello responses' }, idempotent())
      .withResponse();
    expect(data.object).toBe('response');
    expect(data.status).toBe('completed');
    expect(data.output_text).toBe('Simulated reply to: hello responses');
    expect(Number.isInteger(data.usage?.input_tokens)).toBe(true);
    expect(data.usage?.total_tokens).toBe(
      (data.usage?.input_tokens ?? 0) + (data.usage?.output_tokens ?? 0),
    );
    const requestId = response.headers.get('x-service-request-id');
    expect(data.id).toBe(`resp_${String(requestId).slice(4)}`);
    const read = await charged(requestId);
    expect(read.path).toBe('/v1/responses');
    expect(read.result).toEqual(answered(data));
    expect(read.bill?.amount).toBeGreaterThan(0);
  });

  it('instructions and message items reach the model as system and user turns', async () => {
    const { data, response } = await client.responses
      .create(
        {
          model: 'sim-chat',
          instructions: 'be brief',
          input: [
            { role: 'user', content: 'first' },
            { role: 'assistant', content: 'an earlier answer' },
            { role: 'user', content: [{ type: 'input_text', text: 'second question' }] },
          ],
        },
        idempotent(),
      )
      .withResponse();
    expect(data.output_text).toBe('Simulated reply to: second question');
    expect(data.instructions).toBe('be brief');
    await charged(response.headers.get('x-service-request-id'));
  });

  it("the SDK's stream helper accepts the events, and the final response is the record's", async () => {
    const stream = client.responses.stream(
      { model: 'sim-chat', input: 'stream this please', reasoning: { effort: 'low' } },
      idempotent(),
    );
    const types: string[] = [];
    let text = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
    }
    const final = await stream.finalResponse();
    expect(text).toBe('Simulated reply to: stream this please');
    expect(final.output_text).toBe(text);
    expect(final.status).toBe('completed');
    expect(final.usage?.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    const requestId = `req_${final.id.slice(5)}`;
    const read = await charged(requestId);
    expect(read.result).toEqual(answered(final));
  });

  it('golden stream: event order, sequence numbers from 0, every frame named', async () => {
    const response = await fetch(`${baseURL}/responses`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'idempotency-key': randomUUID(),
      },
      body: JSON.stringify({
        model: 'sim-chat',
        input: 'use the tool please',
        reasoning: { effort: 'low' },
        stream: true,
        tools: [
          {
            type: 'function',
            name: 'get_time',
            parameters: { type: 'object', properties: { zone: { type: 'string' } } },
          },
        ],
      }),
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const text = await response.text();
    const read = namedFrames(text);
    for (const frame of read) expect(frame.event).toBe(frame.data['type']);
    expect(read.map((frame) => frame.data['sequence_number'])).toEqual(
      read.map((_, index) => index),
    );
    // Consecutive deltas of one kind collapse to one line: the golden order of the events.
    const order = read
      .map((frame) => frame.event)
      .filter((event, index, all) => !(event.endsWith('.delta') && all[index - 1] === event));
    expect(order).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.reasoning_text.delta',
      'response.reasoning_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const completed = read.at(-1)?.data['response'] as OpenAI.Responses.Response;
    expect(completed.output.map((item) => item.type)).toEqual(['reasoning', 'function_call']);
    const call = completed.output[1] as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call.name).toBe('get_time');
    expect(() => JSON.parse(call.arguments) as unknown).not.toThrow();
    await charged(response.headers.get('x-service-request-id'));
  });

  it('a tool loop: function_call, then function_call_output with the whole history (store: false, as Codex sends it)', async () => {
    const tools: OpenAI.Responses.FunctionTool[] = [
      {
        type: 'function',
        name: 'get_time',
        description: 'the time in a zone',
        parameters: { type: 'object', properties: { zone: { type: 'string' } } },
        strict: false,
      },
    ];
    const first = await client.responses.create(
      { model: 'sim-chat', input: 'call the tool', tools, store: false },
      idempotent(),
    );
    const call = first.output.find((item) => item.type === 'function_call');
    if (call?.type !== 'function_call') throw new Error('no function call');
    await charged(`req_${first.id.slice(5)}`);
    const second = await client.responses.create(
      {
        model: 'sim-chat',
        tools,
        store: false,
        input: [
          { role: 'user', content: 'call the tool' },
          ...first.output,
          { type: 'function_call_output', call_id: call.call_id, output: '12:00' },
        ] as OpenAI.Responses.ResponseInput,
      },
      idempotent(),
    );
    expect(second.output_text).toContain('Based on the tool results');
    expect(second.output_text).toContain('12:00');
    await charged(`req_${second.id.slice(5)}`);
    // store: false keeps no conversation: neither readable nor continued.
    expect((await gateway.call('GET', `/v1/responses/${second.id}`, { key })).statusCode).toBe(404);
  });

  it('a tool loop by previous_response_id: the stored turn and its output are the history', async () => {
    const tools: OpenAI.Responses.FunctionTool[] = [
      {
        type: 'function',
        name: 'lookup',
        parameters: { type: 'object', properties: { q: { type: 'string' } } },
        strict: false,
      },
    ];
    const first = await client.responses.create(
      { model: 'sim-chat', input: 'use the tool', tools },
      idempotent(),
    );
    const call = first.output.find((item) => item.type === 'function_call');
    if (call?.type !== 'function_call') throw new Error('no function call');
    const second = await client.responses.create(
      {
        model: 'sim-chat',
        tools,
        previous_response_id: first.id,
        input: [{ type: 'function_call_output', call_id: call.call_id, output: 'found it' }],
      },
      idempotent(),
    );
    expect(second.previous_response_id).toBe(first.id);
    expect(second.output_text).toContain('found it');
    await charged(`req_${first.id.slice(5)}`);
    await charged(`req_${second.id.slice(5)}`);
    // GET reads the stored response back, exactly as answered.
    const got = await client.responses.retrieve(second.id);
    expect(answered(got)).toEqual(answered(second));
  });

  it('JSON schema output through text.format', async () => {
    const data = await client.responses.create(
      {
        model: 'sim-chat',
        input: 'give me a city',
        text: {
          format: {
            type: 'json_schema',
            name: 'city',
            strict: true,
            schema: {
              type: 'object',
              properties: { name: { type: 'string' }, population: { type: 'integer' } },
              required: ['name', 'population'],
              additionalProperties: false,
            },
          },
        },
      },
      idempotent(),
    );
    const parsed = JSON.parse(data.output_text) as { name: unknown; population: unknown };
    expect(typeof parsed.name).toBe('string');
    expect(Number.isInteger(parsed.population)).toBe(true);
    await charged(`req_${data.id.slice(5)}`);
  });

  it('a replay by idempotency key answers the same response and charges once, plain and streamed', async () => {
    const before = (await gateway.balance(accountId)).balance;
    const idempotencyKey = randomUUID();
    const body = { model: 'sim-chat', input: 'only once' };
    const first = await gateway.call('POST', '/v1/responses', { key, body, idempotencyKey });
    const again = await gateway.call('POST', '/v1/responses', { key, body, idempotencyKey });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    const read = await charged(String(first.headers['x-service-request-id']));
    expect(before - (await gateway.balance(accountId)).balance).toBe(read.bill?.amount);

    const streamKey = randomUUID();
    const streamed = { model: 'sim-chat', input: 'stream only once', stream: true };
    const one = await gateway.call('POST', '/v1/responses', {
      key,
      body: streamed,
      idempotencyKey: streamKey,
    });
    const two = await gateway.call('POST', '/v1/responses', {
      key,
      body: streamed,
      idempotencyKey: streamKey,
    });
    expect(two.headers['idempotent-replayed']).toBe('true');
    expect(two.body).toBe(one.body);
    expect(namedFrames(two.body).at(-1)?.event).toBe('response.completed');
    await charged(String(one.headers['x-service-request-id']));
  });

  it('a refusal for money is a 402 API error, never retried by the SDK', async () => {
    const poor = await gateway.account(1);
    let attempts = 0;
    const counting = new OpenAI({
      apiKey: poor.key,
      baseURL,
      maxRetries: 2,
      fetch: (url, init) => {
        attempts += 1;
        return fetch(url, init);
      },
    });
    const refused = await counting.responses
      .create({ model: 'sim-chat', input: 'too poor' }, idempotent())
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    expect(attempts).toBe(1);
    expect(await gateway.balance(poor.accountId)).toMatchObject({ balance: 1, held: 0 });
  });

  it('an error after the stream started ends it with response.failed; the record says what became of it', async () => {
    const response = await gateway.call('POST', '/v1/responses', {
      key,
      body: {
        model: 'sim-chat',
        input: 'break [sim:error_after=3] this stream please',
        stream: true,
      },
    });
    const read = namedFrames(response.body);
    const last = read.at(-1);
    expect(last?.event).toBe('response.failed');
    const failed = last?.data['response'] as { status: string; error: { code: string } };
    expect(failed.status).toBe('failed');
    expect(failed.error.code).toBe('UPSTREAM_ERROR');
    expect(read.some((frame) => frame.event === 'response.output_text.delta')).toBe(true);
    const requestId = String(response.headers['x-service-request-id']);
    expect((await record(requestId)).status).toBe('submission_unknown');
    // Resolved by the operator so the ledger closes (the hold is kept for them).
    await gateway.admin('POST', `/admin/v1/requests/${requestId}/resolve`, {
      action: 'release',
      reason: 'test cleanup',
    });
  });

  it('an upstream stream that finished without usage completes, billed on the gateway count its usage shows', async () => {
    const response = await gateway.call('POST', '/v1/responses', {
      key,
      body: { model: 'sim-chat', input: 'count me here [sim:no_usage]', stream: true },
    });
    const last = namedFrames(response.body).at(-1);
    expect(last?.event).toBe('response.completed');
    const usage = (last?.data['response'] as { usage: { output_tokens: number } }).usage;
    const read = await charged(String(response.headers['x-service-request-id']));
    expect(usage.output_tokens).toBe(read.usage?.['completion_tokens']);
    expect(read.usage_counted_locally?.detail).toMatch(/^usage_counted_locally: /);
  });

  it('what cannot be honoured is a 400 naming the field, and nothing is held', async () => {
    const before = await gateway.balance(accountId);
    const refused = async (body: Record<string, unknown>) => {
      const answer = await gateway.call('POST', '/v1/responses', { key, body });
      expect(answer.statusCode).toBe(400);
      return answer.json<{ error: { param: string; message: string } }>().error;
    };
    expect(
      await refused({ model: 'sim-chat', input: 'x', tools: [{ type: 'web_search' }] }),
    ).toMatchObject({ param: 'tools.0.type' });
    expect(await refused({ model: 'sim-chat', input: 'x', background: true })).toMatchObject({
      param: 'background',
    });
    expect(await refused({ model: 'sim-chat', input: 'x', no_such_field: 1 })).toMatchObject({
      param: 'no_such_field',
    });
    expect(
      await refused({ model: 'sim-chat', input: 'x', include: ['file_search_call.results'] }),
    ).toMatchObject({ param: 'include.0' });
    expect(
      await refused({
        model: 'sim-chat',
        input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file-1' }] }],
      }),
    ).toMatchObject({ param: 'input.0.content.0.file_id' });
    // The chat validator's own rules name the caller's field, not the internal one.
    expect(
      await refused({
        model: 'sim-chat',
        input: 'x',
        tools: [{ type: 'function', name: 'a b' }],
      }),
    ).toMatchObject({ param: 'tools.0.name' });
    expect(
      await refused({
        model: 'sim-chat',
        input: [
          { role: 'user', content: 'x' },
          { type: 'function_call_output', call_id: 'call_none', output: 'y' },
        ],
      }),
    ).toMatchObject({ param: expect.stringMatching(/^input\.1/) as unknown });
    // Encrypted reasoning belongs to the upstream that made it; no such channel serves this model.
    expect(
      await refused({
        model: 'sim-chat',
        input: [
          { role: 'user', content: 'x' },
          { type: 'reasoning', summary: [], encrypted_content: 'gAAAA-opaque' },
          { role: 'user', content: 'y' },
        ],
      }),
    ).toMatchObject({ param: 'input.1.encrypted_content' });
    expect(await gateway.balance(accountId)).toEqual(before);
  });

  it('the account paid exactly the sum of its records', async () => {
    const { balance } = await gateway.balance(accountId);
    expect(1_000_000_000 - balance).toBe(charges.reduce((sum, amount) => sum + amount, 0));
  });
});

describe('stored responses belong to the key that made them', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    if (sqlite === undefined) throw new Error('no sqlite');
    gateway = await startGateway(sqlite);
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  it('another key of the same account, or of another account, gets the 404 of a missing id: on GET and as previous_response_id', async () => {
    const owner = await gateway.account(1_000_000_000);
    const sibling = await gateway.newKey(owner.accountId);
    const stranger = await gateway.account(1_000_000_000);
    const made = await gateway.call('POST', '/v1/responses', {
      key: owner.key,
      body: { model: 'sim-chat', input: 'mine alone' },
    });
    const id = made.json<{ id: string }>().id;
    expect((await gateway.call('GET', `/v1/responses/${id}`, { key: owner.key })).statusCode).toBe(
      200,
    );
    const missing = await gateway.call('GET', `/v1/responses/resp_000000000nosuchresponse`, {
      key: owner.key,
    });
    expect(missing.statusCode).toBe(404);
    const shape = (answer: { json: <T>() => T }) => {
      const { error } = answer.json<{ error: { code: string; message: string } }>();
      return { code: error.code, message: error.message };
    };
    for (const other of [sibling.key, stranger.key]) {
      const read = await gateway.call('GET', `/v1/responses/${id}`, { key: other });
      expect(read.statusCode).toBe(404);
      expect(shape(read)).toEqual(shape(missing));
      const continued = await gateway.call('POST', '/v1/responses', {
        key: other,
        body: { model: 'sim-chat', input: 'go on', previous_response_id: id },
      });
      expect(continued.statusCode).toBe(404);
      expect(continued.json()).toMatchObject({ error: { param: 'previous_response_id' } });
      expect(shape(continued)).toEqual(shape(missing));
    }
    expect(await gateway.balance(stranger.accountId)).toMatchObject({
      balance: 1_000_000_000,
      held: 0,
    });
  });

  it('a key made with "idempotency": "optional" (Codex cannot send one) is answered with the key it was given', async () => {
    const { key } = await gateway.account(1_000_000_000, { idempotency: 'optional' });
    const answer = await gateway.call('POST', '/v1/responses', {
      key,
      body: { model: 'sim-chat', input: 'no key from me', stream: true },
      idempotencyKey: null,
    });
    expect(answer.statusCode).toBe(200);
    const assigned = String(answer.headers['idempotency-key']);
    const byKey = await gateway.call('GET', `/v1/requests?idempotency_key=${assigned}`, { key });
    expect(byKey.json()).toMatchObject({ status: 'succeeded', path: '/v1/responses' });
  });
});
