import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  opaqueToken,
  readOpaqueToken,
  type PlacedOpaquePart,
} from '../../src/chat/opaque-parts.js';
import { validateChat } from '../../src/chat/validate-chat.js';
import { CONFIGURABLE_FIELDS } from '../../src/config/request-fields.js';
import { defaultConfig } from '../../src/config/default-config.js';
import { modelSchema, type ModelConfig } from '../../src/config/schema.js';
import { MessagesChat } from '../../src/providers/anthropic/messages-chat.js';
import type { ChatCallOptions, ChatUpstream } from '../../src/providers/chat-upstream.js';
import { OpenAiChat } from '../../src/providers/openai-compatible/chat.js';
import { OpenAiEmbeddings } from '../../src/providers/openai-compatible/embeddings.js';
import { PROVIDER_DIALECTS } from '../../src/providers/openai-compatible/provider-dialects.js';
import { ResponsesChat } from '../../src/providers/openai-responses/responses-chat.js';
import { UpstreamFailure } from '../../src/providers/upstream-error.js';
import type { UpstreamClient } from '../../src/providers/upstream-http.js';
import { withFields } from '../../src/util/with-fields.js';
import { jpeg, png } from '../helpers/media.js';

/**
 * Issue 34, item 4: every request body an adapter builds, checked against the provider's own
 * published request type. The risk: a body a provider rejects — a field its API does not take, a
 * value of the wrong shape, a required field left out — reaching production, where it is seen
 * only as an upstream 400 after the hold (or, for a provider that ignores unknown fields, as an
 * answer made without what was asked).
 *
 * How: each fixture (an internal chat request, built as chat-turn.ts builds it: the caller's body
 * through `validateChat`, then the passthrough fields, the messages and the token limit) is run
 * through every chat adapter — chat completions in each provider dialect, Responses (plain,
 * streamed and `compact`), Anthropic Messages (plain and streamed) — against a fake upstream that
 * records every `postJson` / `postStream` and answers the least valid answer, so the adapter
 * completes; the embeddings adapter gets its own inputs. An adapter may refuse a fixture before
 * sending (400 `notCarried`, naming the field): each such refusal is listed on the fixture
 * (`refusedBy`), and any other refusal or crash fails the test. Every recorded body is then
 * written, as JSON, into one generated TypeScript file as `<body> satisfies <SDK request type>`
 * (`OpenAI.Chat.ChatCompletionCreateParamsNonStreaming`, `Anthropic.MessageCreateParamsStreaming`,
 * …) and compiled once with the repository's compiler options: the object literal's excess
 * property check refuses any field the SDK does not know, and assignability refuses a wrong shape
 * or a missing required field. The SDK versions are pinned below (`PINNED_SDKS`): an upgrade
 * fails the first test, to be re-checked (new fields accepted, old ones removed) before the pin
 * is moved.
 *
 * Reading a failure: each diagnostic is printed with the bodies it concerns
 * (`chat_completions/openai · tools-named · stream → POST /chat/completions`), the compiler's
 * message (which field, which type) and its line in the generated file, whose path is printed
 * too (kept under node_modules/.cache/outgoing-bodies-contract/ when the check fails). A field
 * the SDK does not know means the adapter sends what the provider's API does not take: fix the
 * adapter (translate it, drop it, or refuse it with `notCarried`), or, where that provider really
 * takes it, add it to `SDK_TYPE_EXCEPTIONS` as `provider-takes-it` with the reason — never widen
 * the check. The `open-finding` entries there are bodies found refused and reported, awaiting
 * their adapter fix; once fixed, the entry no longer changes (or no longer rescues) the body and
 * the test says to remove it.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../../..');

/** The SDK versions whose request types the bodies are checked against. */
const PINNED_SDKS = { openai: '7.60.0', '@anthropic-ai/sdk': '1.17.0' } as const;

type Json = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------
// The models the fixtures are validated against (the default configuration's sim-chat).

const simChat = defaultConfig.models.find((model) => model.id === 'sim-chat');
if (simChat === undefined) throw new Error('no sim-chat in the default configuration');
const model = (overrides: Record<string, unknown>): ModelConfig =>
  modelSchema.parse({ ...simChat, max_output_tokens: 32_000, ...overrides });
const MODELS = {
  /** sim-chat as configured by default: no optional field forwarded, the limit as `max_tokens`. */
  default: model({}),
  /** Every configurable field forwarded, the limit as `max_completion_tokens` (o-series). */
  configured: model({
    upstream_fields: CONFIGURABLE_FIELDS,
    token_limit_field: 'max_completion_tokens',
  }),
  /** An upstream that refuses a request without a limit: the model's cap is always sent. */
  capRequired: model({ token_limit_required: true, max_output_tokens: 8_000 }),
} as const;

// ---------------------------------------------------------------------------------------------
// The fixtures: callers' chat requests, as validate-chat.ts takes them.

type ChatAdapterName =
  `chat_completions/${keyof typeof PROVIDER_DIALECTS}` | 'responses' | 'messages';

interface ChatFixture {
  readonly name: string;
  readonly model?: keyof typeof MODELS;
  readonly body: Json;
  /** Adapters that refuse it before sending (400 `notCarried`), with the field they name. */
  readonly refusedBy?: Partial<Record<ChatAdapterName, string>>;
  /** Opaque parts sent back to the adapter that made them (only that adapter gets the fixture). */
  readonly opaque?: { readonly adapter: 'responses' | 'messages'; readonly parts: OpaqueRecipe[] };
}

