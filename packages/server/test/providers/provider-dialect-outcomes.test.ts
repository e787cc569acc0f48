import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readOpaqueToken } from '../../src/chat/opaque-parts.js';
import { defaultConfig } from '../../src/config/default-config.js';
import type { ProviderDialectName } from '../../src/config/schema.js';
import { dialects } from '../helpers/dialects.js';
import { recordedUpstream } from '../helpers/recorded-upstream.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

/**
 * Each provider dialect's recorded tool call, error and context-length error
 * (fixtures/provider-dialect-outcomes.json, written from the providers' documentation and public
 * examples, each with its source) replayed through the gateway into the record's state and the
 * bill. The risks: a provider's tool call lost or garbled on the way to the caller (Gemini's
 * thought signature dropped, so the next turn fails; a tool call read from the wrong place in a
 * stream), its usage misread on a tool-call answer; and a provider's error — in its own shape
 * (DeepSeek's 402, GLM's business codes, Gemini's list) — read as anything but a failure before
 * output: charged, left `submission_unknown` with its hold kept, or shown to the caller in the
 * provider's words rather than the spec's error shape.
 *
 * Prices (micro-yuan per million tokens): input 2 000 000, cache read 500 000, output 8 000 000,
 * reasoning = the output price; each line item ceil(tokens x price / 1e6). The tool-call bills:
 * - openai:   82 x 2 = 164; output 17 x 8 = 136; total 300.
 * - deepseek: uncached 420-384=36 x 2 = 72; cache read 384 x 0.5 = 192; output 96-64=32 x 8 =
 *             256; reasoning 64 x 8 = 512; total 1032.
 * - qwen:     226 x 2 = 452; output 19 x 8 = 152; total 604.
 * - glm:      uncached 230-128=102 x 2 = 204; cache read 128 x 0.5 = 64; output 70 x 8 = 560;
 *             total 828.
 * - kimi:     uncached 310-256=54 x 2 = 108; cache read 256 x 0.5 = 128; output 58 x 8 = 464;
 *             total 700.
 * - gemini:   120 x 2 = 240; thinking = total 290 - 120 - 18 = 152; output 18 x 8 = 144;
 *             reasoning 152 x 8 = 1216; total 1600.
 * An error answered before any output: the caller gets the spec's error shape (429 from the
 * provider: 503 MODEL_UNAVAILABLE; its context-length error: the caller's own 400 INVALID_INPUT
 * naming `messages`, in our words; any other refusal, Qwen's 400 `Arrearage` included: 502
 * UPSTREAM_ERROR), the record is `failed` with its hold released, and nothing is charged. A
 * context-length error is no fault of the channel: the model's next channel (one that would
 * answer) is never tried, and the channel's breaker does not count it.
 */
type Json = Record<string, unknown>;
interface ToolCallFixture {
  source: string;
  message: { tool_calls: Json[]; reasoning_content?: string } & Json;
  usage: Json;
  record_usage: { prompt: number; cached: number; completion: number; reasoning: number };
  bill: number;
}
interface ErrorFixture {
  source: string;
  status: number;
  body: unknown;
  caller: { status: number; code: string };
}
interface Outcomes {
  tool_call: ToolCallFixture;
  error: ErrorFixture;
  context_overflow: ErrorFixture;
}
const outcomes = JSON.parse(
  readFileSync(new URL('./fixtures/provider-dialect-outcomes.json', import.meta.url), 'utf8'),
) as Record<ProviderDialectName, Outcomes>;
/** Where each provider's stream puts its usage (the plain-answer fixtures' file). */
const streamUsagePlace = JSON.parse(
  readFileSync(new URL('./fixtures/provider-dialects.json', import.meta.url), 'utf8'),
) as Record<ProviderDialectName, { stream_usage_place: string }>;
const NAMES: ProviderDialectName[] = ['openai', 'deepseek', 'qwen', 'glm', 'kimi', 'gemini'];
const CASES = ['tool_call', 'error', 'context_overflow'] as const;

