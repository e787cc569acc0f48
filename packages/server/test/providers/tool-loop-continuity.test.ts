import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelConfig, ProviderDialectName } from '../../src/config/schema.js';
import { readOpaqueToken } from '../../src/chat/opaque-parts.js';
import { PROVIDER_DIALECTS } from '../../src/providers/openai-compatible/provider-dialects.js';
import {
  PARAMETERS,
  QUESTION,
  simChatModel,
  TOOL_LOOP_COMBINATIONS,
} from '../helpers/agent-turns.js';
import { chargedTurns, geminiChannelPair } from '../helpers/charged-turns.js';
import { dialects } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

/**
 * Issue 34, item 2: a two-turn tool conversation through each provider dialect, as an OpenAI
 * client has it — turn 1 answers a tool call, turn 2 sends that assistant message back with the
 * tool's result. The risk: the state a provider requires back with a tool call (DeepSeek's and
 * Kimi's `reasoning_content` with thinking on, Gemini's thought signature) lost on the way out
 * to the caller or on the way back in, so every agent's second turn fails (the upstream's 400,
 * which the caller reads as 502); or a field a provider refuses (`thinking` to Gemini, a
 * `video_url` part to a provider without video) sent anyway.
 *
 * The upstreams are the simulator answering as each provider (`/dialect/<name>/v1`), which
 * enforces each provider's rule (simulator/chat-continuity.ts): DeepSeek and Kimi refuse an
 * assistant tool call without its `reasoning_content` when thinking is on, Gemini signs each
 * tool call and refuses the current turn's call without its signature, or with one altered or
 * made for another organisation. Prices: 1 micro-yuan per input token, 3 per output token
 * (reasoning included, at the output price), so each charge is prompt + 3 x completion of what
 * the record says the upstream reported, exactly; the balance moves by that and nothing else.
 */
const NAMES = Object.keys(PROVIDER_DIALECTS) as ProviderDialectName[];
const [sqlite] = dialects;

type Json = Record<string, unknown>;
const tools = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      parameters: PARAMETERS,
    },
  },
];
const question = { role: 'user', content: QUESTION };

/** How each dialect's caller turns thinking on: the field its provider reads, after translation. */
const THINKING: Readonly<Record<ProviderDialectName, Json>> = {
  // Sent as OpenAI's reasoning_effort.
  openai: { thinking: { type: 'enabled', budget_tokens: 2_048 } },
  deepseek: { thinking: { type: 'enabled' } },
  // Sent as Qwen's enable_thinking / thinking_budget.
  qwen: { thinking: { type: 'enabled', budget_tokens: 1_024 } },
  glm: { thinking: { type: 'enabled' } },
  kimi: { thinking: { type: 'enabled' } },
  // Sent as Gemini's reasoning_effort: its endpoint refuses `thinking` by name.
  gemini: { thinking: { type: 'enabled', budget_tokens: 2_048 } },
};

/**
 * What the next turn gets when an OpenAI client drops the provider's state (the field named):
 * the upstream's refusal where the provider refuses it (502 UPSTREAM_ERROR, nothing charged),
 * else an answer (GLM asks for reasoning back but does not refuse without it; OpenAI and Qwen
 * are not sent it at all).
 */
const DROPPED: Readonly<
  Record<ProviderDialectName, { field: 'reasoning_content' | 'extra_content'; status: number }>
> = {
  openai: { field: 'reasoning_content', status: 200 },
  deepseek: { field: 'reasoning_content', status: 502 },
  qwen: { field: 'reasoning_content', status: 200 },
  glm: { field: 'reasoning_content', status: 200 },
  kimi: { field: 'reasoning_content', status: 502 },
  gemini: { field: 'extra_content', status: 502 },
};

interface AssistantMessage {
  role: 'assistant';
  content: string | null;
  reasoning_content?: string;
  tool_calls: {
    id: string;
    type: 'function';
    function: { name: string; arguments: string };
    extra_content?: { google: { thought_signature: string } };
  }[];
}

interface RecordBody {
  status: string;
  usage: Record<string, number> | null;
  bill: { amount: number } | null;
  reserve: { state: string } | null;
  result: { choices: { message: AssistantMessage }[] } | null;
}