/** An opaque part made by the adapter's own channel in an earlier answer, placed before a message. */
interface OpaqueRecipe {
  readonly kind: PlacedOpaquePart['kind'];
  readonly messageIndex: number;
}

const pngUri = `data:image/png;base64,${png(2, 2).toString('base64')}`;
const jpegUri = `data:image/jpeg;base64,${jpeg(2, 2).toString('base64')}`;

const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The current weather in a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } },
      required: ['city', 'unit'],
      additionalProperties: false,
    },
    strict: true,
  },
};
/** A tool as many callers write it: no description, no `strict`. */
const timeTool = {
  type: 'function',
  function: {
    name: 'get_time',
    parameters: { type: 'object', properties: { zone: { type: 'string' } } },
  },
};
const tools = [weatherTool, timeTool];
/** A tool that takes no arguments, as chat allows it: no `parameters`. */
const jokeTool = { type: 'function', function: { name: 'tell_joke', description: 'A short joke' } };

/** A finished tool loop: the question, the assistant's calls, one result each. */
const toolLoop = [
  { role: 'user', content: 'Weather and time in Paris?' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [
      {
        id: 'call_weather_1',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' },
      },
      {
        id: 'call_time_1',
        type: 'function',
        function: { name: 'get_time', arguments: '{"zone":"Europe/Paris"}' },
      },
    ],
  },
  { role: 'tool', tool_call_id: 'call_weather_1', content: 'Sunny, 21 C' },
  { role: 'tool', tool_call_id: 'call_time_1', content: [{ type: 'text', text: '14:05' }] },
];

const jsonSchemaFormat = {
  type: 'json_schema',
  json_schema: {
    name: 'city_answer',
    description: 'A city and its country',
    schema: {
      type: 'object',
      properties: { city: { type: 'string' }, country: { type: 'string' } },
      required: ['city', 'country'],
      additionalProperties: false,
    },
    strict: true,
  },
};

const user = (content: unknown) => ({ role: 'user', content });

/** The channel every adapter is called as (opaque parts name it). */
const CHANNEL = 'contract-channel';

/**
 * Gemini's thought signature on a tool call, as this gateway hands it to a caller: sealed for
 * the channel that made it (providers/openai-compatible/thought-signatures.ts).
 */
const sealedThoughtSignature = opaqueToken({
  channel: CHANNEL,
  kind: 'gemini_thought_signature',
  payload: { thought_signature: 'CsgBAdHtim9contractThoughtSignature' },
});

/** The chat-completions dialects other than these. */
const otherDialects = (...taken: (keyof typeof PROVIDER_DIALECTS)[]) =>
  (Object.keys(PROVIDER_DIALECTS) as (keyof typeof PROVIDER_DIALECTS)[]).filter(
    (dialect) => !taken.includes(dialect),
  );