const [sqlite] = dialects;
/** A context-length model's channels: the provider that refuses, then one that would answer. */
const overflowChannels = (name: ProviderDialectName) => ({
  first: `${name}-overflow-first`,
  next: `${name}-overflow-next`,
});
/** Long enough that each fixture's input is within what the gateway finds credible. */
const PROMPT = 'hello '.repeat(1_000);
const simChat = defaultConfig.models.find((model) => model.id === 'sim-chat');
if (simChat === undefined) throw new Error('no sim-chat in the default configuration');
const { upstream: _single, upstream_model: _name, ...simChatAlone } = simChat;
const tools = [
  {
    type: 'function',
    function: { name: 'get_weather', parameters: { type: 'object', properties: {} } },
  },
];

/** A tool-call message as the provider streams it: role, reasoning, the call, finish with usage. */
function toolCallChunks(name: ProviderDialectName, fixture: ToolCallFixture, asked: boolean) {
  const base = { id: `cmpl-${name}`, object: 'chat.completion.chunk', created: 1_700_000_000 };
  const chunk = (delta: Json, finish: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const { reasoning_content: reasoning, tool_calls: calls } = fixture.message;
  const chunks: Json[] = [chunk({ role: 'assistant', content: '' })];
  if (reasoning !== undefined) chunks.push(chunk({ reasoning_content: reasoning }));
  calls.forEach((call, index) => {
    const { index: _index, ...rest } = call;
    chunks.push(chunk({ tool_calls: [{ index, ...rest }] }));
  });
  const usage = fixture.usage;
  const finish = chunk({}, 'tool_calls');
  const place = streamUsagePlace[name].stream_usage_place;
  if (place === 'finish_choice')
    chunks.push({ ...finish, choices: [{ ...finish.choices[0], usage }] });
  else if (place === 'finish_chunk') chunks.push({ ...finish, usage });
  else {
    chunks.push(finish);
    if (asked) chunks.push({ ...base, choices: [], usage });
  }
  return chunks;
}

/**
 * Answers `/<dialect>/<case>/v1/chat/completions` with that dialect's recorded outcome, counting
 * the calls each `<dialect>/<case>` got.
 */
async function recordedProviders(): Promise<{
  close: () => Promise<void>;
  url: string;
  calls: Map<string, number>;
}> {
  const calls = new Map<string, number>();
  const upstream = await recordedUpstream((path, received, response) => {
    const [, name = '', kind = ''] = path.split('/');
    calls.set(`${name}/${kind}`, (calls.get(`${name}/${kind}`) ?? 0) + 1);
    const outcome = outcomes[name as ProviderDialectName][kind as (typeof CASES)[number]];
    const body = received as Json;
    response.setHeader('x-request-id', `up-${name}-${kind}`);
    if (!('message' in outcome)) {
      response.statusCode = outcome.status;
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify(outcome.body));
      return;
    }
    if (body['stream'] !== true) {
      response.setHeader('content-type', 'application/json');
      response.end(
        JSON.stringify({
          id: `cmpl-${name}`,
          object: 'chat.completion',
          created: 1_700_000_000,
          model: body['model'],
          choices: [{ index: 0, message: outcome.message, finish_reason: 'tool_calls' }],
          usage: outcome.usage,
        }),
      );
      return;
    }
    response.setHeader('content-type', 'text/event-stream');
    const asked = (body['stream_options'] as { include_usage?: boolean } | undefined)
      ?.include_usage;
    for (const chunk of toolCallChunks(name as ProviderDialectName, outcome, asked === true))
      response.write(`data: ${JSON.stringify(chunk)}\n\n`);
    response.end('data: [DONE]\n\n');
  });
  return { url: upstream.url, calls, close: upstream.close };
}

/** The provider's own error message (Gemini sends its error object in a list). */
function providerMessage(body: unknown): string {
  const error = (Array.isArray(body) ? body[0] : body) as { error: { message: string } };
  return error.error.message;
}