/** A streamed answer's chunks put together as an OpenAI client library does. */
function assembled(body: string): AssistantMessage {
  const message: AssistantMessage = { role: 'assistant', content: null, tool_calls: [] };
  for (const frame of body.split('\n\n')) {
    const data = /^data: (.*)$/m.exec(frame)?.[1];
    if (data === undefined || data === '[DONE]') continue;
    const chunk = JSON.parse(data) as { choices?: { delta: Json }[] };
    for (const { delta } of chunk.choices ?? []) {
      if (typeof delta['content'] === 'string' && delta['content'] !== '')
        message.content = (message.content ?? '') + delta['content'];
      if (typeof delta['reasoning_content'] === 'string')
        message.reasoning_content = (message.reasoning_content ?? '') + delta['reasoning_content'];
      for (const call of (delta['tool_calls'] ?? []) as (Json & { index: number })[]) {
        const fn = (call['function'] ?? {}) as { name?: string; arguments?: string };
        const existing = message.tool_calls[call.index] ?? {
          id: '',
          type: 'function' as const,
          function: { name: '', arguments: '' },
        };
        if (typeof call['id'] === 'string') existing.id ||= call['id'];
        existing.function.name += fn.name ?? '';
        existing.function.arguments += fn.arguments ?? '';
        if (call['extra_content'] !== undefined)
          existing.extra_content = call['extra_content'] as NonNullable<
            AssistantMessage['tool_calls'][0]['extra_content']
          >;
        message.tool_calls[call.index] = existing;
      }
    }
  }
  return message;
}

/** Tool loops with thinking, streamed or not; video parts for the refusal case. */
const COMBINATIONS: ModelConfig['combinations'] = [
  ...TOOL_LOOP_COMBINATIONS,
  ['video_input', 'streaming'],
];

