import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { opaqueToken, readOpaqueToken } from '../../src/chat/opaque-parts.js';
import { parseInput } from '../../src/errors/input-schema.js';
import { anthropicParam } from '../../src/http/dialects/messages/chat-error-paths.js';
import { messagesBodySchema } from '../../src/http/dialects/messages/messages-request.js';
import { toChatBody } from '../../src/http/dialects/messages/to-chat-body.js';
import type {
  ResponsesBody,
  ResponsesInputItem,
} from '../../src/http/dialects/responses/responses-request.js';
import { responsesToChat } from '../../src/http/dialects/responses/responses-to-chat.js';
import { MESSAGES_TOOLS, QUESTION, RESPONSES_TOOLS, simChatModel } from '../helpers/agent-turns.js';
import { chargedTurns, geminiChannelPair } from '../helpers/charged-turns.js';
import { dialects } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import { messagesContent, responsesOutput } from '../helpers/sse-frames.js';

/**
 * Risk: Claude Code (`/v1/messages`) or Codex (`/v1/responses`) in a tool loop on a Gemini 3
 * channel. Gemini signs each answer's first tool call (`extra_content.google.thought_signature`)
 * and refuses the next turn without it; a tool_use block and a function_call item have no field
 * for it. The gateway shows it as a thinking block (empty, the sealed token as its signature) or
 * a reasoning item (the token as its `encrypted_content`) just before the call, which both
 * agents give back unchanged, and puts it back on that call: else every second turn of the loop
 * is Gemini's 400, which the caller reads as 502.
 *
 * The upstreams are the simulator in Gemini's dialect, which signs for the caller's organisation
 * and refuses a call without its signature, or with one it did not make, as Gemini 3 does
 * (simulator/chat-continuity.ts). Prices: 1 micro-yuan per input token, 3 per output token.
 */
const [sqlite] = dialects;
type Turns = ReturnType<typeof chargedTurns>;

type Json = Record<string, unknown>;

const isSignature = (token: unknown) =>
  typeof token === 'string' && readOpaqueToken(token)?.kind === 'gemini_thought_signature';

