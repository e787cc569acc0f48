import { createHash } from 'node:crypto';
import type { Directives } from './directives.js';
import { BadRequest } from './embeddings.js';
import { SIMULATOR_LIMITS } from './limits.js';
import { sampleFromSchema, type SampleBudget } from './schema-sample.js';
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
  /** For each message, the indexes in `texts` of its content texts. */
  messageTexts: number[][];
  images: { mediaType: string; bytes: Buffer }[];
  videos: number;
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
  const messageTexts: number[][] = [];
  const images: ChatInput['images'] = [];
  let videos = 0;
  for (const message of messages) {
    const content = message['content'];
    const own: number[] = [];
    messageTexts.push(own);
    if (typeof content === 'string') own.push(texts.push(content) - 1);
    if (Array.isArray(content)) {
      for (const part of content.filter(isObject)) {
        if (part['type'] === 'text' && typeof part['text'] === 'string')
          own.push(texts.push(part['text']) - 1);
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
    (body['reasoning_effort'] !== undefined && body['reasoning_effort'] !== 'none') ||
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
    messageTexts,
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
  const lastUserText = lastUserTextOf(input, cleaned);
  const reasoning = input.thinking ? `Thinking about: ${lastUserText.slice(0, 80)}` : undefined;
  // What this answer may generate: the caller's output cap, within the simulator's own limits.
  const outputCap = Math.min(input.maxTokens, SIMULATOR_LIMITS.outputTokens);
  const budget: SampleBudget = {
    values: Math.min(SIMULATOR_LIMITS.sampleValues, outputCap),
    characters: Math.min(
      SIMULATOR_LIMITS.outputCharacters,
      outputCap * SIMULATOR_LIMITS.charactersPerToken,
    ),
    depth: SIMULATOR_LIMITS.sampleDepth,
  };
  const tool = chooseTool(input, last, lastUserText, budget);
  const toolCall = tool?.call;
  let truncated = tool?.truncated ?? false;
  let content: string | null;
  if (toolCall !== undefined) content = null;
  else if (last['role'] === 'tool')
    content = `Based on the tool results: ${input.messages
      .filter((message) => message['role'] === 'tool')
      .map((message) => String(message['content']).slice(0, SIMULATOR_LIMITS.outputCharacters))
      .join('; ')}`;
  else if (input.responseFormat?.['type'] === 'json_schema') {
    const sample = sampleFromSchema(
      isObject(input.responseFormat['json_schema'])
        ? input.responseFormat['json_schema']['schema']
        : {},
      budget,
    );
    content = JSON.stringify(sample.value);
    truncated = sample.truncated;
  } else if (input.responseFormat?.['type'] === 'json_object')
    content = JSON.stringify({ reply: lastUserText });
  else if (/ocr/i.test(input.model)) content = ocrText(input.images[0]);
  else if (input.images.length > 0 || input.videos > 0)
    content =
      `I see ${input.images.length} image(s) ${input.images.map(describeImage).join(' ')} and ${input.videos} video(s). ${lastUserText}`.trim();
  else content = `Simulated reply to: ${lastUserText}`;

  // Respect the output cap: reasoning first, then as much content as fits.
  const reasoningTokens = Math.min(reasoning === undefined ? 0 : countTokens(reasoning), outputCap);
  let finishReason: ChatAnswer['finishReason'] =
    toolCall === undefined ? 'stop' : truncated ? 'length' : 'tool_calls';
  if (content !== null) {
    if (truncated || content.length > SIMULATOR_LIMITS.outputCharacters) {
      content = content.slice(0, SIMULATOR_LIMITS.outputCharacters);
      finishReason = 'length';
    }
    const room = outputCap - reasoningTokens;
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
    VIDEO_TOKENS * input.videos +
    (directives.extraPromptTokens ?? 0);
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

/** The last user message's texts, cleaned of directives and cut to what an answer may hold. */
function lastUserTextOf(input: ChatInput, cleaned: string[]): string {
  for (let index = input.messages.length - 1; index >= 0; index -= 1) {
    if (input.messages[index]?.['role'] !== 'user') continue;
    return (input.messageTexts[index] ?? [])
      .map((textIndex) => cleaned[textIndex] ?? '')
      .join(' ')
      .trim()
      .slice(0, SIMULATOR_LIMITS.outputCharacters);
  }
  return '';
}

/** A tool call when tools are offered, allowed, and the prompt asks for one (or the choice forces it). */
function chooseTool(
  input: ChatInput,
  last: Json,
  lastUserText: string,
  budget: SampleBudget,
): { call: ChatAnswer['toolCalls'][number]; truncated: boolean } | undefined {
  if (input.tools.length === 0 || input.toolChoice === 'none' || last['role'] === 'tool')
    return undefined;
  const allowed = allowedTools(input.toolChoice);
  const names = input.tools
    .map((tool) => textOf(isObject(tool['function']) ? tool['function']['name'] : ''))
    .filter((name) => allowed?.names.includes(name) ?? true);
  const forced =
    isObject(input.toolChoice) && isObject(input.toolChoice['function'])
      ? textOf(input.toolChoice['function']['name'])
      : undefined;
  const mentioned = names.find((name) => name !== '' && lastUserText.includes(name));
  const asks = /\b(call|use|tool)\b/i.test(lastUserText);
  const required = input.toolChoice === 'required' || allowed?.mode === 'required';
  const name = forced ?? mentioned ?? (required || asks ? names[0] : undefined);
  if (name === undefined) return undefined;
  const tool = input.tools.find(
    (candidate) => isObject(candidate['function']) && candidate['function']['name'] === name,
  );
  const parameters = isObject(tool?.['function']) ? tool['function']['parameters'] : undefined;
  const id = `call_${createHash('sha256').update(`${name}:${lastUserText}`).digest('hex').slice(0, 16)}`;
  const sample = sampleFromSchema(parameters ?? { type: 'object' }, budget);
  return {
    call: { id, type: 'function', function: { name, arguments: JSON.stringify(sample.value) } },
    truncated: sample.truncated,
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
