import type { OpaqueState } from './opaque-state.js';
import { imageOfUrl, type Turn, type TurnMessage } from './turn.js';
import { shown, WireError } from './wire-error.js';

/**
 * The input items of a Responses request (and of a compaction), read into the turn with the
 * opaque-state rules OpenAI enforces on them. Shared by `responses-request.ts`.
 */
type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Where a request's opaque items are checked: the caller's key, and what the simulator kept. */
export interface OpaqueCheck {
  state: OpaqueState;
  callerKey: string;
  /** True when a reasoning item with this id was answered with `store` on to this organisation. */
  stored: (id: string) => boolean;
}

/** The reasoning item `rs_<hex>` a function call of a reasoning turn needs (its call id carries it). */
export const REASONING_CALL = /^call_rs([0-9a-f]{32})$/;

export const invalid = (
  message: string,
  param: string | null,
  code: string | null = 'invalid_value',
) => new WireError(message, { param, code });
export const missing = (param: string) =>
  new WireError(`Missing required parameter: '${param}'.`, {
    param,
    code: 'missing_required_parameter',
  });

export function addMessage(turn: Turn, role: string, texts: string[], toolResult?: string): void {
  const message: TurnMessage = {
    role,
    texts: texts.map((text) => turn.texts.push(text) - 1),
  };
  if (toolResult !== undefined) message.toolResult = toolResult;
  turn.messages.push(message);
}

/**
 * The input items, in order. Opaque state is checked here, before anything is answered:
 * a reasoning or compaction item's `encrypted_content` must verify for this caller; a reasoning
 * item without it must be one this organisation stored; a reasoning item must be followed by
 * another item; and a function call the simulator made after reasoning (call id `call_rs<hex>`)
 * needs its reasoning item `rs_<hex>` before it.
 */
export function readInput(turn: Turn, input: unknown, check: OpaqueCheck, store: boolean): void {
  if (input === undefined || input === null) return;
  if (typeof input === 'string') {
    addMessage(turn, 'user', [input]);
    return;
  }
  if (!Array.isArray(input))
    throw invalid(
      "Invalid type for 'input': expected a string or an array.",
      'input',
      'invalid_type',
    );
  const reasoningSeen = new Set<string>();
  for (const [index, item] of input.entries()) {
    const param = `input[${index}]`;
    if (!isObject(item))
      throw invalid(`Invalid type for '${param}': expected an object.`, param, 'invalid_type');
    const type = item['type'] ?? (item['role'] === undefined ? undefined : 'message');
    if (type === 'reasoning' && index === input.length - 1)
      throw new WireError(
        `Item '${shown(item['id'])}' of type 'reasoning' was provided without its required following item.`,
        { param: 'input' },
      );
    switch (type) {
      case 'message':
        readMessage(turn, item, param);
        break;
      case 'function_call': {
        const name = requiredString(item, 'name', param);
        const args = requiredString(item, 'arguments', param);
        const callId = requiredString(item, 'call_id', param);
        const marker = REASONING_CALL.exec(callId);
        if (marker !== null && !reasoningSeen.has(`rs_${marker[1] ?? ''}`)) {
          const itemId = typeof item['id'] === 'string' ? item['id'] : `fc_${marker[1] ?? ''}`;
          throw new WireError(
            `Item '${itemId}' of type 'function_call' was provided without its required 'reasoning' item: 'rs_${marker[1] ?? ''}'.`,
            { param: 'input' },
          );
        }
        addMessage(turn, 'assistant', [`${name} ${args}`]);
        break;
      }
      case 'function_call_output': {
        requiredString(item, 'call_id', param);
        const output = outputText(item['output'], `${param}.output`);
        addMessage(turn, 'tool', [output], output);
        break;
      }
      case 'reasoning': {
        const id = requiredString(item, 'id', param);
        verifyReasoning(item, id, check, store);
        reasoningSeen.add(id);
        const summary = Array.isArray(item['summary']) ? item['summary'].filter(isObject) : [];
        addMessage(
          turn,
          'reasoning',
          summary.map((part) => (typeof part['text'] === 'string' ? part['text'] : '')),
        );
        break;
      }
      case 'compaction': {
        const id = typeof item['id'] === 'string' ? item['id'] : 'cmp';
        const payload = check.state.open(
          'responses.compaction',
          check.callerKey,
          item['encrypted_content'],
        );
        if (!isObject(payload) || typeof payload['summary'] !== 'string') throw unverified(id);
        addMessage(turn, 'system', [payload['summary']]);
        break;
      }
      default:
        throw invalid(
          `Invalid value: '${shown(type)}'. The simulator takes input items of type 'message', 'function_call', 'function_call_output', 'reasoning' and 'compaction'.`,
          `${param}.type`,
        );
    }
  }
}

const unverified = (id: string) =>
  new WireError(`The encrypted content for item ${id} could not be verified.`, {
    code: 'invalid_encrypted_content',
  });

function verifyReasoning(item: Json, id: string, check: OpaqueCheck, store: boolean): void {
  const sealed = item['encrypted_content'];
  if (sealed !== undefined && sealed !== null) {
    const payload = check.state.open('responses.reasoning', check.callerKey, sealed);
    if (!isObject(payload)) throw unverified(id);
    return;
  }
  if (check.stored(id)) return;
  throw new WireError(
    store
      ? `Item with id '${id}' not found.`
      : `Item with id '${id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`,
    { param: 'input' },
  );
}

function readMessage(turn: Turn, item: Json, param: string): void {
  const role = item['role'];
  if (role !== 'user' && role !== 'assistant' && role !== 'system' && role !== 'developer')
    throw invalid(`Invalid value: '${shown(role)}'.`, `${param}.role`);
  const content = item['content'];
  const texts: string[] = [];
  if (typeof content === 'string') texts.push(content);
  else if (Array.isArray(content)) {
    for (const [index, part] of content.entries()) {
      const partParam = `${param}.content[${index}]`;
      if (!isObject(part))
        throw invalid(`Invalid type for '${partParam}'.`, partParam, 'invalid_type');
      const type = part['type'];
      if (type === 'input_text' || type === 'output_text')
        texts.push(requiredString(part, 'text', partParam));
      else if (type === 'refusal') texts.push(requiredString(part, 'refusal', partParam));
      else if (type === 'input_image') {
        const url = part['image_url'] ?? part['file_id'];
        if (typeof url !== 'string') throw missing(`${partParam}.image_url`);
        turn.images.push(imageOfUrl(url));
      } else throw invalid(`Invalid value: '${shown(type)}'.`, `${partParam}.type`);
    }
  } else throw missing(`${param}.content`);
  addMessage(turn, role === 'developer' ? 'system' : role, texts);
}

function outputText(output: unknown, param: string): string {
  if (typeof output === 'string') return output;
  if (!Array.isArray(output)) throw missing(param);
  return output
    .filter(isObject)
    .map((part) => (typeof part['text'] === 'string' ? part['text'] : ''))
    .join(' ');
}

export function requiredString(item: Json, field: string, param: string): string {
  const value = item[field];
  if (typeof value !== 'string') throw missing(`${param}.${field}`);
  return value;
}