describe.each(sqlite === undefined ? [] : [sqlite])(
  'Gemini thought signatures through /v1/messages and /v1/responses',
  (dialect) => {
    let gateway: TestGateway;
    let key: string;
    let charged: Turns['charged'];
    let refused: Turns['refused'];
    beforeAll(async () => {
      const gemini = geminiChannelPair(simChatModel);
      gateway = await startGateway(dialect, {
        config: testConfig({
          upstreams: gemini.upstreams,
          models: [simChatModel('gemini-chat', 'gemini-org-a'), gemini.pair],
        }),
        services: { upstreamKeys: gemini.upstreamKeys },
      });
      const { key: made, accountId } = await gateway.account(100_000_000);
      key = made;
      ({ charged, refused } = chargedTurns(gateway, key, accountId));
    });
    afterAll(async () => {
      await gateway.expectLedgerClean();
      await gateway.close();
    });

    /** Which channels a request tried, and how each ended. */
    async function trail(body: string, url: string): Promise<string[]> {
      const response = await gateway.call('POST', url, { key, body: JSON.parse(body) as Json });
      expect(response.statusCode, response.body).toBe(200);
      const record = (await gateway.admin(
        'GET',
        `/admin/v1/requests/${String(response.headers['x-service-request-id'])}`,
      )) as { channel_attempts: { channel: string; outcome: string }[] };
      return record.channel_attempts.map(({ channel, outcome }) => `${channel} ${outcome}`);
    }

    /** Runs `turn` with channel gemini-a disabled, so that gemini-b makes the signature. */
    async function onChannelB<T>(turn: () => Promise<T>): Promise<T> {
      await gateway.admin('POST', '/admin/v1/channels/gemini-a/disable', { reason: 'test' });
      try {
        return await turn();
      } finally {
        await gateway.admin('POST', '/admin/v1/channels/gemini-a/enable');
      }
    }

    async function withChannelBDisabled(check: () => Promise<void>): Promise<void> {
      await gateway.admin('POST', '/admin/v1/channels/gemini-b/disable', { reason: 'test' });
      try {
        await check();
      } finally {
        await gateway.admin('POST', '/admin/v1/channels/gemini-b/enable');
      }
    }

    describe('/v1/messages (as Claude Code sends it)', () => {
      const request = (model: string, stream: boolean, messages: unknown[]) => ({
        model,
        max_tokens: 3_000,
        thinking: { type: 'adaptive', display: 'omitted' },
        tools: MESSAGES_TOOLS,
        stream,
        messages,
      });
      const first = async (stream: boolean, model = 'gemini-chat') => {
        const { body } = await charged(
          '/v1/messages',
          request(model, stream, [{ role: 'user', content: QUESTION }]),
        );
        return (stream ? messagesContent(body) : (JSON.parse(body) as Json)['content']) as Json[];
      };
      const second = (stream: boolean, content: Json[], model = 'gemini-chat') => {
        const use = content.find((block) => block['type'] === 'tool_use');
        if (use === undefined) throw new Error('no tool_use');
        return request(model, stream, [
          { role: 'user', content: QUESTION },
          { role: 'assistant', content },
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: use['id'], content: 'Sunny, 21 C' }],
          },
        ]);
      };

      it('the signature comes as a thinking block just before its tool_use and goes back as received, plain and streamed: 200 and the exact charge; without it, Gemini refuses and nothing is charged', async () => {
        for (const stream of [false, true]) {
          const content = await first(stream);
          const use = content.findIndex((block) => block['type'] === 'tool_use');
          expect(use).toBeGreaterThan(0);
          expect(content[use - 1]).toMatchObject({ type: 'thinking', thinking: '' });
          expect(isSignature(content[use - 1]?.['signature'])).toBe(true);
          const { body: answer } = await charged('/v1/messages', second(stream, content));
          const blocks = stream
            ? messagesContent(answer)
            : ((JSON.parse(answer) as Json)['content'] as Json[]);
          const said = blocks.flatMap((block) => (block['type'] === 'text' ? [block['text']] : []));
          expect(said.join('')).toContain('Sunny, 21 C');
        }
        const content = await first(false);
        const without = content.filter((block) => !isSignature(block['signature']));
        const { record } = await refused('/v1/messages', second(false, without), 502);
        expect(record.error?.code).toBe('UPSTREAM_ERROR');
      });

      it('the signature goes back to the channel that made it: another channel refuses it before sending and the router moves it on; with that channel disabled, 400 naming the thinking block', async () => {
        const content = await onChannelB(() => first(false, 'gemini-pair'));
        const next = JSON.stringify(second(false, content, 'gemini-pair'));
        expect(await trail(next, '/v1/messages')).toEqual([
          'gemini-a not_processed',
          'gemini-b succeeded',
        ]);
        const signatureAt = content.findIndex((block) => isSignature(block['signature']));
        await withChannelBDisabled(async () => {
          const { record } = await refused('/v1/messages', JSON.parse(next) as Json, 400);
          expect(record.error).toMatchObject({
            code: 'INVALID_INPUT',
            param: `messages.1.content.${signatureAt}.signature`,
          });
          expect(record.error?.message).toContain('gemini-b');
        });
      });
    });

    describe('/v1/responses (as Codex sends it: store false, the whole history)', () => {
      const request = (model: string, stream: boolean, input: unknown[]) => ({
        model,
        reasoning: { effort: 'medium' },
        include: ['reasoning.encrypted_content'],
        store: false,
        tools: RESPONSES_TOOLS,
        stream,
        input,
      });
      const question = { type: 'message', role: 'user', content: QUESTION };
      const first = async (stream: boolean, model = 'gemini-chat') => {
        const { body } = await charged('/v1/responses', request(model, stream, [question]));
        return (stream ? responsesOutput(body) : (JSON.parse(body) as Json)['output']) as Json[];
      };
      const second = (stream: boolean, output: Json[], model = 'gemini-chat') => {
        const call = output.find((item) => item['type'] === 'function_call');
        if (call === undefined) throw new Error('no function_call');
        return request(model, stream, [
          question,
          ...output,
          { type: 'function_call_output', call_id: call['call_id'], output: 'Sunny, 21 C' },
        ]);
      };

      it('the signature comes as a reasoning item just before its function_call and goes back as received, plain and streamed: 200 and the exact charge; without it, Gemini refuses and nothing is charged', async () => {
        for (const stream of [false, true]) {
          const output = await first(stream);
          const call = output.findIndex((item) => item['type'] === 'function_call');
          expect(call).toBeGreaterThan(0);
          expect(output[call - 1]).toMatchObject({ type: 'reasoning', summary: [] });
          expect(isSignature(output[call - 1]?.['encrypted_content'])).toBe(true);
          const { body: answer } = await charged('/v1/responses', second(stream, output));
          const items = stream
            ? responsesOutput(answer)
            : ((JSON.parse(answer) as Json)['output'] as Json[]);
          const said = items.flatMap((item) =>
            item['type'] === 'message'
              ? (item['content'] as Json[]).map((part) => String(part['text']))
              : [],
          );
          expect(said.join('')).toContain('Sunny, 21 C');
        }
        const output = await first(false);
        const without = output.filter((item) => !isSignature(item['encrypted_content']));
        const { record } = await refused('/v1/responses', second(false, without), 502);
        expect(record.error?.code).toBe('UPSTREAM_ERROR');
      });

      it('the signature goes back to the channel that made it; with that channel disabled, 400 naming the reasoning item', async () => {
        const output = await onChannelB(() => first(false, 'gemini-pair'));
        const next = JSON.stringify(second(false, output, 'gemini-pair'));
        expect(await trail(next, '/v1/responses')).toEqual([
          'gemini-a not_processed',
          'gemini-b succeeded',
        ]);
        const signatureAt = output.findIndex((item) => isSignature(item['encrypted_content']));
        await withChannelBDisabled(async () => {
          const { record } = await refused('/v1/responses', JSON.parse(next) as Json, 400);
          expect(record.error).toMatchObject({
            code: 'INVALID_INPUT',
            param: `input.${1 + signatureAt}.encrypted_content`,
          });
        });
      });
    });
  },
);

