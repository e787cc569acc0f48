import { createHash } from 'node:crypto';
import type { Directives } from './directives.js';
import { SIMULATOR_LIMITS } from './limits.js';
import { sampleFromSchema, type SampleBudget } from './schema-sample.js';
import { countTokens, tokenize } from './tokens.js';

/** Tokens the simulator reports for each image and each video (below the gateway's worst case). */
export const IMAGE_TOKENS = 85;
export const VIDEO_TOKENS = 200;

/**
 * One model turn as the simulator's rules see it, whatever wire format asked for it: OpenAI
 * chat completions (chat.ts), OpenAI Responses (responses-request.ts) and Anthropic Messages
 * (messages-request.ts) each parse their body into this, and their wire files shape the
 * `TurnAnswer` back. The rules (docs/simulator.md "Outputs") live here once.
 */
export interface Turn {
  model: string;
  messages: TurnMessage[];
  tools: TurnTool[];
  toolChoice: TurnToolChoice;
  format: TurnFormat | undefined;
  thinking: boolean;
  /** Output tokens the caller allows (reasoning included); the simulator caps it further. */
  maxTokens: number;
  /** Anthropic's `stop_sequences`: the reply ends before the first one it contains. */
  stopSequences: readonly string[];
  /** Every text the model reads, for directives and token counts. */
  texts: string[];
  images: TurnImage[];
  videos: number;
}

export interface TurnMessage {
  /** `user`, `assistant`, `tool` (a tool result), `system`, or whatever the caller sent. */
  role: string;
  /** Indexes in `Turn.texts` of this message's content texts (what "the last user text" reads). */
  texts: number[];
  /** For a tool result: the result as the reply echoes it (not cleaned of directives). */
  toolResult?: string;
}

export interface TurnTool {
  name: string;
  /** The JSON Schema of the arguments (`undefined`: any object). */
  parameters: unknown;
}

export interface TurnToolChoice {
  /** No tool may be called. */
  none: boolean;
  /** A tool must be called. */
  required: boolean;
  /** This tool must be called (even when it is not offered: its arguments are then `{}`-like). */
  forced?: string | undefined;
  /** Only these tools may be called. */
  allowed?: string[] | undefined;
}

export type TurnFormat = { type: 'json_schema'; schema: unknown } | { type: 'json_object' };

export interface TurnImage {
  mediaType: string;
  bytes: Buffer;
}

export interface TurnToolCall {
  /** `call_<16 hex>`, from the tool's name and the last user text: same request, same id. */
  id: string;
  name: string;
  /** JSON text. */
  arguments: string;
}

export interface TurnAnswer {
  /** `null` when the answer is a tool call. */
  content: string | null;
  reasoning: string | undefined;
  toolCall: TurnToolCall | undefined;
  /** `stop_sequence` only when the turn had stop sequences and the reply met one. */
  finish: 'stop' | 'length' | 'tool_calls' | 'stop_sequence';
  /** The stop sequence met, with `finish: 'stop_sequence'`. */
  stopSequence: string | undefined;
  /** Absent with `[sim:no_usage]`. */
  usage: TurnUsage | undefined;
}

export interface TurnUsage {
  /** Tokens read (with `[sim:extra_prompt_tokens]`). */
  input: number;
  /** Tokens generated, reasoning included (with `[sim:extra_tokens]`). */
  output: number;
  reasoning: number;
}

/** Tokens the turn reads: its cleaned texts, images and videos (without misreporting directives). */
export function inputTokensOf(turn: Turn, cleaned: readonly string[]): number {
  return (
    cleaned.reduce((sum, text) => sum + countTokens(text), 0) +
    IMAGE_TOKENS * turn.images.length +
    VIDEO_TOKENS * turn.videos
  );
}