const CHAT_FIXTURES: readonly ChatFixture[] = [
  { name: 'plain-text', body: { messages: [user('Hello')] } },
  {
    name: 'system-multi-turn',
    body: {
      messages: [
        { role: 'system', content: 'You are terse.' },
        user('Hi'),
        { role: 'assistant', content: 'Hello.' },
        user('What is 2 + 2?'),
      ],
    },
  },
  {
    name: 'developer-and-text-parts',
    body: {
      messages: [
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        user([
          { type: 'text', text: 'Translate: ' },
          { type: 'text', text: 'good morning' },
        ]),
        { role: 'assistant', content: [{ type: 'text', text: 'Bonjour.' }] },
        { role: 'system', content: 'Now answer in German.' },
        user('And good night?'),
      ],
    },
  },
  {
    name: 'image-data-uri',
    body: {
      messages: [
        user([
          { type: 'text', text: 'What differs between these two?' },
          { type: 'image_url', image_url: { url: pngUri, detail: 'low' } },
          { type: 'image_url', image_url: { url: jpegUri } },
        ]),
      ],
    },
  },
  { name: 'tools-auto', body: { messages: [user('Weather?')], tools, tool_choice: 'auto' } },
  { name: 'tools-none', body: { messages: [user('Weather?')], tools, tool_choice: 'none' } },
  {
    name: 'tools-required-serial',
    body: {
      messages: [user('Weather?')],
      tools,
      tool_choice: 'required',
      parallel_tool_calls: false,
    },
  },
  {
    name: 'tools-named',
    body: {
      messages: [user('Weather?')],
      tools,
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    },
  },
  {
    name: 'tools-allowed',
    body: {
      messages: [user('Weather?')],
      tools,
      tool_choice: {
        type: 'allowed_tools',
        allowed_tools: {
          mode: 'required',
          tools: [{ type: 'function', function: { name: 'get_weather' } }],
        },
      },
    },
  },
  { name: 'tool-round-trip', body: { messages: toolLoop, tools } },
  {
    name: 'tool-without-parameters',
    body: { messages: [user('Make me laugh.')], tools: [jokeTool], tool_choice: 'auto' },
  },
  {
    name: 'json-schema',
    body: { messages: [user('Capital of France?')], response_format: jsonSchemaFormat },
  },
  {
    name: 'json-object',
    body: {
      messages: [user('Capital of France, as JSON?')],
      response_format: { type: 'json_object' },
    },
    refusedBy: { messages: 'response_format.type' },
  },
  {
    name: 'response-format-text',
    body: { messages: [user('Hello')], response_format: { type: 'text' } },
  },
  {
    name: 'reasoning-effort',
    body: {
      messages: [user('Prove it.')],
      reasoning_effort: 'high',
      max_completion_tokens: 20_000,
    },
  },
  {
    name: 'reasoning-effort-none',
    body: { messages: [user('Quick answer.')], reasoning_effort: 'none' },
  },
  {
    name: 'thinking-budget',
    body: { messages: [user('Think first.')], thinking: { type: 'enabled', budget_tokens: 2_048 } },
  },
  {
    name: 'sampling-user-max-tokens',
    body: {
      messages: [user('A short poem.')],
      temperature: 0.7,
      top_p: 0.9,
      user: 'end-user-42',
      max_tokens: 500,
    },
  },
  {
    name: 'stop-list',
    body: { messages: [user('Count to ten.')], stop: ['5', 'END'], temperature: 0 },
    refusedBy: { responses: 'stop' },
  },
  {
    name: 'stop-string',
    body: { messages: [user('Count to ten.')], stop: 'END' },
    refusedBy: { responses: 'stop' },
  },
  {
    name: 'max-completion-tokens',
    model: 'configured',
    body: { messages: [user('Hello')], max_completion_tokens: 800 },
  },
  {
    name: 'max-tokens-as-completion-field',
    model: 'configured',
    body: { messages: [user('Hello')], max_tokens: 700 },
  },
  { name: 'cap-required', model: 'capRequired', body: { messages: [user('Hello')] } },
  {
    name: 'configured-hints',
    model: 'configured',
    body: {
      messages: [user('Hello')],
      store: true,
      metadata: { tenant: 'acme', purpose: 'contract-test' },
      service_tier: 'flex',
      prompt_cache_key: 'conversation-7',
      safety_identifier: 'hashed-user-7',
      verbosity: 'low',
    },
  },
  {
    name: 'safety-identifier-without-user',
    model: 'configured',
    body: { messages: [user('Hello')], safety_identifier: 'hashed-user-8' },
  },
  {
    name: 'penalties-seed-prediction',
    model: 'configured',
    body: {
      messages: [user('Rewrite: the cat sat.')],
      presence_penalty: 0.5,
      frequency_penalty: 0.2,
      seed: 7,
      n: 1,
      prediction: { type: 'content', content: 'The cat sat.' },
    },
    refusedBy: { responses: 'presence_penalty', messages: 'presence_penalty' },
  },
  {
    name: 'logprobs',
    model: 'configured',
    body: {
      messages: [user('Yes or no?')],
      logprobs: true,
      top_logprobs: 3,
      logit_bias: { '50256': -100 },
    },
    refusedBy: { responses: 'logprobs', messages: 'logprobs' },
  },
  {
    name: 'neutral-values',
    model: 'configured',
    body: {
      messages: [user('Hello')],
      presence_penalty: 0,
      frequency_penalty: 0,
      logprobs: false,
      logit_bias: {},
    },
    refusedBy: { responses: 'presence_penalty' },
  },
  {
    name: 'client-library-assistant-message',
    body: {
      messages: [
        user('Capital of France?'),
        {
          role: 'assistant',
          content: 'Paris.',
          refusal: null,
          annotations: [],
          audio: null,
          function_call: null,
          tool_calls: [],
          parsed: null,
        },
        user('And of Italy?'),
      ],
    },
  },
  {
    name: 'assistant-reasoning-content',
    body: {
      messages: [
        user('Capital of France?'),
        { role: 'assistant', content: 'Paris.', reasoning_content: 'France: Paris.' },
        user('And of Italy?'),
      ],
    },
  },
  {
    name: 'assistant-reasoning-tool-loop',
    body: {
      messages: [
        toolLoop[0],
        { ...toolLoop[1], reasoning_content: 'Both are looked up.' },
        ...toolLoop.slice(2),
      ],
      tools,
    },
  },
  {
    name: 'gemini-thought-signature-round-trip',
    body: {
      messages: [
        toolLoop[0],
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_weather_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' },
              extra_content: { google: { thought_signature: sealedThoughtSignature } },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_weather_1', content: 'Sunny, 21 C' },
      ],
      tools,
    },
    // Only the channel that made the signature may read it: every other chat-completions
    // channel refuses the turn before sending, so the router moves it on to that channel.
    refusedBy: Object.fromEntries(
      otherDialects('gemini').map((dialect) => [
        `chat_completions/${dialect}`,
        'messages.1.tool_calls.0.extra_content.google.thought_signature',
      ]),
    ),
  },
  {
    name: 'assistant-refusal',
    body: {
      messages: [
        user('Something refused.'),
        { role: 'assistant', content: '', refusal: 'I cannot help with that.' },
        user('Something else, then.'),
      ],
    },
  },
  {
    name: 'video-url',
    body: {
      messages: [
        user([
          { type: 'text', text: 'What happens in this clip?' },
          { type: 'video_url', video_url: { url: 'https://media.example.com/clip.mp4' } },
        ]),
      ],
    },
    refusedBy: {
      messages: 'messages.0.content.1.type',
      responses: 'messages.0.content.1.type',
      'chat_completions/deepseek': 'messages.0.content.1.type',
      'chat_completions/gemini': 'messages.0.content.1.type',
    },
  },
  // The opaque round trips: state the same channel made, sent back to it.
  {
    name: 'responses-reasoning-round-trip',
    body: { messages: toolLoop, tools, reasoning_effort: 'medium' },
    opaque: {
      adapter: 'responses',
      parts: [{ kind: 'responses_reasoning', messageIndex: 1 }],
    },
  },
  {
    name: 'responses-compaction-round-trip',
    body: { messages: [user('Weather and time in Paris?'), user('And in Rome?')] },
    opaque: {
      adapter: 'responses',
      parts: [{ kind: 'responses_compaction', messageIndex: 1 }],
    },
  },
  {
    name: 'anthropic-thinking-round-trip',
    body: { messages: toolLoop, tools, reasoning_effort: 'low' },
    opaque: {
      adapter: 'messages',
      parts: [
        { kind: 'anthropic_thinking', messageIndex: 1 },
        { kind: 'anthropic_redacted_thinking', messageIndex: 1 },
      ],
    },
  },
];

