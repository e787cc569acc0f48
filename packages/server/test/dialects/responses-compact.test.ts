import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import {
  readSummaryToken,
  SUMMARY_HEADING,
  SUMMARY_REQUEST,
} from '../../src/chat/compaction-summary.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

const simChat = defaultConfig.models.find((model) => model.id === 'sim-chat');
if (simChat === undefined) throw new Error('no sim-chat in the default configuration');

/**
 * `POST /v1/responses/compact`, which Codex CLI calls on long sessions (a 404 there has ended
 * long Codex sessions behind other proxies). The risks: the route missing; a compaction billed
 * twice on a retry or not at all; a Responses channel's encrypted summary sent to another
 * channel, or accepted when altered; a chat-completions channel answering something Codex cannot
 * use as its new history.
 */
describeEachDialect('POST /v1/responses/compact on $name', (dialect) => {
  let gateway: TestGateway;
  let key: string;
  let accountId: string;
  let client: OpenAI;
  beforeAll(async () => {
    const config = testConfig({
      upstreams: {
        simulator: { kind: 'simulator' },
        'responses-a': { kind: 'simulator', chat_api: 'responses', api_key_env: 'SIM_ORG_A' },
      },
      models: [
        ...defaultConfig.models,
        {
          ...simChat,
          id: 'agent-chat',
          upstream: undefined,
          channels: [{ id: 'org-a', upstream: 'responses-a', model: 'sim-chat', priority: 0 }],
        },
      ],
    });
    gateway = await startGateway(dialect, {
      config,
      services: { upstreamKeys: { 'responses-a': 'org-a-key' } },
    });
    ({ key, accountId } = await gateway.account(1_000_000_000));
    client = new OpenAI({ apiKey: key, baseURL: await gateway.listen(), maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  const history: OpenAI.Responses.ResponseInputItem[] = [
    { role: 'user', content: 'Rename the config loader to load-config.ts.' },
    {
      type: 'function_call',
      call_id: 'call_1',
      name: 'shell',
      arguments: '{"command":"git mv loader.ts load-config.ts"}',
    },
    { type: 'function_call_output', call_id: 'call_1', output: 'done' },
    { role: 'assistant', content: 'Renamed the loader.' },
    { role: 'user', content: [{ type: 'input_text', text: 'Now update the imports.' }] },
  ];
  const tools: OpenAI.Responses.FunctionTool[] = [
    {
      type: 'function',
      name: 'shell',
      parameters: { type: 'object', properties: { command: { type: 'string' } } },
      strict: false,
    },
  ];
  const recordOf = async (compactionId: string) =>
    (await gateway.call('GET', `/v1/requests/req_${compactionId.slice(5)}`, { key })).json<{
      status: string;
      bill: { amount: number };
    }>();
  const textOf = (item: OpenAI.Responses.ResponseOutputItem) =>
    item.type === 'message'
      ? item.content.map((part) => ('text' in part ? part.text : '')).join('')
      : '';

  // What Codex sends (tools too, which the SDK's parameter type leaves out).
  const codexCompaction = {
    model: 'sim-chat',
    instructions: 'You are a coding agent.',
    input: history,
    tools,
  };

  it('a chat-completions channel: the caller’s messages, then the gateway’s summary as a compaction item; one record, charged exactly, once on a replay; the summary reads on any channel', async () => {
    const before = (await gateway.balance(accountId)).balance;
    const idempotencyKey = randomUUID();
    const compacted = await client.responses.compact(codexCompaction, {
      headers: { 'Idempotency-Key': idempotencyKey },
    });
    expect(compacted.object).toBe('response.compaction');
    expect(compacted.output.map((item) => [item.type, 'role' in item ? item.role : null])).toEqual([
      ['message', 'user'],
      ['message', 'user'],
      ['compaction', null],
    ]);
    expect(compacted.output.slice(0, 2).map(textOf)).toEqual([
      'Rename the config loader to load-config.ts.',
      'Now update the imports.',
    ]);
    const item = compacted.output[2] as OpenAI.Responses.ResponseCompactionItem;
    const summary = readSummaryToken(item.encrypted_content);
    // The simulator answers the summary request by echoing it: the gateway's request was sent.
    expect(summary).toContain(SUMMARY_REQUEST.slice(0, 40));
    expect(Number.isInteger(compacted.usage.input_tokens)).toBe(true);
    expect(compacted.usage.output_tokens).toBeGreaterThan(0);

    const record = await recordOf(compacted.id);
    expect(record.status).toBe('succeeded');
    expect(record.bill.amount).toBeGreaterThan(0);
    expect((await gateway.balance(accountId)).balance).toBe(before - record.bill.amount);

    const replay = await client.responses.compact(codexCompaction, {
      headers: { 'Idempotency-Key': idempotencyKey },
    });
    expect(replay).toEqual(compacted);
    expect((await gateway.balance(accountId)).balance).toBe(before - record.bill.amount);

    // Sent back, the summary is a user message opening with SUMMARY_HEADING (the simulator
    // replies to the last user message), on a Responses channel as on a chat-completions one:
    // nothing pins it.
    for (const model of ['sim-chat', 'agent-chat']) {
      const continued = await client.responses.create(
        { model, input: compacted.output as OpenAI.Responses.ResponseInputItem[] },
        { headers: { 'Idempotency-Key': randomUUID() } },
      );
      expect(continued.status).toBe('completed');
      expect(continued.output_text).toContain(SUMMARY_HEADING);
    }
  });

  it('a Responses channel compacts by its own endpoint: its summary comes back sealed, and the next turn carrying it is read by that channel', async () => {
    const before = (await gateway.balance(accountId)).balance;
    const compacted = await client.responses.compact(
      { model: 'agent-chat', input: history },
      { headers: { 'Idempotency-Key': randomUUID() } },
    );
    const kinds = compacted.output.map((item) => item.type);
    expect(kinds.at(-1)).toBe('compaction');
    const sealed = compacted.output.at(-1) as OpenAI.Responses.ResponseCompactionItem;
    expect(sealed.encrypted_content.startsWith('tgo1.')).toBe(true);
    const charged = (await recordOf(compacted.id)).bill.amount;
    expect(charged).toBeGreaterThan(0);
    expect((await gateway.balance(accountId)).balance).toBe(before - charged);

    // The compacted items are the new history: the simulator verifies the sealed summary.
    const next = await client.responses.create(
      {
        model: 'agent-chat',
        input: [
          ...(compacted.output as OpenAI.Responses.ResponseInputItem[]),
          { role: 'user', content: 'Continue.' },
        ],
      },
      { headers: { 'Idempotency-Key': randomUUID() } },
    );
    expect(next.status).toBe('completed');

    // Altered, it is refused by name before any upstream call; to a model the channel does not
    // serve, it is refused too: only that channel's upstream can read it.
    const altered = {
      ...sealed,
      encrypted_content: `${sealed.encrypted_content.slice(0, -4)}AAAA`,
    };
    for (const [model, item] of [
      ['agent-chat', altered],
      ['sim-chat', sealed],
    ] as const) {
      const balance = (await gateway.balance(accountId)).balance;
      const refused = await gateway.call('POST', '/v1/responses', {
        key,
        body: { model, input: [item, { role: 'user', content: 'Continue.' }] },
      });
      expect(refused.statusCode, refused.body).toBe(400);
      expect(refused.json<{ error: { param: string } }>().error.param).toBe(
        'input.0.encrypted_content',
      );
      expect((await gateway.balance(accountId)).balance).toBe(balance);
    }
  });

  it('Codex’s in-stream compaction (compaction_trigger last): streamed, the one output item is a compaction in a completed response, charged exactly', async () => {
    for (const model of ['sim-chat', 'agent-chat']) {
      const before = (await gateway.balance(accountId)).balance;
      const stream = await client.responses.create(
        {
          model,
          stream: true,
          input: [
            ...history,
            { type: 'compaction_trigger' } as unknown as OpenAI.Responses.ResponseInputItem,
          ],
          tools,
          store: false,
        },
        { headers: { 'Idempotency-Key': randomUUID() } },
      );
      const events: OpenAI.Responses.ResponseStreamEvent[] = [];
      for await (const event of stream) events.push(event);
      expect(events.map((event) => [event.type, event.sequence_number])).toEqual([
        ['response.created', 0],
        ['response.in_progress', 1],
        ['response.output_item.added', 2],
        ['response.output_item.done', 3],
        ['response.completed', 4],
      ]);
      const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
      expect(completed.response.output.map((item) => item.type)).toEqual(['compaction']);
      const item = completed.response.output[0] as OpenAI.Responses.ResponseCompactionItem;
      expect(readSummaryToken(item.encrypted_content)).toContain(SUMMARY_REQUEST.slice(0, 40));
      expect(Number.isInteger(completed.response.usage?.output_tokens)).toBe(true);
      const charged = (await recordOf(completed.response.id)).bill.amount;
      expect(charged).toBeGreaterThan(0);
      expect((await gateway.balance(accountId)).balance).toBe(before - charged);
    }
  });

  it('in-stream compaction, plain: the response’s one output item is the compaction', async () => {
    const response = await client.responses.create(
      {
        model: 'sim-chat',
        input: [
          ...history,
          { type: 'compaction_trigger' } as unknown as OpenAI.Responses.ResponseInputItem,
        ],
      },
      { headers: { 'Idempotency-Key': randomUUID() } },
    );
    expect(response.status).toBe('completed');
    expect(response.output.map((item) => item.type)).toEqual(['compaction']);
  });

  it('a compaction_trigger anywhere but last is a 400 naming it, nothing charged', async () => {
    const before = await gateway.balance(accountId);
    const refused = await gateway.call('POST', '/v1/responses', {
      key,
      body: {
        model: 'sim-chat',
        input: [{ type: 'compaction_trigger' }, { role: 'user', content: 'hi' }],
      },
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json<{ error: { param: string } }>().error.param).toBe('input.0');
    expect(await gateway.balance(accountId)).toEqual(before);
  });

  it('Codex’s message metadata (internal_chat_message_metadata_passthrough) is taken, not sent upstream, and named as dropped', async () => {
    const answer = await gateway.call('POST', '/v1/responses', {
      key,
      body: {
        model: 'sim-chat',
        input: [
          {
            type: 'message',
            role: 'user',
            content: [{ type: 'input_text', text: 'hi' }],
            internal_chat_message_metadata_passthrough: { turn_id: 'turn-1' },
          },
        ],
      },
    });
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.headers['x-tollgate-dropped-fields']).toContain(
      'input.internal_chat_message_metadata_passthrough',
    );
  });

  it('stream: true is refused naming the field, nothing charged', async () => {
    const before = await gateway.balance(accountId);
    const refused = await gateway.call('POST', '/v1/responses/compact', {
      key,
      body: { model: 'sim-chat', input: 'hello', stream: true },
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json<{ error: { param: string } }>().error.param).toBe('stream');
    expect(await gateway.balance(accountId)).toEqual(before);
  });
});