/** The deterministic answer to a turn whose texts were cleaned of directives. */
export function answerTurn(turn: Turn, cleaned: string[], directives: Directives): TurnAnswer {
  const last = turn.messages[turn.messages.length - 1];
  const lastUserText = lastUserTextOf(turn, cleaned);
  const reasoning = turn.thinking ? `Thinking about: ${lastUserText.slice(0, 80)}` : undefined;
  // What this answer may generate: the caller's output cap, within the simulator's own limits.
  const outputCap = Math.min(turn.maxTokens, SIMULATOR_LIMITS.outputTokens);
  const budget: SampleBudget = {
    values: Math.min(SIMULATOR_LIMITS.sampleValues, outputCap),
    characters: Math.min(
      SIMULATOR_LIMITS.outputCharacters,
      outputCap * SIMULATOR_LIMITS.charactersPerToken,
    ),
    depth: SIMULATOR_LIMITS.sampleDepth,
  };
  const tool = chooseTool(turn, last?.role, lastUserText, budget);
  const toolCall = tool?.call;
  let truncated = tool?.truncated ?? false;
  let content: string | null;
  if (toolCall !== undefined) content = null;
  else if (last?.role === 'tool')
    content = `Based on the tool results: ${turn.messages
      .filter((message) => message.role === 'tool')
      .map((message) => (message.toolResult ?? '').slice(0, SIMULATOR_LIMITS.outputCharacters))
      .join('; ')}`;
  else if (turn.format?.type === 'json_schema') {
    const sample = sampleFromSchema(turn.format.schema, budget);
    content = JSON.stringify(sample.value);
    truncated = sample.truncated;
  } else if (turn.format?.type === 'json_object') content = JSON.stringify({ reply: lastUserText });
  else if (/ocr/i.test(turn.model)) content = ocrText(turn.images[0]);
  else if (turn.images.length > 0 || turn.videos > 0)
    content =
      `I see ${turn.images.length} image(s) ${turn.images.map(describeImage).join(' ')} and ${turn.videos} video(s). ${lastUserText}`.trim();
  else content = `Simulated reply to: ${lastUserText}`;

  // Respect the output cap: reasoning first, then as much content as fits.
  const reasoningTokens = Math.min(reasoning === undefined ? 0 : countTokens(reasoning), outputCap);
  let finish: TurnAnswer['finish'] =
    toolCall === undefined ? 'stop' : truncated ? 'length' : 'tool_calls';
  let stopSequence: string | undefined;
  if (content !== null) {
    const stop = firstStop(content, turn.stopSequences);
    if (stop !== undefined) {
      content = content.slice(0, stop.at);
      stopSequence = stop.sequence;
      finish = 'stop_sequence';
    }
    if (truncated || content.length > SIMULATOR_LIMITS.outputCharacters) {
      content = content.slice(0, SIMULATOR_LIMITS.outputCharacters);
      finish = 'length';
    }
    const room = outputCap - reasoningTokens;
    const tokens = tokenize(content);
    if (tokens.length > room) {
      content = tokens.slice(0, Math.max(room, 0)).join(' ');
      finish = 'length';
    }
    if (finish !== 'stop_sequence') stopSequence = undefined;
  }
  const output =
    reasoningTokens +
    (content === null ? countTokens(toolCall?.arguments ?? '') : countTokens(content)) +
    (directives.extraTokens ?? 0);
  const input = inputTokensOf(turn, cleaned) + (directives.extraPromptTokens ?? 0);
  return {
    content,
    reasoning:
      reasoning === undefined ? undefined : tokenize(reasoning).slice(0, reasoningTokens).join(' '),
    toolCall,
    finish,
    stopSequence,
    usage: directives.noUsage === true ? undefined : { input, output, reasoning: reasoningTokens },
  };
}

/** The earliest stop sequence in the text, and where it starts. */
function firstStop(
  text: string,
  sequences: readonly string[],
): { at: number; sequence: string } | undefined {
  let found: { at: number; sequence: string } | undefined;
  for (const sequence of sequences) {
    const at = sequence === '' ? -1 : text.indexOf(sequence);
    if (at >= 0 && (found === undefined || at < found.at)) found = { at, sequence };
  }
  return found;
}

/** The last user message's texts, cleaned of directives and cut to what an answer may hold. */
function lastUserTextOf(turn: Turn, cleaned: string[]): string {
  for (let index = turn.messages.length - 1; index >= 0; index -= 1) {
    const message = turn.messages[index];
    if (message?.role !== 'user') continue;
    return message.texts
      .map((textIndex) => cleaned[textIndex] ?? '')
      .join(' ')
      .trim()
      .slice(0, SIMULATOR_LIMITS.outputCharacters);
  }
  return '';
}

/** A tool call when tools are offered, allowed, and the prompt asks for one (or the choice forces it). */
function chooseTool(
  turn: Turn,
  lastRole: string | undefined,
  lastUserText: string,
  budget: SampleBudget,
): { call: TurnToolCall; truncated: boolean } | undefined {
  const choice = turn.toolChoice;
  if (turn.tools.length === 0 || choice.none || lastRole === 'tool') return undefined;
  const names = turn.tools
    .map((tool) => tool.name)
    .filter((name) => choice.allowed?.includes(name) ?? true);
  const mentioned = names.find((name) => name !== '' && lastUserText.includes(name));
  const asks = /\b(call|use|tool)\b/i.test(lastUserText);
  const name = choice.forced ?? mentioned ?? (choice.required || asks ? names[0] : undefined);
  if (name === undefined) return undefined;
  const parameters = turn.tools.find((candidate) => candidate.name === name)?.parameters;
  const id = `call_${createHash('sha256').update(`${name}:${lastUserText}`).digest('hex').slice(0, 16)}`;
  const sample = sampleFromSchema(parameters ?? { type: 'object' }, budget);
  return {
    call: { id, name, arguments: JSON.stringify(sample.value) },
    truncated: sample.truncated,
  };
}

function describeImage(image: TurnImage): string {
  return `[${image.mediaType} ${image.bytes.length} bytes ${createHash('sha256').update(image.bytes).digest('hex').slice(0, 8)}]`;
}

/** Text derived from the image bytes: its digest, and its size when it is a PNG. */
function ocrText(image: TurnImage | undefined): string {
  if (image === undefined) return 'OCR: no image';
  const digest = createHash('sha256').update(image.bytes).digest('hex').slice(0, 16);
  const isPng = image.bytes.length >= 24 && image.bytes[1] === 0x50 && image.bytes[2] === 0x4e;
  const size = isPng ? ` ${image.bytes.readUInt32BE(16)}x${image.bytes.readUInt32BE(20)}` : '';
  return `OCR text ${digest}${size} (${image.bytes.length} bytes)`;
}

/** A data URL's media type and bytes; any other URL is its own text (the simulator fetches nothing). */
export function imageOfUrl(url: string): TurnImage {
  const match = /^data:([^;]+);base64,(.*)$/s.exec(url);
  return {
    mediaType: match?.[1] ?? 'url',
    bytes: Buffer.from(match?.[2] ?? url, match === null ? 'utf8' : 'base64'),
  };
}
