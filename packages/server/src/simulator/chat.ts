import { createHash } from 'node:crypto';
import type { Directives } from './directives.js';
import { BadRequest } from './embeddings.js';
import { sampleFromSchema } from './schema-sample.js';
import { countTokens, tokenize } from './tokens.js';

/** Tokens the simulator reports for each image and each video (below the gateway's worst case). */
export const IMAGE_TOKENS = 85;
export const VIDEO_TOKENS = 200;

type Json = Record<string, unknown>;
const textOf = (value: unknown): string => (typeof value === 'string' ? value : '');
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export interface ChatInput {
  model: string;
  messages: Json[];
  tools: Json[];
  toolChoice: unknown;
  responseFormat: Json | undefined;
  thinking: boolean;
  maxTokens: number;
  stream: boolean;
  includeUsage: boolean;
  /** Every text the model reads, for directives and token counts. */
  texts: string[];
  images: { mediaType: string; bytes: Buffer }[];
  videos: number;
}

export function parseChatBody(body: unknown): ChatInput {
  if (!isObject(body)) throw new BadRequest('body must be a JSON object');
  const { model, messages, tools, tool_choice: toolChoice, response_format: responseFormat } = body;
  if (typeof model !== 'string') throw new BadRequest('model is required');
  if (!Array.isArray(messages) || messages.length === 0 || !messages.every(isObject))
    throw new BadRequest('messages must be a non-empty array of objects');
  const texts: string[] = [];
  const images: ChatInput['images'] = [];
  let videos = 0;
  for (const message of messages) {
    const content = message['content'];
    if (typeof content === 'string') texts.push(content);
    if (Array.isArray(content)) {
      for (const part of content.filter(isObject)) {
        if (part['type'] === 'text' && typeof part['text'] === 'string') texts.push(part['text']);
        const url = isObject(part['image_url']) ? part['image_url']['url'] : undefined;
        if (typeof url === 'string') {
          const match = /^data:([^;]+);base64,(.*)$/s.exec(url);
          images.push({
            mediaType: match?.[1] ?? 'url',
            bytes: Buffer.from(match?.[2] ?? url, match === null ? 'utf8' : 'base64'),
          });
        }
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
    body['reasoning_effort'] !== undefined ||
    (isObject(body['thinking']) && body['thinking']['type'] === 'enabled');
  const streamOptions = isObject(body['stream_options']) ? body['stream_options'] : {};
  return {
    model,
    messages,
    tools: toolList,
    toolChoice,
    responseFormat: isObject(responseFormat) ? responseFormat : undefined,
    thinking,
    maxTokens,
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
  toolCalls: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  finishReason: 'stop' | 'length' | 'tool_calls';
  usage:
    | {
        prompt_tokens: number;
        completion_tokens: number;
        total_tokens: number;
        prompt_tokens_details: { cached_tokens: number };
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
  const last = input.messages[input.messages.length - 1] ?? {};
  const lastUser = [...input.messages].reverse().find((message) => message['role'] === 'user');
  const lastUserText = cleanedTextOf(lastUser, input, cleaned);
  const reasoning = input.thinking ? `Thinking about: ${lastUserText.slice(0, 80)}` : undefined;
  const toolCall = chooseTool(input, last, lastUserText);
  let content: string | null;
  if (toolCall !== undefined) content = null;
  else if (last['role'] === 'tool')
    content = `Based on the tool results: ${input.messages
      .filter((message) => message['role'] === 'tool')
      .map((message) => String(message['content']))
      .join('; ')}`;
  else if (input.responseFormat?.['type'] === 'json_schema')
    content = JSON.stringify(
      sampleFromSchema(
        isObject(input.responseFormat['json_schema'])
          ? input.responseFormat['json_schema']['schema']
          : {},
      ),
    );
  else if (input.responseFormat?.['type'] === 'json_object')
    content = JSON.stringify({ reply: lastUserText });
  else if (/ocr/i.test(input.model)) content = ocrText(input.images[0]);
  else if (input.images.length > 0 || input.videos > 0)
    content =
      `I see ${input.images.length} image(s) ${input.images.map(describeImage).join(' ')} and ${input.videos} video(s). ${lastUserText}`.trim();
  else content = `Simulated reply to: ${lastUserText}`;

  // Respect the output cap: reasoning first, then as much content as fits.
  const reasoningTokens = Math.min(
    reasoning === undefined ? 0 : countTokens(reasoning),
    input.maxTokens,
  );
  let finishReason: ChatAnswer['finishReason'] = toolCall === undefined ? 'stop' : 'tool_calls';
  if (content !== null) {
    const room = input.maxTokens - reasoningTokens;
    const tokens = tokenize(content);
    if (tokens.length > room) {
      content = tokens.slice(0, Math.max(room, 0)).join(' ');
      finishReason = 'length';
    }
  }
  const completion =
    reasoningTokens +
    (content === null ? countTokens(toolCall?.function.arguments ?? '') : countTokens(content)) +
    (directives.extraTokens ?? 0);
  const prompt =
    cleaned.reduce((sum, text) => sum + countTokens(text), 0) +
    IMAGE_TOKENS * input.images.length +
    VIDEO_TOKENS * input.videos;
  return {
    content,
    reasoning:
      reasoning === undefined ? undefined : tokenize(reasoning).slice(0, reasoningTokens).join(' '),
    toolCalls: toolCall === undefined ? [] : [toolCall],
    finishReason,
    usage:
      directives.noUsage === true
        ? undefined
        : {
            prompt_tokens: prompt,
            completion_tokens: completion,
            total_tokens: prompt + completion,
            prompt_tokens_details: { cached_tokens: 0 },
            completion_tokens_details: { reasoning_tokens: reasoningTokens },
          },
  };
}

function cleanedTextOf(message: Json | undefined, input: ChatInput, cleaned: string[]): string {
  if (message === undefined) return '';
  const content = message['content'];
  const raw =
    typeof content === 'string'
      ? [content]
      : Array.isArray(content)
        ? content
            .filter(isObject)
            .map((part) => (typeof part['text'] === 'string' ? part['text'] : ''))
        : [];
  return raw
    .map((text) => cleaned[input.texts.lastIndexOf(text)] ?? text)
    .join(' ')
    .trim();
}

/** A tool call when tools are offered, allowed, and the prompt asks for one (or the choice forces it). */
function chooseTool(
  input: ChatInput,
  last: Json,
  lastUserText: string,
): ChatAnswer['toolCalls'][number] | undefined {
  if (input.tools.length === 0 || input.toolChoice === 'none' || last['role'] === 'tool')
    return undefined;
  const names = input.tools.map((tool) =>
    textOf(isObject(tool['function']) ? tool['function']['name'] : ''),
  );
  const forced =
    isObject(input.toolChoice) && isObject(input.toolChoice['function'])
      ? textOf(input.toolChoice['function']['name'])
      : undefined;
  const mentioned = names.find((name) => name !== '' && lastUserText.includes(name));
  const asks = /\b(call|use|tool)\b/i.test(lastUserText);
  const name =
    forced ?? mentioned ?? (input.toolChoice === 'required' || asks ? names[0] : undefined);
  if (name === undefined) return undefined;
  const tool = input.tools.find(
    (candidate) => isObject(candidate['function']) && candidate['function']['name'] === name,
  );
  const parameters = isObject(tool?.['function']) ? tool['function']['parameters'] : undefined;
  const id = `call_${createHash('sha256').update(`${name}:${lastUserText}`).digest('hex').slice(0, 16)}`;
  return {
    id,
    type: 'function',
    function: {
      name,
      arguments: JSON.stringify(sampleFromSchema(parameters ?? { type: 'object' })),
    },
  };
}

function describeImage(image: { mediaType: string; bytes: Buffer }): string {
  return `[${image.mediaType} ${image.bytes.length} bytes ${createHash('sha256').update(image.bytes).digest('hex').slice(0, 8)}]`;
}

/** Text derived from the image bytes: its digest, and its size when it is a PNG. */
function ocrText(image: { mediaType: string; bytes: Buffer } | undefined): string {
  if (image === undefined) return 'OCR: no image';
  const digest = createHash('sha256').update(image.bytes).digest('hex').slice(0, 16);
  const isPng = image.bytes.length >= 24 && image.bytes[1] === 0x50 && image.bytes[2] === 0x4e;
  const size = isPng ? ` ${image.bytes.readUInt32BE(16)}x${image.bytes.readUInt32BE(20)}` : '';
  return `OCR text ${digest}${size} (${image.bytes.length} bytes)`;
}