describe('the translation puts a thought signature back on the call after it', () => {
  const token = opaqueToken({
    channel: 'gemini-a',
    kind: 'gemini_thought_signature',
    payload: { thought_signature: 'CsgBraw' },
  });
  const call = (id: string, signed: boolean) => ({
    id,
    type: 'function',
    function: { name: 'f', arguments: '{}' },
    ...(signed ? { extra_content: { google: { thought_signature: token } } } : {}),
  });

  it('/v1/messages: on the next tool_use only; a block with no tool_use after it carries nothing', () => {
    const translated = toChatBody(
      parseInput(messagesBodySchema, {
        model: 'sim-chat',
        max_tokens: 2_000,
        messages: [
          { role: 'user', content: 'q' },
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'Looking it up.' },
              { type: 'thinking', thinking: '', signature: token },
              { type: 'tool_use', id: 'call_1', name: 'f', input: {} },
              { type: 'tool_use', id: 'call_2', name: 'f', input: {} },
              { type: 'thinking', thinking: '', signature: token },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'call_1', content: 'r' },
              { type: 'tool_result', tool_use_id: 'call_2', content: 'r' },
            ],
          },
        ],
      }),
    );
    const messages = translated.body['messages'] as Json[];
    expect(messages[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'Looking it up.' }],
      tool_calls: [call('call_1', true), call('call_2', false)],
    });
    // Not an opaque part between messages: it travels on its call (no pinning of its own).
    expect(translated.opaque).toEqual([]);
    // An adapter's refusal of it names the block the caller sent.
    expect(
      anthropicParam(
        'messages.1.tool_calls.0.extra_content.google.thought_signature',
        translated.origins,
      ),
    ).toBe('messages.1.content.1.signature');
    expect(anthropicParam('messages.1.tool_calls.1.function.arguments', translated.origins)).toBe(
      'messages.1.content.3.input',
    );
  });

  it('/v1/responses: on the function_call right after it, joining the assistant turn; any other item in between leaves it behind', () => {
    const user = { type: 'message', role: 'user', content: 'q' };
    const signature = { type: 'reasoning', summary: [], encrypted_content: token };
    const functionCall = (id: string) => ({
      type: 'function_call',
      call_id: id,
      name: 'f',
      arguments: '{}',
    });
    const items = [
      user,
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'a' }] },
      signature,
      functionCall('call_1'),
      functionCall('call_2'),
      signature,
      { type: 'function_call_output', call_id: 'call_1', output: 'r' },
      { type: 'function_call_output', call_id: 'call_2', output: 'r' },
    ] as ResponsesInputItem[];
    const translated = responsesToChat(
      { model: 'sim-chat' } as ResponsesBody,
      items.map((item, index) => ({ item, path: `input.${index}` })),
    );
    expect((translated.body['messages'] as Json[]).slice(0, 2)).toEqual([
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content: 'a',
        tool_calls: [call('call_1', true), call('call_2', false)],
      },
    ]);
    expect(translated.opaque).toEqual([]);
    expect(
      translated.fieldName('messages.1.tool_calls.0.extra_content.google.thought_signature'),
    ).toBe('input.2.encrypted_content');
    expect(translated.fieldName('messages.1.tool_calls.1.function.arguments')).toBe(
      'input.4.arguments',
    );
  });
});