/** Embeddings requests as routes/embeddings.ts hands them to the adapter. */
const EMBEDDINGS_FIXTURES = [
  {
    name: 'embed-one-text',
    request: { model: 'sim-embed', input: ['Hello'], dimensions: undefined },
  },
  {
    name: 'embed-texts-dimensions',
    request: { model: 'sim-embed', input: ['Hello', 'World'], dimensions: 256 },
  },
  {
    name: 'embed-token-lists',
    request: { model: 'sim-embed', input: [[15_496, 995], [9_906]], dimensions: 64 },
  },
] as const;

// ---------------------------------------------------------------------------------------------
// Bodies the SDK types refuse, each named here with why, and changed before the check by exactly
// what is named (a field left out, or the shape the SDK takes): every other field of those bodies
// is still checked. Three kinds: `provider-takes-it`, a field outside OpenAI's type that the
// dialect's provider documents (sent to it through the OpenAI SDK's `extra_body`);
// `operator-configured`, a field the dialect's servers differ on, sent only where the operator
// said the upstream takes it (a model's `video_input`); and `open-finding`, a body the provider's
// SDK refuses and the adapter should not send, reported and kept visible here until the adapter
// is fixed. Each entry is checked itself: it must change each body it names, and the body
// unchanged must still fail its type; else the test says to remove it.

interface SdkTypeException {
  readonly adapters: readonly string[];
  readonly fixtures: readonly string[];
  /** The calls it applies to (default: all of them). */
  readonly calls?: readonly ('plain' | 'stream' | 'compact')[];
  /** What is changed before the check. */
  readonly change: string;
  /** Makes the change on `body` (a copy); false when there was nothing to change. */
  readonly apply: (body: Json) => boolean;
  readonly status: 'provider-takes-it' | 'operator-configured' | 'open-finding';
  readonly why: string;
}

const chatCompletions = (...dialects: (keyof typeof PROVIDER_DIALECTS)[]) =>
  dialects.map((dialect) => `chat_completions/${dialect}`);

/** Leaves out the fields at these dotted paths (array indexes as numbers); true if any was there. */
const removing =
  (...paths: string[]) =>
  (body: Json): boolean =>
    paths.map((field) => remove(body, field)).some(Boolean);

function remove(body: Json, field: string): boolean {
  const steps = field.split('.');
  let at: unknown = body;
  for (const step of steps.slice(0, -1))
    at = typeof at === 'object' && at !== null ? (at as Json)[step] : undefined;
  const last = steps.at(-1) ?? '';
  if (Array.isArray(at) && /^\d+$/.test(last) && Number(last) < at.length) {
    at.splice(Number(last), 1);
    return true;
  }
  if (typeof at === 'object' && at !== null && Object.hasOwn(at, last)) {
    delete (at as Json)[last];
    return true;
  }
  return false;
}