/** The tool calls a streamed answer's chunks add up to, as an OpenAI client library keeps them. */
function streamedToolCalls(body: string): Json[] {
  const calls: Json[] = [];
  for (const frame of body.split('\n\n')) {
    const data = /^data: (.*)$/m.exec(frame)?.[1];
    if (data === undefined || data === '[DONE]') continue;
    const chunk = JSON.parse(data) as { choices?: { delta: { tool_calls?: Json[] } }[] };
    for (const choice of chunk.choices ?? [])
      for (const call of choice.delta.tool_calls ?? []) {
        const { index, ...rest } = call as Json & { index: number };
        calls[index] = { ...calls[index], ...rest };
      }
  }
  return calls;
}

describe('provider dialects: recorded tool calls and errors into the record and the bill', () => {
  let upstream: Awaited<ReturnType<typeof recordedProviders>>;
  let gateway: TestGateway;
  let key: string;
  let accountId: string;
  beforeAll(async () => {
    upstream = await recordedProviders();
    const pairs = NAMES.flatMap((name) => CASES.map((kind) => ({ name, kind })));
    gateway = await startGateway(sqlite!, {
      config: testConfig({
        upstreams: Object.fromEntries(
          pairs.map(({ name, kind }) => [
            `${name}-${kind}`,
            { kind: 'openai', base_url: `${upstream.url}/${name}/${kind}/v1`, dialect: name },
          ]),
        ),
        models: pairs.map(({ name, kind }) => ({
          ...simChatAlone,
          id: `${name}-${kind}`,
          // The context-length model has a second channel, one that would answer: never tried.
          channels:
            kind === 'context_overflow'
              ? [
                  {
                    id: overflowChannels(name).first,
                    upstream: `${name}-${kind}`,
                    model: `${name}-model`,
                    priority: 1,
                  },
                  {
                    id: overflowChannels(name).next,
                    upstream: `${name}-tool_call`,
                    model: `${name}-model`,
                  },
                ]
              : [{ upstream: `${name}-${kind}`, model: `${name}-model` }],
          prices: {
            input_per_million_tokens: 2_000_000,
            cached_input_per_million_tokens: 500_000,
            output_per_million_tokens: 8_000_000,
          },
        })),
      }),
    });
    ({ key, accountId } = await gateway.account(1_000_000));
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
    await upstream.close();
  });

  /** The calls a dialect's context-length provider and its answering one got so far. */
  const upstreamCalls = (name: ProviderDialectName) => ({
    overflow: upstream.calls.get(`${name}/context_overflow`) ?? 0,
    toolCall: upstream.calls.get(`${name}/tool_call`) ?? 0,
  });
  const ask = (model: string, stream: boolean) =>
    gateway.call('POST', '/v1/chat/completions', {
      key,
      body: {
        model,
        messages: [{ role: 'user', content: PROMPT }],
        tools,
        max_tokens: 1_000,
        stream,
      },
    });
  const recordOf = async (response: { headers: Record<string, unknown> }) =>
    (
      await gateway.call(
        'GET',
        `/v1/requests/${String(response.headers['x-service-request-id'])}`,
        {
          key,
        },
      )
    ).json<{
      status: string;
      usage: Record<string, number> | null;
      bill: { amount: number } | null;
      reserve: { state: string } | null;
      error: { code: string } | null;
    }>();

  for (const name of NAMES) {
    it(`${name}: a tool call reaches the caller as the provider made it, plain and streamed, billed to the micro-yuan`, async () => {
      const fixture = outcomes[name].tool_call;
      const recorded = fixture.message.tool_calls[0] ?? {};
      const signature = (recorded['extra_content'] as { google?: { thought_signature?: string } })
        ?.google?.thought_signature;
      for (const stream of [false, true]) {
        const before = (await gateway.balance(accountId)).balance;
        const answer = await ask(`${name}-tool_call`, stream);
        expect(answer.statusCode, answer.body).toBe(200);
        const calls = stream
          ? streamedToolCalls(answer.body)
          : answer.json<{ choices: { message: { tool_calls: Json[] } }[] }>().choices[0]!.message
              .tool_calls;
        expect(calls).toHaveLength(1);
        expect(calls[0]).toMatchObject({
          id: recorded['id'],
          type: 'function',
          function: recorded['function'],
        });
        // Gemini's signature, sealed for the caller: the provider's own, unchanged inside.
        const sealed = (calls[0]?.['extra_content'] as { google?: { thought_signature?: string } })
          ?.google?.thought_signature;
        if (signature === undefined) expect(calls[0]?.['extra_content']).toBeUndefined();
        else
          expect(readOpaqueToken(sealed ?? '')?.payload).toEqual({ thought_signature: signature });
        const record = await recordOf(answer);
        expect(record.status).toBe('succeeded');
        expect(record.usage).toMatchObject({
          prompt_tokens: fixture.record_usage.prompt,
          cached_tokens: fixture.record_usage.cached,
          completion_tokens: fixture.record_usage.completion,
          reasoning_tokens: fixture.record_usage.reasoning,
        });
        expect(record.bill?.amount).toBe(fixture.bill);
        expect((await gateway.balance(accountId)).balance).toBe(before - fixture.bill);
      }
    });

    for (const kind of ['error', 'context_overflow'] as const)
      it(`${name}: its ${kind === 'error' ? 'error' : 'context-length error'} (${outcomes[name][kind].status}) is a failure before output: the spec's error, released, nothing charged`, async () => {
        const fixture = outcomes[name][kind];
        for (const stream of [false, true]) {
          const before = await gateway.balance(accountId);
          const called = { ...upstreamCalls(name) };
          const answer = await ask(`${name}-${kind}`, stream);
          expect(answer.statusCode, answer.body).toBe(fixture.caller.status);
          // Nothing streamed yet: the spec's error object, as JSON, never the provider's body.
          expect(String(answer.headers['content-type'])).toContain('application/json');
          const { error } = answer.json<{
            error: { code: string; message: string; param?: string };
          }>();
          expect(error.code).toBe(fixture.caller.code);
          expect(typeof error.message).toBe('string');
          expect(answer.body).not.toContain(providerMessage(fixture.body));
          const record = await recordOf(answer);
          expect(record.status).toBe('failed');
          expect(record.error?.code).toBe(fixture.caller.code);
          expect(record.bill).toBeNull();
          expect(record.reserve?.state).toBe('released');
          expect(await gateway.balance(accountId)).toEqual(before);
          if (kind === 'error') {
            // Not the caller's input: never read as a context-length error.
            expect(error.param).toBeUndefined();
            continue;
          }
          // The caller's own 400, in our words: the field and what to do about it.
          expect(error.param).toBe('messages');
          expect(error.message).toBe(
            `messages: the input is longer than ${name}-${kind}'s context window allows (the model's provider refused it before any output; nothing was charged); shorten it or ask for fewer output tokens`,
          );
          // One call, on the first channel; the next (which would answer) never tried.
          expect(upstreamCalls(name)).toEqual({
            overflow: called.overflow + 1,
            toolCall: called.toolCall,
          });
          const operatorView = await gateway.admin(
            'GET',
            `/admin/v1/requests/${String(answer.headers['x-service-request-id'])}`,
          );
          expect(operatorView['channel_attempts']).toEqual([
            {
              channel: overflowChannels(name).first,
              upstream: `${name}-${kind}`,
              outcome: 'refused',
              detail: 'upstream status 400: context_length',
            },
          ]);
        }
        if (kind === 'context_overflow') {
          // No fault of the channel: its breaker counted nothing.
          const { data } = await gateway.admin('GET', '/admin/v1/channels');
          expect(
            (data as { id: string }[]).find(
              (channel) => channel.id === overflowChannels(name).first,
            ),
          ).toMatchObject({ breaker: 'closed', consecutive_failures: 0 });
        }
      });
  }
});
