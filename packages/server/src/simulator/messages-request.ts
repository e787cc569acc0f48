import { createHash, type Hash } from 'node:crypto';
import { SIMULATOR_LIMITS } from './limits.js';
import {
  checkThinkingTurns,
  readBlock,
  refuse,
  THINKING_DOCS,
  type MessagesInput,
  type ThinkingCheck,
} from './messages-blocks.js';

import type { TurnMessage, TurnToolChoice } from './turn.js';
import { shown } from './wire-error.js';

export type { MessagesInput, ThinkingCheck } from './messages-blocks.js';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const CREATE_FIELDS = new Set([
  'model',
  'max_tokens',
  'messages',
  'system',
  'tools',
  'tool_choice',
  'stop_sequences',
  'temperature',
  'top_p',
  'top_k',
  'thinking',
  'metadata',
  'stream',
  'service_tier',
  'context_management',
  'output_config',
]);
const COUNT_FIELDS = new Set([
  'model',
  'messages',
  'system',
  'tools',
  'tool_choice',
  'thinking',
  'context_management',
  'output_config',
]);
const MOST_BREAKPOINTS = 4;

/**
 * Parses an Anthropic Messages request (`POST /v1/messages`, or with `count` the
 * `count_tokens` body, which has no `max_tokens`) into a turn, refusing what Anthropic refuses,
 * with its wording: unknown fields, a missing `max_tokens`, a bad thinking budget, more than four
 * `cache_control` blocks, a thinking block whose signature does not verify for this caller, and
 * a final assistant `tool_use` turn without its thinking block when thinking is on.
 */
export function parseMessagesBody(
  body: unknown,
  check: ThinkingCheck,
  count: boolean,
): MessagesInput {
  if (!isObject(body)) throw refuse('body: Input should be a valid dictionary');
  const fields = count ? COUNT_FIELDS : CREATE_FIELDS;
  for (const field of Object.keys(body))
    if (!fields.has(field)) throw refuse(`${field}: Extra inputs are not permitted`);
  const { model } = body;
  if (typeof model !== 'string' || model === '') throw refuse('model: Field required');
  const maxTokens = body['max_tokens'];
  if (!count && maxTokens === undefined) throw refuse('max_tokens: Field required');
  if (maxTokens !== undefined && (!Number.isInteger(maxTokens) || (maxTokens as number) < 1))
    throw refuse('max_tokens: Input should be a valid integer greater than or equal to 1');
  const thinking = readThinking(body['thinking'], count ? undefined : (maxTokens as number));
  readSampling(body, thinking);
  const turn: MessagesInput = {
    model,
    messages: [],
    tools: [],
    toolChoice: readToolChoice(body['tool_choice'], thinking),
    format: undefined,
    thinking,
    maxTokens: typeof maxTokens === 'number' ? maxTokens : 4096,
    stopSequences: readStopSequences(body['stop_sequences']),
    texts: [],
    images: [],
    videos: 0,
    stream: body['stream'] === true,
    breakpoints: [],
  };
  const prefix = createHash('sha256').update(`${model}\0`);
  readTools(turn, body['tools'], prefix);
  readSystem(turn, body['system'], prefix);
  readMessages(turn, body['messages'], prefix, check);
  checkThinkingTurns(body['messages'] as Json[], thinking);
  return turn;
}