const SDK_TYPE_EXCEPTIONS: readonly SdkTypeException[] = [
  // Issue 34's open findings on `thinking`, assistant `reasoning_content` and `video_url` parts
  // (each once sent to every chat-completions dialect) are closed by the dialects' rules
  // (providers/openai-compatible/provider-dialects.ts): those bodies now satisfy OpenAI's type
  // (translated or left out), are refused by name above (`refusedBy`), or are listed here with
  // the provider's or the operator's word; a field that came back would fail the check.
  {
    adapters: chatCompletions('deepseek', 'glm', 'kimi'),
    fixtures: ['thinking-budget'],
    change: 'thinking left out',
    apply: removing('thinking'),
    status: 'provider-takes-it',
    why: 'DeepSeek, GLM and Kimi take a top-level `thinking: {type}` (their documentation sends it through the OpenAI SDK’s extra_body)',
  },
  {
    adapters: chatCompletions('qwen'),
    fixtures: ['thinking-budget'],
    change: 'enable_thinking and thinking_budget left out',
    apply: removing('enable_thinking', 'thinking_budget'),
    status: 'provider-takes-it',
    why: 'Qwen (DashScope’s compatible mode) switches thinking with `enable_thinking` and caps it with `thinking_budget`, sent through extra_body; the adapter translates `thinking` into them',
  },
  {
    adapters: chatCompletions('glm', 'kimi'),
    fixtures: ['assistant-reasoning-content'],
    change: 'messages.1.reasoning_content left out',
    apply: removing('messages.1.reasoning_content'),
    status: 'provider-takes-it',
    why: 'GLM and Kimi read an assistant message’s `reasoning_content` back (Kimi requires it on tool calls with thinking on, GLM preserves thinking); DeepSeek ignores it outside a tool-calling turn, so it is not sent there',
  },
  {
    adapters: chatCompletions('deepseek', 'glm', 'kimi'),
    fixtures: ['assistant-reasoning-tool-loop'],
    change: 'messages.1.reasoning_content left out',
    apply: removing('messages.1.reasoning_content'),
    status: 'provider-takes-it',
    why: 'in a user turn whose assistant called tools, DeepSeek and Kimi (thinking on) refuse an assistant message without its `reasoning_content`; GLM reads it back',
  },
  {
    adapters: chatCompletions('gemini'),
    fixtures: ['gemini-thought-signature-round-trip'],
    change: 'messages.1.tool_calls.0.extra_content left out',
    apply: removing('messages.1.tool_calls.0.extra_content'),
    status: 'provider-takes-it',
    why: 'Gemini’s OpenAI compatibility requires the thought signature it put on a tool call (`extra_content.google.thought_signature`) back with the call; the adapter opens the sealed one this channel made',
  },
  {
    adapters: chatCompletions('openai'),
    fixtures: ['video-url'],
    change: 'the video_url part left out',
    apply: removing('messages.0.content.1'),
    status: 'operator-configured',
    why: 'OpenAI has no video part, but `openai` is also the dialect of every server that copies it, some of which take `video_url` (vLLM, the simulator); a video part reaches it only where the operator enabled `video_input` for the model',
  },
  {
    adapters: chatCompletions('qwen', 'glm', 'kimi'),
    fixtures: ['video-url'],
    change: 'the video_url part left out',
    apply: removing('messages.0.content.1'),
    status: 'provider-takes-it',
    why: 'Qwen, GLM and Kimi take `video_url` content parts; a model offers `video_input` only where the operator enabled it',
  },
  {
    adapters: ['messages'],
    fixtures: ['sampling-user-max-tokens', 'stop-list'],
    change: 'temperature and top_p left out',
    apply: removing('temperature', 'top_p'),
    status: 'open-finding',
    why: '@anthropic-ai/sdk 1.x types API version 2026-10-21, whose Messages request has no `temperature` or `top_p`; the adapter sends `anthropic-version: 2023-06-01` (messages-request.ts), which takes them',
  },
];

// ---------------------------------------------------------------------------------------------
// The fake upstream: records every body, answers the least valid answer for its path.

interface SentBody {
  readonly path: string;
  readonly streamed: boolean;
  /** The body as it goes on the wire (its JSON). */
  readonly body: Json;
}

const usage = { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 };
const responsesUsage = { input_tokens: 12, output_tokens: 3, total_tokens: 15 };
const reasoningItem = {
  type: 'reasoning',
  id: 'rs_contract_1',
  summary: [{ type: 'summary_text', text: 'Looked up what was asked.' }],
  encrypted_content: 'gAAAAB-contract-encrypted-reasoning',
};
const responsesAnswer = {
  id: 'resp_contract_1',
  object: 'response',
  status: 'completed',
  output: [
    reasoningItem,
    {
      type: 'message',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'ok', annotations: [] }],
    },
  ],
  usage: responsesUsage,
};
const anthropicAnswer = {
  id: 'msg_contract_1',
  type: 'message',
  role: 'assistant',
  content: [
    { type: 'thinking', thinking: 'Looked up what was asked.', signature: 'c2lnbmF0dXJl' },
    { type: 'redacted_thinking', data: 'cmVkYWN0ZWQ=' },
    { type: 'text', text: 'ok' },
  ],
  stop_reason: 'end_turn',
  usage: { input_tokens: 12, output_tokens: 3 },
};

