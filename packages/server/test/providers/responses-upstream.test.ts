import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

const simChat = defaultConfig.models.find((model) => model.id === 'sim-chat');
if (simChat === undefined) throw new Error('no sim-chat in the default configuration');

/**
 * A channel whose upstream speaks OpenAI's Responses API (`chat_api: responses`), reached from
 * every inbound protocol through the one internal request. The risks: usage read from the wrong
 * fields (billed wrongly); encrypted reasoning dropped or altered on its way back (the upstream
 * then refuses the tool loop, as OpenAI does); encrypted reasoning sent to another channel (its
 * organisation cannot read it) when failover moves the turn.
 */
describeEachDialect('a Responses upstream on $name', (dialect) => {
  let gateway: TestGateway;
  let key: string;
  let accountId: string;
  let client: OpenAI;
  beforeAll(async () => {
    const config = testConfig({
      upstreams: {
        simulator: { kind: 'simulator' },
        'responses-a': { kind: 'simulator', chat_api: 'responses', api_key_env: 'SIM_ORG_A' },
        'responses-b': { kind: 'simulator', chat_api: 'responses', api_key_env: 'SIM_ORG_B' },
      },
      models: [
        ...defaultConfig.models,
        {
          ...simChat,
          id: 'agent-chat',
          upstream: undefined,
          channels: [
            { id: 'org-a', upstream: 'responses-a', model: 'sim-chat', priority: 10 },
            { id: 'org-b', upstream: 'responses-b', model: 'sim-chat', priority: 0 },
          ],
        },
      ],
    });
    gateway = await startGateway(dialect, {
      config,
      services: { upstreamKeys: { 'responses-a': 'org-a-key', 'responses-b': 'org-b-key' } },
    });
    ({ key, accountId } = await gateway.account(1_000_000_000));
    client = new OpenAI({ apiKey: key, baseURL: await gateway.listen(), maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  const idempotent = () => ({ headers: { 'Idempotency-Key': randomUUID() } });
  const tools: OpenAI.Responses.FunctionTool[] = [
    {
      type: 'function',
      name: 'lookup',
      parameters: { type: 'object', properties: { q: { type: 'string' } } },
      strict: false,
    },
  ];
  const recordOf = async (responseId: string) =>
    (await gateway.call('GET', `/v1/requests/req_${responseId.slice(5)}`, { key })).json<{
      status: string;
      usage: Record<string, number>;
      bill: { amount: number };
      routing?: unknown;
    }>();

  it('chat completions, plain and streamed, through a Responses upstream: the answer and its usage', async () => {
    const before = (await gateway.balance(accountId)).balance;
    const plain = await gateway.call('POST', '/v1/chat/completions', {
      key,
      body: { model: 'agent-chat', messages: [{ role: 'user', content: 'hello there' }] },
    });
    expect(plain.statusCode, plain.body).toBe(200);
    const completion = plain.json<{
      choices: { message: { content: string } }[];
      usage: { prompt_tokens: number; completion_tokens: number };
    }>();
    expect(completion.choices[0]?.message.content).toBe('Simulated reply to: hello there');
    expect(completion.usage.prompt_tokens).toBeGreaterThan(0);
    const streamed = await gateway.call('POST', '/v1/chat/completions', {
      key,
      body: {
        model: 'agent-chat',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'stream it' }],
      },
    });
    const streamedText = streamed.body
      .split('\n\n')
      .filter((frame) => frame.startsWith('data: {'))
      .map(
        (frame) =>
          (
            JSON.parse(frame.slice('data: '.length)) as {
              choices: { delta: { content?: string } }[];
            }
          ).choices[0]?.delta.content ?? '',
      )
      .join('');
    expect(streamedText).toBe('Simulated reply to: stream it');
    expect(streamed.body).toContain('data: [DONE]');
    const charged = before - (await gateway.balance(accountId)).balance;
    const bills = await Promise.all(
      [plain, streamed].map(async (answer) => {
        const id = String(answer.headers['x-service-request-id']);
        return (await gateway.call('GET', `/v1/requests/${id}`, { key })).json<{
          bill: { amount: number };
        }>().bill.amount;
      }),
    );
    expect(charged).toBe(bills[0]! + bills[1]!);
  });

  it('a reasoning tool loop: the encrypted reasoning goes back unchanged, and the upstream accepts the turn', async () => {
    const first = await client.responses.create(
      {
        model: 'agent-chat',
        input: 'use the tool',
        tools,
        reasoning: { effort: 'low' },
        store: false,
      },
      idempotent(),
    );
    const reasoning = first.output.find((item) => item.type === 'reasoning');
    const call = first.output.find((item) => item.type === 'function_call');
    if (reasoning?.type !== 'reasoning' || call?.type !== 'function_call')
      throw new Error(`no reasoning and call: ${JSON.stringify(first.output)}`);
    expect(reasoning.encrypted_content).toMatch(/^tgo1\./);
    const history = [{ role: 'user' as const, content: 'use the tool' }, ...first.output];
    const output = {
      type: 'function_call_output' as const,
      call_id: call.call_id,
      output: 'found',
    };
    const second = await client.responses.create(
      {
        model: 'agent-chat',
        tools,
        reasoning: { effort: 'low' },
        store: false,
        input: [...history, output] as OpenAI.Responses.ResponseInput,
      },
      idempotent(),
    );
    expect(second.output_text).toContain('found');
    // The same turn without its reasoning: the upstream refuses the call (OpenAI's rule).
    const dropped = await gateway.call('POST', '/v1/responses', {
      key,
      body: {
        model: 'agent-chat',
        tools,
        reasoning: { effort: 'low' },
        store: false,
        input: [{ role: 'user', content: 'use the tool' }, call, output],
      },
    });
    expect(dropped.statusCode).toBe(502);
    const record = await gateway.call(
      'GET',
      `/v1/requests/${String(dropped.headers['x-service-request-id'])}`,
      { key },
    );
    expect(record.json()).toMatchObject({ status: 'failed', bill: null });
    // Altered on its way: not this gateway's token any more.
    const altered = await gateway.call('POST', '/v1/responses', {
      key,
      body: {
        model: 'agent-chat',
        tools,
        store: false,
        input: [
          { role: 'user', content: 'use the tool' },
          { ...reasoning, encrypted_content: `${reasoning.encrypted_content?.slice(0, -4)}AAAA` },
          call,
          output,
        ],
      },
    });
    expect(altered.statusCode).toBe(400);
    expect((await recordOf(second.id)).status).toBe('succeeded');
  });

  it('a conversation carrying encrypted reasoning stays on its channel: with that channel disabled it is refused, never moved', async () => {
    const first = await client.responses.create(
      { model: 'agent-chat', input: 'use the tool', tools, reasoning: { effort: 'low' } },
      idempotent(),
    );
    const call = first.output.find((item) => item.type === 'function_call');
    if (call?.type !== 'function_call') throw new Error('no call');
    const next = {
      model: 'agent-chat',
      tools,
      reasoning: { effort: 'low' },
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'pinned' }],
    };
    await gateway.admin('POST', '/admin/v1/channels/org-a/disable', { reason: 'test' });
    try {
      const refused = await gateway.call('POST', '/v1/responses', { key, body: next });
      expect(refused.statusCode).toBe(503);
      expect(refused.json()).toMatchObject({ error: { code: 'MODEL_UNAVAILABLE' } });
      // A new conversation is served by the other channel meanwhile.
      const fresh = await gateway.call('POST', '/v1/responses', {
        key,
        body: { model: 'agent-chat', input: 'a new conversation' },
      });
      expect(fresh.statusCode).toBe(200);
    } finally {
      await gateway.admin('POST', '/admin/v1/channels/org-a/enable');
    }
    const continued = await gateway.call('POST', '/v1/responses', { key, body: next });
    expect(continued.statusCode, continued.body).toBe(200);
    expect(continued.json<{ output: { type: string }[] }>().output.length).toBeGreaterThan(0);
  });

  it('a streamed Responses turn through a Responses upstream: its reasoning item carries the sealed reasoning', async () => {
    const response = await gateway.call('POST', '/v1/responses', {
      key,
      body: {
        model: 'agent-chat',
        input: 'think and answer',
        reasoning: { effort: 'low' },
        stream: true,
      },
    });
    expect(response.statusCode).toBe(200);
    const done = response.body
      .split('\n\n')
      .filter((frame) => frame.startsWith('event: response.output_item.done'))
      .map(
        (frame) =>
          JSON.parse(frame.split('\ndata: ')[1] ?? 'null') as {
            item: { type: string; encrypted_content?: string };
          },
      );
    expect(done.find((event) => event.item.type === 'reasoning')?.item.encrypted_content).toMatch(
      /^tgo1\./,
    );
    expect(response.body).toContain('event: response.completed');
  });
  it("an input beyond the model's context window (the Responses upstream's 400 context_length_exceeded): the caller's own 400 naming its field, plain and streamed; never moved to the next channel, nothing charged", async () => {
    const before = await gateway.balance(accountId);
    const prompt = 'a question far too long [sim:context_overflow]';
    const cases = [
      {
        path: '/v1/chat/completions',
        body: { model: 'agent-chat', messages: [{ role: 'user', content: prompt }] },
        param: 'messages',
      },
      { path: '/v1/responses', body: { model: 'agent-chat', input: prompt }, param: 'input' },
    ];
    for (const { path, body, param } of cases)
      for (const stream of [false, true]) {
        const answer = await gateway.call('POST', path, { key, body: { ...body, stream } });
        expect(answer.statusCode, answer.body).toBe(400);
        // Refused before the stream began: answered as JSON, in our words.
        expect(String(answer.headers['content-type'])).toContain('application/json');
        const { error } = answer.json<{
          error: { code: string; param: string; message: string };
        }>();
        expect(error).toMatchObject({ code: 'INVALID_INPUT', param });
        expect(error.message).toMatch(
          new RegExp(`^${param}: the input is longer than agent-chat's context window allows`),
        );
        expect(answer.body).not.toContain('Your input exceeds the context window');
        const id = String(answer.headers['x-service-request-id']);
        const record = (await gateway.call('GET', `/v1/requests/${id}`, { key })).json<{
          status: string;
          bill: unknown;
          reserve: { state: string } | null;
          error: { code: string } | null;
        }>();
        expect(record).toMatchObject({
          status: 'failed',
          bill: null,
          reserve: { state: 'released' },
          error: { code: 'INVALID_INPUT' },
        });
        // The first channel's refusal is final: org-b (which would refuse it too) never tried.
        const operatorView = await gateway.admin('GET', `/admin/v1/requests/${id}`);
        expect(operatorView['channel_attempts']).toEqual([
          {
            channel: 'org-a',
            upstream: 'responses-a',
            outcome: 'refused',
            detail: 'upstream status 400: context_length',
          },
        ]);
      }
    expect(await gateway.balance(accountId)).toEqual(before);
    const { data } = await gateway.admin('GET', '/admin/v1/channels');
    expect((data as { id: string }[]).find((channel) => channel.id === 'org-a')).toMatchObject({
      breaker: 'closed',
      consecutive_failures: 0,
    });
  });
});
