import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseInput } from '../../src/errors/input-schema.js';
import { messagesBodySchema } from '../../src/http/dialects/messages/messages-request.js';
import {
  carriedThinking,
  tollgateSignature,
} from '../../src/http/dialects/messages/thinking-signature.js';
import { toChatBody } from '../../src/http/dialects/messages/to-chat-body.js';
import { responsesToChat } from '../../src/http/dialects/responses/responses-to-chat.js';
import { dialectRequest } from '../../src/providers/openai-compatible/dialect-request.js';
import { PROVIDER_DIALECTS } from '../../src/providers/openai-compatible/provider-dialects.js';
import type {
  ResponsesBody,
  ResponsesInputItem,
} from '../../src/http/dialects/responses/responses-request.js';
import { messagesContent, responsesOutput } from '../helpers/sse-frames.js';
import { MESSAGES_TOOLS, QUESTION, RESPONSES_TOOLS, simChatModel } from '../helpers/agent-turns.js';
import { chargedTurns } from '../helpers/charged-turns.js';
import { dialects } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

/**
 * Risk: an agent on `/v1/messages` (Claude Code) or `/v1/responses` (Codex) in a tool loop with a
 * chat upstream that requires its reasoning back (DeepSeek and Kimi with thinking on): the
 * gateway shows that reasoning as a thinking block (Tollgate-signed) or a reasoning item (no
 * encrypted content), the agent sends it back as it received it, and the gateway must put it on
 * the chat assistant message as `reasoning_content` — else every second tool turn is the
 * provider's 400, which the caller reads as 502. Sent back without it, the turn is refused as
 * the provider refuses it (nothing charged).
 *
 * The upstreams are the simulator in each provider's dialect (`kind: simulator`, `dialect`),
 * which refuses a tool call without its `reasoning_content` as DeepSeek and Kimi do
 * (simulator/chat-continuity.ts). Prices: 1 micro-yuan per input token, 3 per output token, so
 * each charge is prompt + 3 x completion of the record's usage, exactly.
 */
const [sqlite] = dialects;
type Turns = ReturnType<typeof chargedTurns>;

type Json = Record<string, unknown>;
const NAMES = ['deepseek', 'kimi'] as const;

const str = (value: unknown) => (typeof value === 'string' ? value : '');