const frame = (data: unknown, event?: string) =>
  `${event === undefined ? '' : `event: ${event}\n`}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
const named = (data: { type: string }) => frame(data, data.type);

function plainAnswer(path: string, body: Json): unknown {
  switch (path) {
    case '/chat/completions':
      return {
        id: 'chatcmpl-contract',
        created: 1,
        choices: [
          { index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' },
        ],
        usage,
      };
    case '/responses':
      return responsesAnswer;
    case '/responses/compact':
      return {
        output: [
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'kept' }] },
          {
            type: 'compaction',
            id: 'cmp_contract_1',
            encrypted_content: 'gAAAAB-contract-summary',
          },
        ],
        usage: responsesUsage,
      };
    case '/messages':
      return anthropicAnswer;
    case '/embeddings': {
      const inputs = body['input'] as unknown[];
      const size = typeof body['dimensions'] === 'number' ? body['dimensions'] : 4;
      return {
        data: inputs.map((_, index) => ({ index, embedding: new Array<number>(size).fill(0.5) })),
        usage: { prompt_tokens: 3, total_tokens: 3 },
      };
    }
    default:
      throw new Error(`the fake upstream has no answer for POST ${path}`);
  }
}

function streamFrames(path: string): string[] {
  switch (path) {
    case '/chat/completions':
      return [
        frame({ choices: [{ index: 0, delta: { role: 'assistant', content: 'ok' } }] }),
        frame({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
        frame({ choices: [], usage }),
        frame('[DONE]'),
      ];
    case '/responses':
      return [
        named({ type: 'response.output_item.done', output_index: 0, item: reasoningItem } as {
          type: string;
        }),
        named({ type: 'response.output_text.delta', delta: 'ok' } as { type: string }),
        named({ type: 'response.completed', response: responsesAnswer } as { type: string }),
      ];
    case '/messages':
      return [
        named({
          type: 'message_start',
          message: {
            id: 'msg_contract_1',
            type: 'message',
            role: 'assistant',
            usage: { input_tokens: 12, output_tokens: 1 },
          },
        } as { type: string }),
        named({
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'text', text: '' },
        } as { type: string }),
        named({
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'text_delta', text: 'ok' },
        } as { type: string }),
        named({ type: 'content_block_stop', index: 0 } as { type: string }),
        named({
          type: 'message_delta',
          delta: { stop_reason: 'end_turn' },
          usage: { output_tokens: 3 },
        } as { type: string }),
        named({ type: 'message_stop' }),
      ];
    default:
      throw new Error(`the fake upstream has no stream for POST ${path}`);
  }
}

async function* bytesOf(frames: readonly string[]): AsyncGenerator<Buffer> {
  for (const text of frames) yield Buffer.from(text);
}

class FakeUpstream {
  readonly sent: SentBody[] = [];

  readonly client: UpstreamClient = {
    postJson: async (path, body) => {
      const wire = JSON.parse(JSON.stringify(body)) as Json;
      this.sent.push({ path, streamed: false, body: wire });
      return { json: plainAnswer(path, wire), upstreamRequestId: 'req_contract' };
    },
    postStream: async (path, body) => {
      const wire = JSON.parse(JSON.stringify(body)) as Json;
      this.sent.push({ path, streamed: true, body: wire });
      return { body: bytesOf(streamFrames(path)), upstreamRequestId: 'req_contract' };
    },
    getJson: () => Promise.reject(new Error('the contract test makes no reads')),
    getBinary: () => Promise.reject(new Error('the contract test makes no reads')),
  };
}

// ---------------------------------------------------------------------------------------------
// Running the fixtures through the adapters.

const CHAT_ADAPTERS: readonly {
  readonly name: ChatAdapterName;
  readonly make: (http: UpstreamClient) => ChatUpstream;
}[] = [
  ...Object.values(PROVIDER_DIALECTS).map((dialect) => ({
    name: `chat_completions/${dialect.name}` as ChatAdapterName,
    make: (http: UpstreamClient) => new OpenAiChat(http, dialect),
  })),
  { name: 'responses', make: (http) => new ResponsesChat(http) },
  { name: 'messages', make: (http) => new MessagesChat(http) },
];

/** What chat-turn.ts sends a channel for a caller's body: validated, rebuilt, the channel's model. */
function internalRequest(fixture: ChatFixture): { body: Json; maxOutputTokens: number } {
  const chat = validateChat(
    { model: 'sim-chat', ...fixture.body },
    MODELS[fixture.model ?? 'default'],
  );
  const upstreamBody = Object.assign(
    withFields(chat.passthrough, { messages: chat.messages }),
    chat.upstreamTokenLimit,
  );
  return {
    body: withFields(upstreamBody, { model: 'upstream-model' }),
    maxOutputTokens: chat.maxOutputTokens,
  };
}

/** Opaque parts of each kind, made by each adapter's channel in an answer of the fake upstream. */
async function madeOpaqueParts(): Promise<Map<string, PlacedOpaquePart['payload']>> {
  const http = new FakeUpstream().client;
  const options: ChatCallOptions = { channel: CHANNEL, opaque: [], maxOutputTokens: 1_000 };
  const question = { model: 'upstream-model', messages: [user('Hello')] };
  const payloads = new Map<string, PlacedOpaquePart['payload']>();
  const responses = new ResponsesChat(http);
  const reasoned = await responses.complete(question, options);
  const thought = await new MessagesChat(http).complete(question, options);
  const compacted = await responses.compact(question, options);
  const tokens = [
    ...(reasoned.opaque ?? []).map((part) => part.token),
    ...(thought.opaque ?? []).map((part) => part.token),
    ...(compacted.items ?? []).flatMap((item) => {
      const token = item['encrypted_content'];
      return item['type'] === 'compaction' && typeof token === 'string' ? [token] : [];
    }),
  ];
  for (const token of tokens) {
    const part = readOpaqueToken(token);
    if (part === undefined || part.channel !== CHANNEL) throw new Error('an unreadable token');
    payloads.set(part.kind, part.payload);
  }
  return payloads;
}

/** The calls each chat adapter makes: `compact` only where the protocol has its own. */
const callsOf = (adapter: ChatAdapterName): Outcome['call'][] =>
  adapter === 'responses' ? ['plain', 'stream', 'compact'] : ['plain', 'stream'];

interface Outcome {
  readonly adapter: string;
  readonly fixture: string;
  readonly call: 'plain' | 'stream' | 'compact';
  readonly sent: readonly SentBody[];
  /** The field named by a `notCarried` refusal, if refused. */
  readonly refused?: string;
}

async function drive(
  adapter: ChatUpstream,
  call: Outcome['call'],
  body: Json,
  options: ChatCallOptions,
): Promise<void> {
  if (call === 'plain') {
    const answer = await adapter.complete(body, options);
    expect(answer.completion.choices[0]?.message.content).toBe('ok');
    return;
  }
  if (call === 'compact') {
    if (adapter.compact === undefined) throw new Error('no compact');
    const answer = await adapter.compact(body, options);
    expect(answer.items?.length).toBe(2);
    return;
  }
  const opened = await adapter.stream(body, new AbortController().signal, options);
  const kinds: string[] = [];
  for await (const event of opened.events) kinds.push(event.kind);
  expect(kinds.at(-1), `stream events: ${kinds.join(', ')}`).toBe('done');
}

async function runChatFixtures(): Promise<Outcome[]> {
  const opaquePayloads = await madeOpaqueParts();
  const outcomes: Outcome[] = [];
  for (const fixture of CHAT_FIXTURES) {
    const { body, maxOutputTokens } = internalRequest(fixture);
    const opaque: PlacedOpaquePart[] = (fixture.opaque?.parts ?? []).map((recipe, index) => {
      const payload = opaquePayloads.get(recipe.kind);
      if (payload === undefined) throw new Error(`no ${recipe.kind} part was made`);
      return {
        channel: CHANNEL,
        kind: recipe.kind,
        payload,
        messageIndex: recipe.messageIndex,
        path: `messages.${recipe.messageIndex}.opaque.${index}`,
      };
    });
    const options: ChatCallOptions = { channel: CHANNEL, opaque, maxOutputTokens };
    for (const { name, make } of CHAT_ADAPTERS) {
      if (fixture.opaque !== undefined && fixture.opaque.adapter !== name) continue;
      for (const call of callsOf(name)) {
        const upstream = new FakeUpstream();
        const label = `${name} · ${fixture.name} · ${call}`;
        try {
          await drive(make(upstream.client), call, body, options);
          outcomes.push({ adapter: name, fixture: fixture.name, call, sent: upstream.sent });
        } catch (error) {
          const field = notCarriedField(error);
          if (field === undefined)
            throw new Error(`${label}: not a documented refusal`, { cause: error });
          expect(upstream.sent, `${label}: refused after sending`).toEqual([]);
          outcomes.push({ adapter: name, fixture: fixture.name, call, sent: [], refused: field });
        }
      }
    }
  }
  return outcomes;
}

/** The field a `notCarried` refusal names (400, before anything was sent); else undefined. */
function notCarriedField(error: unknown): string | undefined {
  if (!(error instanceof UpstreamFailure)) return undefined;
  const field = error.apiError.param;
  if (
    error.certainty !== 'failed' ||
    error.origin !== 'gateway' ||
    error.apiError.status !== 400 ||
    field === undefined ||
    error.detail !== `not carried: ${field}`
  )
    return undefined;
  return field;
}

async function runEmbeddingsFixtures(): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (const fixture of EMBEDDINGS_FIXTURES) {
    const upstream = new FakeUpstream();
    const result = await new OpenAiEmbeddings(upstream.client).embed(fixture.request);
    expect(result.vectors).toHaveLength(fixture.request.input.length);
    outcomes.push({
      adapter: 'embeddings',
      fixture: fixture.name,
      call: 'plain',
      sent: upstream.sent,
    });
  }
  return outcomes;
}

// ---------------------------------------------------------------------------------------------
// The check: every body against its SDK request type, in one compiled program.

/** The SDK request type of each upstream call, by path and by whether it streams. */
function sdkTypeOf(sent: SentBody): string {
  const key = `${sent.streamed ? 'stream' : 'plain'} ${sent.path}`;
  const types: Record<string, string> = {
    'plain /chat/completions': 'OpenAI.Chat.ChatCompletionCreateParamsNonStreaming',
    'stream /chat/completions': 'OpenAI.Chat.ChatCompletionCreateParamsStreaming',
    'plain /responses': 'OpenAI.Responses.ResponseCreateParamsNonStreaming',
    'stream /responses': 'OpenAI.Responses.ResponseCreateParamsStreaming',
    'plain /responses/compact': 'OpenAI.Responses.ResponseCompactParams',
    'plain /messages': 'Anthropic.MessageCreateParamsNonStreaming',
    'stream /messages': 'Anthropic.MessageCreateParamsStreaming',
    'plain /embeddings': 'OpenAI.Embeddings.EmbeddingCreateParams',
  };
  const type = types[key];
  if (type === undefined) throw new Error(`no SDK request type is known for ${key}`);
  return type;
}

interface Checked {
  readonly type: string;
  readonly json: string;
  readonly labels: string[];
  /** The body as it was before an exception's change: it must still fail (else the entry is stale). */
  readonly mustFail: boolean;
}

/** The bodies to compile, identical ones (same type, same JSON) merged under all their labels. */
function bodiesToCheck(outcomes: readonly Outcome[]): Checked[] {
  const byKey = new Map<string, Checked>();
  const add = (type: string, body: Json, label: string, mustFail: boolean) => {
    const json = JSON.stringify(body, null, 2);
    const key = `${mustFail} ${type} ${json}`;
    const entry = byKey.get(key) ?? { type, json, labels: [], mustFail };
    entry.labels.push(label);
    byKey.set(key, entry);
  };
  for (const outcome of outcomes)
    for (const sent of outcome.sent) {
      const label = `${outcome.adapter} · ${outcome.fixture} · ${outcome.call} → POST ${sent.path}`;
      let body = sent.body;
      const changes: string[] = [];
      for (const exception of SDK_TYPE_EXCEPTIONS) {
        if (!exception.adapters.includes(outcome.adapter)) continue;
        if (!exception.fixtures.includes(outcome.fixture)) continue;
        if (exception.calls !== undefined && !exception.calls.includes(outcome.call)) continue;
        const changed = JSON.parse(JSON.stringify(body)) as Json;
        if (!exception.apply(changed))
          throw new Error(
            `${label}: the SDK_TYPE_EXCEPTIONS entry "${exception.change}" changes nothing in this body; remove or correct it`,
          );
        add(sdkTypeOf(sent), body, `${label} (before: ${exception.change})`, true);
        changes.push(exception.change);
        body = changed;
      }
      add(
        sdkTypeOf(sent),
        body,
        changes.length === 0 ? label : `${label} (${changes.join('; ')})`,
        false,
      );
    }
  return [...byKey.values()];
}

/** Compiles every body in one program; the problems found, each naming its bodies. */
function compile(bodies: readonly Checked[]): string[] {
  const lines = [
    '// Generated by packages/server/test/providers/outgoing-bodies-contract.test.ts: every',
    "// outgoing body of the adapters, against its provider SDK's request type.",
    "import type Anthropic from '@anthropic-ai/sdk';",
    "import type OpenAI from 'openai';",
    '',
  ];
  let text = lines.join('\n');
  const spans: { start: number; end: number; checked: Checked }[] = [];
  bodies.forEach((checked, index) => {
    const header = checked.labels.map((label) => `// ${label}\n`).join('');
    const declaration = `export const body${index} = ${checked.json} satisfies ${checked.type};\n\n`;
    text += header;
    spans.push({ start: text.length, end: text.length + declaration.length, checked });
    text += declaration;
  });

  const cache = path.join(root, 'node_modules/.cache/outgoing-bodies-contract');
  mkdirSync(cache, { recursive: true });
  const dir = mkdtempSync(path.join(cache, 'run-'));
  const file = path.join(dir, 'bodies.mts');
  writeFileSync(file, text);

  const { config } = ts.readConfigFile(path.join(root, 'tsconfig.json'), (name) =>
    ts.sys.readFile(name),
  ) as { config: unknown };
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, root);
  const program = ts.createProgram({
    rootNames: [file],
    options: { ...options, noEmit: true, skipLibCheck: true, types: [] },
  });
  const source = program.getSourceFile(file);
  if (source === undefined) throw new Error(`${file} is not in the program`);
  const diagnostics = [
    ...program.getOptionsDiagnostics(),
    ...program.getSyntacticDiagnostics(source),
    ...program.getSemanticDiagnostics(source),
  ];
  const problems: string[] = [];
  const failing = new Set<Checked>();
  for (const diagnostic of diagnostics) {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n  ');
    const at = diagnostic.start;
    const span = at === undefined ? undefined : spans.find((s) => at >= s.start && at < s.end);
    if (span === undefined) {
      problems.push(`(not in a body) ${message}`);
      continue;
    }
    failing.add(span.checked);
    if (span.checked.mustFail) continue;
    const line = source.getLineAndCharacterOfPosition(at ?? 0).line + 1;
    problems.push(
      `${span.checked.labels.join('\n')}\n  ${message}\n  (${span.checked.type}; ${file}:${line})`,
    );
  }
  for (const checked of bodies)
    if (checked.mustFail && !failing.has(checked))
      problems.push(
        `${checked.labels.join('\n')}\n  now satisfies ${checked.type}: the SDK takes the field, so its entry in SDK_TYPE_EXCEPTIONS is no longer needed`,
      );
  if (problems.length === 0) rmSync(dir, { recursive: true, force: true });
  return problems;
}