describe.each(sqlite === undefined ? [] : [sqlite])(
  'tool-loop continuity per provider dialect',
  (dialect) => {
    let gateway: TestGateway;
    let key: string;
    let turns: ReturnType<typeof chargedTurns>;
    beforeAll(async () => {
      const model = (id: string, upstream: string) => simChatModel(id, upstream, COMBINATIONS);
      const gemini = geminiChannelPair(model);
      gateway = await startGateway(dialect, {
        config: testConfig({
          upstreams: {
            ...Object.fromEntries(
              NAMES.map((name) => [`sim-${name}`, { kind: 'simulator', dialect: name }]),
            ),
            ...gemini.upstreams,
          },
          models: [...NAMES.map((name) => model(`${name}-chat`, `sim-${name}`)), gemini.pair],
        }),
        services: { upstreamKeys: gemini.upstreamKeys },
      });
      const made = await gateway.account(100_000_000);
      key = made.key;
      turns = chargedTurns(gateway, key, made.accountId);
    });
    afterAll(async () => {
      await gateway.expectLedgerClean();
      await gateway.close();
    });

    /** Sends a turn and checks its bill (charged-turns.ts): the assistant message and the record. */
    async function charged(body: Json): Promise<{ message: AssistantMessage; record: RecordBody }> {
      const { body: answer, record } = await turns.charged('/v1/chat/completions', body);
      const message =
        body['stream'] === true
          ? assembled(answer)
          : (JSON.parse(answer) as { choices: { message: AssistantMessage }[] }).choices[0]!
              .message;
      return { message, record: record as RecordBody };
    }

    /** Sends a turn the gateway or the upstream refuses: its error; nothing charged. */
    async function refused(body: Json, status: number) {
      const { body: answer } = await turns.refused('/v1/chat/completions', body, status);
      return JSON.parse(answer) as { error: { code: string; param?: string; message: string } };
    }

    const turnOne = (name: ProviderDialectName, stream: boolean, model = `${name}-chat`) =>
      charged({ model, messages: [question], tools, stream, ...THINKING[name] });
    const turnTwo = (
      name: ProviderDialectName,
      assistant: AssistantMessage,
      stream: boolean,
      model = `${name}-chat`,
    ) => ({
      model,
      tools,
      stream,
      ...THINKING[name],
      messages: [
        question,
        assistant,
        { role: 'tool', tool_call_id: assistant.tool_calls[0]?.id, content: 'Sunny, 21 C' },
      ],
    });

    for (const name of NAMES) {
      it(`${name}: the tool call goes back as the caller received it, plain and streamed: 200 and the exact charge`, async () => {
        for (const stream of [false, true]) {
          const first = await turnOne(name, stream);
          const assistant = first.message;
          expect(assistant.tool_calls[0]?.function.name).toBe('get_weather');
          // Thinking was on (translated where the provider names it otherwise): reasoning shown.
          expect(assistant.reasoning_content).toMatch(/^Thinking about/);
          const signature = assistant.tool_calls[0]?.extra_content?.google.thought_signature;
          if (PROVIDER_DIALECTS[name].thoughtSignatures) {
            // Sealed for the caller, naming the channel that made it; the record keeps it too.
            expect(readOpaqueToken(signature ?? '')).toMatchObject({
              kind: 'gemini_thought_signature',
            });
            // Plain or streamed alike: a caller that reads the record instead of the answer
            // (its request timed out) can send the turn back as well.
            expect(first.record.result?.choices[0]?.message.tool_calls[0]?.extra_content).toEqual(
              assistant.tool_calls[0]?.extra_content,
            );
          } else expect(assistant.tool_calls[0]?.extra_content).toBeUndefined();
          const second = await charged(turnTwo(name, assistant, stream));
          expect(second.message.content).toContain('Sunny, 21 C');
        }
      });

      const dropped = DROPPED[name];
      it(`${name}: the tool call sent back without its ${dropped.field}: ${dropped.status === 200 ? 'answered (the provider does not require it)' : 'refused by the provider, nothing charged'}`, async () => {
        const { message } = await turnOne(name, false);
        const call = message.tool_calls[0];
        if (call === undefined) throw new Error('no tool call');
        const { extra_content: _signature, ...bareCall } = call;
        const { reasoning_content: _reasoning, ...bare } = message;
        const without =
          dropped.field === 'extra_content'
            ? { ...message, tool_calls: [bareCall] }
            : { ...bare, tool_calls: message.tool_calls };
        if (dropped.status === 200) {
          await charged(turnTwo(name, without, false));
          return;
        }
        const error = await refused(turnTwo(name, without, false), dropped.status);
        expect(error.error.code).toBe('UPSTREAM_ERROR');
      });
    }

    it('gemini: a thought signature this gateway did not seal is refused by name, before anything is sent', async () => {
      const { message } = await turnOne('gemini', false);
      const call = message.tool_calls[0];
      if (call === undefined) throw new Error('no tool call');
      const error = await refused(
        turnTwo(
          'gemini',
          {
            ...message,
            tool_calls: [{ ...call, extra_content: { google: { thought_signature: 'CsgBraw' } } }],
          },
          false,
        ),
        400,
      );
      expect(error.error).toMatchObject({
        code: 'INVALID_INPUT',
        param: 'messages.1.tool_calls.0.extra_content.google.thought_signature',
      });
    });

    it('gemini: a signature goes back to the channel that made it: another channel refuses it, the router moves it on; with that channel disabled, 400 naming it', async () => {
      // Turn 1 on the lower-priority channel (the other is disabled meanwhile).
      await gateway.admin('POST', '/admin/v1/channels/gemini-a/disable', { reason: 'test' });
      let first: Awaited<ReturnType<typeof turnOne>>;
      try {
        first = await turnOne('gemini', false, 'gemini-pair');
      } finally {
        await gateway.admin('POST', '/admin/v1/channels/gemini-a/enable');
      }
      const next = turnTwo('gemini', first.message, false, 'gemini-pair');
      // gemini-a is tried first (priority): it refuses before sending; gemini-b, which made the
      // signature (and whose simulator organisation alone verifies it), answers.
      const response = await gateway.call('POST', '/v1/chat/completions', { key, body: next });
      expect(response.statusCode, response.body).toBe(200);
      const trail = (await gateway.admin(
        'GET',
        `/admin/v1/requests/${String(response.headers['x-service-request-id'])}`,
      )) as { channel_attempts: { channel: string; outcome: string }[] };
      expect(trail.channel_attempts.map(({ channel, outcome }) => `${channel} ${outcome}`)).toEqual(
        ['gemini-a not_processed', 'gemini-b succeeded'],
      );
      await gateway.admin('POST', '/admin/v1/channels/gemini-b/disable', { reason: 'test' });
      try {
        const error = await refused(next, 400);
        expect(error.error).toMatchObject({
          code: 'INVALID_INPUT',
          param: 'messages.1.tool_calls.0.extra_content.google.thought_signature',
        });
        expect(error.error.message).toContain('gemini-b');
      } finally {
        await gateway.admin('POST', '/admin/v1/channels/gemini-b/enable');
      }
    });

    it('a video_url part: refused by name where the provider has no video input, answered where it has', async () => {
      const messages = [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What happens in this clip?' },
            { type: 'video_url', video_url: { url: 'https://media.example.com/clip.mp4' } },
          ],
        },
      ];
      for (const name of NAMES) {
        const body = { model: `${name}-chat`, messages };
        if (PROVIDER_DIALECTS[name].videoParts) {
          await charged(body);
          continue;
        }
        const error = await refused(body, 400);
        expect(error.error, name).toMatchObject({
          code: 'INVALID_INPUT',
          param: 'messages.0.content.1.type',
        });
      }
    });
  },
);