describe.each(sqlite === undefined ? [] : [sqlite])(
  'reasoning back to chat upstreams from /v1/messages and /v1/responses',
  (dialect) => {
    let gateway: TestGateway;
    let key: string;
    let charged: Turns['charged'];
    let refused: Turns['refused'];
    beforeAll(async () => {
      gateway = await startGateway(dialect, {
        config: testConfig({
          upstreams: Object.fromEntries(
            NAMES.map((name) => [`sim-${name}`, { kind: 'simulator', dialect: name }]),
          ),
          models: NAMES.map((name) => simChatModel(`${name}-chat`, `sim-${name}`)),
        }),
      });
      const { key: made, accountId } = await gateway.account(100_000_000);
      key = made;
      ({ charged, refused } = chargedTurns(gateway, key, accountId));
    });
    afterAll(async () => {
      await gateway.expectLedgerClean();
      await gateway.close();
    });

    describe('/v1/messages (as Claude Code sends it)', () => {
      /** Thinking shown, or as Claude Code asks by default (adaptive, its text omitted). */
      let omitted = false;
      const request = (name: string, stream: boolean, messages: unknown[]) => ({
        model: `${name}-chat`,
        max_tokens: 3_000,
        thinking: omitted
          ? { type: 'adaptive', display: 'omitted' }
          : { type: 'enabled', budget_tokens: 1_024 },
        tools: MESSAGES_TOOLS,
        stream,
        messages,
      });
      const first = async (name: string, stream: boolean) => {
        const { body } = await charged(
          '/v1/messages',
          request(name, stream, [{ role: 'user', content: QUESTION }]),
        );
        const content = stream ? messagesContent(body) : (JSON.parse(body) as Json)['content'];
        return content as Json[];
      };
      const second = (name: string, stream: boolean, content: Json[]) => {
        const use = content.find((block) => block['type'] === 'tool_use');
        if (use === undefined) throw new Error('no tool_use');
        return request(name, stream, [
          { role: 'user', content: QUESTION },
          { role: 'assistant', content },
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: use['id'], content: 'Sunny, 21 C' }],
          },
        ]);
      };

      for (const name of NAMES)
        it(`${name}: the thinking block goes back as received, plain and streamed: 200 and the exact charge; without it, the provider's refusal`, async () => {
          for (const stream of [false, true]) {
            const content = await first(name, stream);
            const thinking = content[0] ?? {};
            expect(thinking['type']).toBe('thinking');
            expect(String(thinking['thinking'])).toMatch(/^Thinking about/);
            expect(thinking['signature']).toBe(tollgateSignature(String(thinking['thinking'])));
            const { body: answer } = await charged('/v1/messages', second(name, stream, content));
            const blocks = stream
              ? messagesContent(answer)
              : ((JSON.parse(answer) as Json)['content'] as Json[]);
            const said = blocks.flatMap((block) =>
              block['type'] === 'text' ? [block['text']] : [],
            );
            expect(said.join('')).toContain('Sunny, 21 C');
          }
          const content = await first(name, false);
          const { body: error } = await refused(
            '/v1/messages',
            second(
              name,
              false,
              content.filter((block) => block['type'] !== 'thinking'),
            ),
            502,
          );
          expect(JSON.parse(error)).toMatchObject({ type: 'error', error: { type: 'api_error' } });
        });

      for (const name of NAMES)
        it(`${name}: with display "omitted" (Claude Code's default) the block has no text and its signature carries it: the loop continues, plain and streamed`, async () => {
          omitted = true;
          try {
            for (const stream of [false, true]) {
              const content = await first(name, stream);
              const thinking = content[0] ?? {};
              expect(thinking).toMatchObject({ type: 'thinking', thinking: '' });
              const carried = carriedThinking(str(thinking['signature']));
              expect(carried).toMatch(/^Thinking about/);
              expect(JSON.stringify(content.slice(1))).not.toContain(carried);
              const { body: answer } = await charged('/v1/messages', second(name, stream, content));
              const blocks = stream
                ? messagesContent(answer)
                : ((JSON.parse(answer) as Json)['content'] as Json[]);
              expect(blocks.map((block) => block['type'])).toEqual(['thinking', 'text']);
            }
            const content = await first(name, false);
            await refused(
              '/v1/messages',
              second(
                name,
                false,
                content.filter((block) => block['type'] !== 'thinking'),
              ),
              502,
            );
          } finally {
            omitted = false;
          }
        });
    });

    describe('/v1/responses (as Codex sends it: store false, the whole history)', () => {
      const request = (name: string, stream: boolean, input: unknown[]) => ({
        model: `${name}-chat`,
        reasoning: { effort: 'medium' },
        include: ['reasoning.encrypted_content'],
        store: false,
        tools: RESPONSES_TOOLS,
        stream,
        input,
      });
      const question = { type: 'message', role: 'user', content: QUESTION };
      const first = async (name: string, stream: boolean) => {
        const { body } = await charged('/v1/responses', request(name, stream, [question]));
        const output = stream ? responsesOutput(body) : (JSON.parse(body) as Json)['output'];
        return output as Json[];
      };
      const second = (name: string, stream: boolean, output: Json[]) => {
        const call = output.find((item) => item['type'] === 'function_call');
        if (call === undefined) throw new Error('no function_call');
        return request(name, stream, [
          question,
          ...output,
          { type: 'function_call_output', call_id: call['call_id'], output: 'Sunny, 21 C' },
        ]);
      };

      for (const name of NAMES)
        it(`${name}: the reasoning item goes back as received, plain and streamed: 200 and the exact charge; without it, the provider's refusal`, async () => {
          for (const stream of [false, true]) {
            const output = await first(name, stream);
            const reasoning = output[0] ?? {};
            expect(reasoning).toMatchObject({ type: 'reasoning', encrypted_content: null });
            const text = (reasoning['content'] as { text: string }[] | undefined)?.[0]?.text;
            expect(text).toMatch(/^Thinking about/);
            const { body: answer } = await charged('/v1/responses', second(name, stream, output));
            const items = stream
              ? responsesOutput(answer)
              : ((JSON.parse(answer) as Json)['output'] as Json[]);
            const said = items.flatMap((item) =>
              item['type'] === 'message'
                ? (item['content'] as Json[]).map((part) => str(part['text']))
                : [],
            );
            expect(said.join('')).toContain('Sunny, 21 C');
          }
          const output = await first(name, false);
          const { body: error } = await refused(
            '/v1/responses',
            second(
              name,
              false,
              output.filter((item) => item['type'] !== 'reasoning'),
            ),
            502,
          );
          expect(JSON.parse(error)).toMatchObject({ error: { code: 'UPSTREAM_ERROR' } });
        });
    });
  },
);