// ---------------------------------------------------------------------------------------------

describe('outgoing request bodies against the providers’ SDK request types', () => {
  let outcomes: Outcome[];
  beforeAll(async () => {
    outcomes = [...(await runChatFixtures()), ...(await runEmbeddingsFixtures())];
  });

  it('checks against the pinned SDK versions: an upgrade is re-checked before the pin moves', () => {
    for (const [name, version] of Object.entries(PINNED_SDKS)) {
      const manifest = JSON.parse(
        readFileSync(path.join(root, 'node_modules', name, 'package.json'), 'utf8'),
      ) as { version: string };
      expect(
        manifest.version,
        `${name} is ${manifest.version}, the contract was checked against ${version}: re-run this test, read the new diagnostics and the SDK's changelog, then move PINNED_SDKS`,
      ).toBe(version);
    }
  });

  it('every fixture reaches every adapter: sent, or refused by name as the fixture says', () => {
    // Each adapter and each of its calls sends bodies to check (a refusal of everything would
    // leave nothing to check).
    const sentBy = new Set(
      outcomes.filter((outcome) => outcome.sent.length > 0).map((o) => `${o.adapter} ${o.call}`),
    );
    for (const { name } of CHAT_ADAPTERS)
      for (const call of callsOf(name))
        expect(sentBy.has(`${name} ${call}`), `${name} ${call}`).toBe(true);
    expect(sentBy.has('embeddings plain')).toBe(true);
    for (const outcome of outcomes) {
      const fixture = CHAT_FIXTURES.find((candidate) => candidate.name === outcome.fixture);
      const expected = fixture?.refusedBy?.[outcome.adapter as ChatAdapterName];
      const label = `${outcome.adapter} · ${outcome.fixture} · ${outcome.call}`;
      expect(outcome.refused, label).toBe(expected);
      expect(outcome.sent.length, label).toBe(expected === undefined ? 1 : 0);
    }
  });

  it('every outgoing body satisfies its SDK request type (one compiled program)', () => {
    const problems = compile(bodiesToCheck(outcomes));
    expect(problems, `\n${problems.join('\n\n')}\n`).toEqual([]);
  });
});
