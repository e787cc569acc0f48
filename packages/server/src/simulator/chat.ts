import type { Directives } from './directives.js';
import { BadRequest } from './embeddings.js';
import { SIMULATOR_LIMITS } from './limits.js';
import {
  answerTurn,
  imageOfUrl,
  type Turn,
  type TurnMessage,
  type TurnToolChoice,
} from './turn.js';

export { IMAGE_TOKENS, VIDEO_TOKENS } from './turn.js';

type Json = Record<string, unknown>;
const textOf = (value: unknown): string => (typeof value === 'string' ? value : '');
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** An OpenAI chat completions request: the turn, and how the answer is to be sent. */
export interface ChatInput extends Turn {
  stream: boolean;
  includeUsage: boolean;
}

export function parseChatBody(body: unknown): ChatInput {
  if (!isObject(body)) throw new BadRequest('body must be a JSON object');
  const { model, messages, tools, tool_choice: toolChoice, response_format: responseFormat } = body;
  if (typeof model !== 'string') throw new BadRequest('model is required');
  if (!Array.isArray(messages) || messages.length === 0 || !messages.every(isObject))
    throw new BadRequest('messages must be a non-empty array of objects');
  if (Array.isArray(tools) && tools.length > SIMULATOR_LIMITS.tools)
    throw new BadRequest(`at most ${SIMULATOR_LIMITS.tools} tools`);
  const texts: string[] = [];
  const turnMessages: TurnMessage[] = [];
  const images: Turn['images'] = [];
  let videos = 0;
  for (const message of messages) {
    const content = message['content'];
    const own: number[] = [];
    const role = typeof message['role'] === 'string' ? message['role'] : '';
    turnMessages.push({
      role,
      texts: own,
      ...(role === 'tool' ? { toolResult: String(content) } : {}),
    });
    if (typeof content === 'string') own.push(texts.push(content) - 1);
    if (Array.isArray(content)) {
      for (const part of content.filter(isObject)) {
        if (part['type'] === 'text' && typeof part['text'] === 'string')
          own.push(texts.push(part['text']) - 1);
        const url = isObject(part['image_url']) ? part['image_url']['url'] : undefined;
        if (typeof url === 'string') images.push(imageOfUrl(url));
        if (part['type'] === 'video_url') videos += 1;
      }
    }
    for (const call of Array.isArray(message['tool_calls'])
      ? message['tool_calls'].filter(isObject)
      : []) {
      const fn = isObject(call['function']) ? call['function'] : {};
      texts.push(`${textOf(fn['name'])} ${textOf(fn['arguments'])}`);
    }
  }
  const toolList = Array.isArray(tools) ? tools.filter(isObject) : [];
  if (toolList.length > 0) texts.push(JSON.stringify(toolList));
  const maxTokens = body['max_completion_tokens'] ?? body['max_tokens'] ?? 4096;
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1)
    throw new BadRequest('max_tokens must be a positive integer');
  const thinking =
    (body['reasoning_effort'] !== undefined && body['reasoning_effort'] !== 'none') ||
    (isObject(body['thinking']) && body['thinking']['type'] === 'enabled');
  const streamOptions = isObject(body['stream_options']) ? body['stream_options'] : {};
  const format = isObject(responseFormat) ? responseFormat : undefined;
  return {
    model,
    messages: turnMessages,
    tools: toolList.map((tool) => {
      const fn = isObject(tool['function']) ? tool['function'] : {};
      return { name: textOf(fn['name']), parameters: fn['parameters'] };
    }),
    toolChoice: chatToolChoice(toolChoice),
    format:
      format?.['type'] === 'json_schema'
        ? {
            type: 'json_schema',
            schema: isObject(format['json_schema']) ? format['json_schema']['schema'] : {},
          }
        : format?.['type'] === 'json_object'
          ? { type: 'json_object' }
          : undefined,
    thinking,
    maxTokens,
    stopSequences: [],
    stream: body['stream'] === true,
    includeUsage: streamOptions['include_usage'] === true,
    texts,
    images,
    videos,
  };
}

export interface ChatAnswer {
  content: string | null;
  reasoning: string | undefined;
  toolCalls: {
    id: string;
    type: 'function';
    function: { name: string; arguments: string };
    /** Gemini's thought signature (chat-continuity.ts), in the `gemini` dialect only. */
    extra_content?: { google: { thought_signature: string } };
  }[];
  finishReason: 'stop' | 'length' | 'tool_calls';
  /** The `service_tier` the answer names (`[sim:service_tier=…]`); none by default. */
  serviceTier: string | undefined;
  usage:
    | {
        prompt_tokens: number;
        completion_tokens: number;
        total_tokens: number;
        prompt_tokens_details: { cached_tokens: number; cache_creation_input_tokens?: number };
        completion_tokens_details: { reasoning_tokens: number };
      }
    | undefined;
}

/** The deterministic answer to a chat request whose texts were cleaned of directives. */
export function answerChat(
  input: ChatInput,
  cleaned: string[],
  directives: Directives,
): ChatAnswer {
  const answer = answerTurn(input, cleaned, directives);
  const { usage, toolCall } = answer;
  return {
    content: answer.content,
    reasoning: answer.reasoning,
    toolCalls:
      toolCall === undefined
        ? []
        : [
            {
              id: toolCall.id,
              type: 'function',
              function: { name: toolCall.name, arguments: toolCall.arguments },
            },
          ],
    // Chat turns carry no stop sequences, so `stop_sequence` never arises here.
    finishReason: answer.finish === 'stop_sequence' ? 'stop' : answer.finish,
    serviceTier: directives.serviceTier,
    usage:
      usage === undefined
        ? undefined
        : {
            prompt_tokens: usage.input,
            completion_tokens: usage.output,
            total_tokens: usage.input + usage.output,
            // Cache reads and writes are parts of the input, as providers count them.
            prompt_tokens_details: {
              cached_tokens: Math.min(directives.cachedTokens ?? 0, usage.input),
              ...(directives.cacheWriteTokens === undefined
                ? {}
                : {
                    cache_creation_input_tokens: Math.min(
                      directives.cacheWriteTokens,
                      usage.input - Math.min(directives.cachedTokens ?? 0, usage.input),
                    ),
                  }),
            },
            completion_tokens_details: { reasoning_tokens: usage.reasoning },
          },
  };
}

/** OpenAI's chat `tool_choice`: `none`, `required`, a named function, or `allowed_tools`. */
function chatToolChoice(choice: unknown): TurnToolChoice {
  const allowed = allowedTools(choice);
  return {
    none: choice === 'none',
    required: choice === 'required' || allowed?.mode === 'required',
    forced:
      isObject(choice) && isObject(choice['function'])
        ? textOf(choice['function']['name'])
        : undefined,
    allowed: allowed?.names,
  };
}

/** OpenAI's `allowed_tools` choice: the tools the model may pick from, and whether it must. */
function allowedTools(choice: unknown): { names: string[]; mode: unknown } | undefined {
  if (!isObject(choice) || choice['type'] !== 'allowed_tools') return undefined;
  const allowed = isObject(choice['allowed_tools']) ? choice['allowed_tools'] : {};
  const list = Array.isArray(allowed['tools']) ? allowed['tools'].filter(isObject) : [];
  return {
    names: list.map((entry) =>
      textOf(isObject(entry['function']) ? entry['function']['name'] : ''),
    ),
    mode: allowed['mode'],
  };
}