describe('the translation puts the reasoning on the assistant message', () => {
  it('/v1/messages: Tollgate-signed thinking as reasoning_content (blank-line separated)', () => {
    const [one, two] = ['first thought', 'second thought'];
    const translated = toChatBody(
      parseInput(messagesBodySchema, {
        model: 'sim-chat',
        max_tokens: 2_000,
        messages: [
          { role: 'user', content: 'q' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: one, signature: tollgateSignature(one) },
              { type: 'thinking', thinking: two, signature: tollgateSignature(two) },
              { type: 'tool_use', id: 'call_1', name: 'f', input: {} },
            ],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'r' }] },
        ],
      }),
    );
    expect(translated.body['messages']).toEqual([
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content: null,
        reasoning_content: `${one}\n\n${two}`,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'r' },
    ]);
    expect(translated.opaque).toEqual([]);
    // Whether it is sent is the provider's rule: OpenAI, Qwen and Gemini are sent none of it.
    const sent = (name: keyof typeof PROVIDER_DIALECTS) =>
      JSON.stringify(dialectRequest(translated.body, PROVIDER_DIALECTS[name], 'channel'));
    for (const name of ['openai', 'qwen', 'gemini'] as const)
      expect(sent(name), name).not.toContain('reasoning_content');
    for (const name of ['deepseek', 'kimi', 'glm'] as const)
      expect(sent(name), name).toContain(`"reasoning_content":"${one}\\n\\n${two}"`);
  });

  it('/v1/responses: an unsealed reasoning item (content, else summary) on the next assistant message', () => {
    const body = { model: 'sim-chat' } as ResponsesBody;
    const at = (items: ResponsesInputItem[]) =>
      responsesToChat(
        body,
        items.map((item, index) => ({ item, path: `input.${index}` })),
      );
    const call: ResponsesInputItem = {
      type: 'function_call',
      call_id: 'call_1',
      name: 'f',
      arguments: '{}',
    };
    const user = { type: 'message', role: 'user', content: 'q' } as ResponsesInputItem;
    const fromContent = at([
      user,
      {
        type: 'reasoning',
        summary: [],
        content: [{ type: 'reasoning_text', text: 'thought' }],
        encrypted_content: null,
      },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'a' }] },
      call,
    ] as ResponsesInputItem[]);
    expect(fromContent.body['messages']).toEqual([
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content: 'a',
        reasoning_content: 'thought',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
    ]);
    const fromSummary = at([
      user,
      { type: 'reasoning', summary: [{ type: 'summary_text', text: 'summed up' }] },
      call,
    ] as ResponsesInputItem[]);
    expect(fromSummary.body['messages']).toEqual([
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content: null,
        reasoning_content: 'summed up',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
    ]);
    expect(fromSummary.opaque).toEqual([]);
  });
});