function readThinking(thinking: unknown, maxTokens: number | undefined): boolean {
  if (thinking === undefined || thinking === null) return false;
  if (!isObject(thinking)) throw refuse('thinking: Input should be a valid dictionary');
  if (thinking['type'] === 'disabled') return false;
  if (thinking['type'] === 'adaptive') return true;
  if (thinking['type'] !== 'enabled')
    throw refuse(
      "thinking: Input tag found using 'type' does not match any of the expected tags: 'enabled', 'disabled', 'adaptive'",
    );
  const budget = thinking['budget_tokens'];
  if (!Number.isInteger(budget)) throw refuse('thinking.enabled.budget_tokens: Field required');
  if ((budget as number) < 1024)
    throw refuse('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
  if (maxTokens !== undefined && maxTokens <= (budget as number))
    throw refuse(
      `\`max_tokens\` must be greater than \`thinking.budget_tokens\`. Please consult our documentation at ${THINKING_DOCS}#max-tokens-and-context-window-size`,
    );
  return true;
}

function readSampling(body: Json, thinking: boolean): void {
  const temperature = body['temperature'];
  if (temperature === undefined) return;
  if (typeof temperature !== 'number' || temperature < 0 || temperature > 1)
    throw refuse('temperature: Input should be less than or equal to 1');
  if (thinking && temperature !== 1)
    throw refuse(
      `\`temperature\` may only be set to 1 when thinking is enabled or in adaptive mode. Please consult our documentation at ${THINKING_DOCS}#feature-compatibility`,
    );
}

function readToolChoice(choice: unknown, thinking: boolean): TurnToolChoice {
  if (choice === undefined || choice === null) return { none: false, required: false };
  if (!isObject(choice)) throw refuse('tool_choice: Input should be a valid dictionary');
  const type = choice['type'];
  if ((type === 'any' || type === 'tool') && thinking)
    throw refuse('Thinking may not be enabled when tool_choice forces tool use.');
  if (type === 'auto') return { none: false, required: false };
  if (type === 'none') return { none: true, required: false };
  if (type === 'any') return { none: false, required: true };
  if (type === 'tool') {
    if (typeof choice['name'] !== 'string') throw refuse('tool_choice.tool.name: Field required');
    return { none: false, required: true, forced: choice['name'] };
  }
  throw refuse(
    "tool_choice: Input tag found using 'type' does not match any of the expected tags: 'auto', 'any', 'tool', 'none'",
  );
}

function readStopSequences(sequences: unknown): string[] {
  if (sequences === undefined || sequences === null) return [];
  if (!Array.isArray(sequences) || !sequences.every((entry) => typeof entry === 'string'))
    throw refuse('stop_sequences: Input should be a valid list of strings');
  const list: string[] = sequences;
  return list;
}

/** A block as it counts and hashes: its JSON without `cache_control` (a marker, not content). */
function canonical(block: Json): string {
  const { cache_control: _marker, ...content } = block;
  return JSON.stringify(content);
}

/** Records a breakpoint when the block carries `cache_control` (checked as Anthropic does). */
function markBreakpoint(turn: MessagesInput, block: Json, prefix: Hash, where: string): void {
  const control = block['cache_control'];
  if (control === undefined || control === null) return;
  if (!isObject(control) || control['type'] !== 'ephemeral')
    throw refuse(`${where}.cache_control.ephemeral.type: Input should be 'ephemeral'`);
  const ttl = control['ttl'] ?? '5m';
  if (ttl !== '5m' && ttl !== '1h')
    throw refuse(`${where}.cache_control.ephemeral.ttl: Input should be '5m' or '1h'`);
  if (ttl === '1h' && turn.breakpoints.some((mark) => mark.ttl === '5m'))
    throw refuse(
      "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Note that blocks are processed in the following order: `tools`, `system`, `messages`.",
    );
  turn.breakpoints.push({
    texts: turn.texts.length,
    images: turn.images.length,
    digest: prefix.copy().digest('hex'),
    ttl,
  });
  if (turn.breakpoints.length > MOST_BREAKPOINTS)
    throw refuse(
      `A maximum of ${MOST_BREAKPOINTS} blocks with cache_control may be provided. Found ${turn.breakpoints.length}.`,
    );
}

function readTools(turn: MessagesInput, tools: unknown, prefix: Hash): void {
  if (tools === undefined || tools === null) return;
  if (!Array.isArray(tools)) throw refuse('tools: Input should be a valid list');
  if (tools.length > SIMULATOR_LIMITS.tools)
    throw refuse(`tools: List should have at most ${SIMULATOR_LIMITS.tools} items`);
  for (const [index, tool] of tools.entries()) {
    const where = `tools.${index}`;
    if (!isObject(tool)) throw refuse(`${where}: Input should be a valid dictionary`);
    if (tool['type'] !== undefined && tool['type'] !== null && tool['type'] !== 'custom')
      throw refuse(
        `${where}: the simulator answers custom tools only (\`name\`, \`description\`, \`input_schema\`), not '${shown(tool['type'])}'`,
      );
    if (typeof tool['name'] !== 'string') throw refuse(`${where}.custom.name: Field required`);
    if (!isObject(tool['input_schema']))
      throw refuse(`${where}.custom.input_schema: Field required`);
    const text = canonical(tool);
    turn.texts.push(text);
    prefix.update(text);
    turn.tools.push({ name: tool['name'], parameters: tool['input_schema'] });
    markBreakpoint(turn, tool, prefix, where);
  }
}

function readSystem(turn: MessagesInput, system: unknown, prefix: Hash): void {
  if (system === undefined || system === null) return;
  const own: number[] = [];
  prefix.update('\0system\0');
  if (typeof system === 'string') {
    own.push(turn.texts.push(system) - 1);
    prefix.update(system);
  } else if (Array.isArray(system)) {
    for (const [index, block] of system.entries()) {
      const where = `system.${index}`;
      if (!isObject(block) || block['type'] !== 'text' || typeof block['text'] !== 'string')
        throw refuse(`${where}: Input should be a text block`);
      own.push(turn.texts.push(block['text']) - 1);
      prefix.update(canonical(block));
      markBreakpoint(turn, block, prefix, where);
    }
  } else throw refuse('system: Input should be a valid string or list of text blocks');
  turn.messages.push({ role: 'system', texts: own });
}

function readMessages(turn: MessagesInput, messages: unknown, prefix: Hash, check: ThinkingCheck) {
  if (!Array.isArray(messages)) throw refuse('messages: Field required');
  if (messages.length === 0) throw refuse('messages: at least one message is required');
  for (const [index, message] of messages.entries()) {
    const where = `messages.${index}`;
    if (!isObject(message)) throw refuse(`${where}: Input should be a valid dictionary`);
    const role = message['role'];
    if (role !== 'user' && role !== 'assistant')
      throw refuse(`${where}.role: Input should be 'user' or 'assistant'`);
    prefix.update(`\0${role}\0`);
    const content = message['content'];
    const own: number[] = [];
    const results: TurnMessage[] = [];
    if (typeof content === 'string') {
      own.push(turn.texts.push(content) - 1);
      prefix.update(content);
    } else if (Array.isArray(content)) {
      for (const [position, block] of content.entries()) {
        const at = `${where}.content.${position}`;
        if (!isObject(block)) throw refuse(`${at}: Input should be a valid dictionary`);
        readBlock(turn, block, role, at, check, own, results);
        prefix.update(canonical(block));
        markBreakpoint(turn, block, prefix, at);
      }
    } else throw refuse(`${where}.content: Field required`);
    // A user message of tool results answers them (the rules' "after tool messages"), even with text.
    if (own.length > 0 || results.length === 0) turn.messages.push({ role, texts: own });
    turn.messages.push(...results);
  }
}
