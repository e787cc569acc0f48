import { SIMULATOR_LIMITS } from './limits.js';
import {
  addMessage,
  invalid,
  missing,
  readInput,
  requiredString,
  type OpaqueCheck,
} from './responses-input.js';
import type { Turn, TurnToolChoice } from './turn.js';
import { shown, WireError } from './wire-error.js';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** What the caller asked of a Responses call besides the turn, echoed in the response object. */
export interface ResponsesInput extends Turn {
  stream: boolean;
  store: boolean;
  /** `include` contains `reasoning.encrypted_content`. */
  encryptedReasoning: boolean;
  instructions: string | null;
  reasoningEffort: string | null;
  /** Echoed as the caller sent them (or OpenAI's defaults). */
  echo: {
    tools: unknown[];
    toolChoice: unknown;
    parallelToolCalls: boolean;
    text: unknown;
    maxOutputTokens: number | null;
    metadata: unknown;
    temperature: number;
    topP: number;
  };
}

const FIELDS = new Set([
  'model',
  'input',
  'instructions',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'text',
  'reasoning',
  'max_output_tokens',
  'include',
  'store',
  'stream',
  'stream_options',
  'metadata',
  'temperature',
  'top_p',
  'user',
  'safety_identifier',
  'prompt_cache_key',
  'service_tier',
  'truncation',
  'previous_response_id',
]);
const INCLUDES = new Set([
  'reasoning.encrypted_content',
  'message.output_text.logprobs',
  'message.input_image.image_url',
]);
const EFFORTS = new Set(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']);
/** Fields `/v1/responses/compact` takes. */
const COMPACT_FIELDS = new Set(['model', 'input', 'instructions', 'prompt_cache_key']);

/**
 * Parses an OpenAI Responses request (`POST /v1/responses`) into a turn, refusing what OpenAI
 * refuses: unknown fields, built-in tools, a `previous_response_id` (the simulator keeps no
 * responses), and opaque items that do not verify for this caller (`readInput`).
 */
export function parseResponsesBody(body: unknown, check: OpaqueCheck): ResponsesInput {
  if (!isObject(body)) throw invalid('The body must be a JSON object.', null, null);
  for (const field of Object.keys(body))
    if (!FIELDS.has(field))
      throw new WireError(`Unknown parameter: '${field}'.`, {
        param: field,
        code: 'unknown_parameter',
      });
  const { model } = body;
  if (typeof model !== 'string' || model === '') throw missing('model');
  if (body['previous_response_id'] !== undefined && body['previous_response_id'] !== null)
    throw new WireError(
      `Previous response with id '${shown(body['previous_response_id'])}' not found.`,
      { param: 'previous_response_id', code: 'previous_response_not_found' },
    );
  const store = body['store'] !== false;
  const turn = emptyTurn(model);
  const instructions = optionalString(body['instructions'], 'instructions');
  if (instructions !== undefined) addMessage(turn, 'system', [instructions]);
  readInput(turn, body['input'], check, store);
  const tools = readTools(turn, body['tools']);
  turn.toolChoice = readToolChoice(body['tool_choice']);
  const text = readTextFormat(turn, body['text']);
  const reasoning = body['reasoning'];
  if (reasoning !== undefined && reasoning !== null && !isObject(reasoning))
    throw invalid("Invalid type for 'reasoning': expected an object.", 'reasoning', 'invalid_type');
  const effort = isObject(reasoning) ? reasoning['effort'] : undefined;
  if (effort !== undefined && effort !== null && !EFFORTS.has(shown(effort)))
    throw invalid(`Invalid value: '${shown(effort)}'.`, 'reasoning.effort');
  turn.thinking = typeof effort === 'string' && effort !== 'none';
  const maxOutput = body['max_output_tokens'];
  if (maxOutput !== undefined && maxOutput !== null) {
    if (typeof maxOutput !== 'number' || !Number.isInteger(maxOutput))
      throw invalid(
        "Invalid type for 'max_output_tokens': expected an integer.",
        'max_output_tokens',
        'invalid_type',
      );
    if (maxOutput < 16)
      throw invalid(
        `Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got ${maxOutput} instead.`,
        'max_output_tokens',
        'integer_below_min_value',
      );
    turn.maxTokens = maxOutput;
  }
  const include = body['include'] ?? [];
  if (!Array.isArray(include))
    throw invalid("Invalid type for 'include'.", 'include', 'invalid_type');
  for (const [index, entry] of include.entries())
    if (typeof entry !== 'string' || !INCLUDES.has(entry))
      throw invalid(`Invalid value: '${shown(entry)}'.`, `include[${index}]`);
  for (const flag of ['stream', 'store', 'parallel_tool_calls'])
    if (body[flag] !== undefined && typeof body[flag] !== 'boolean')
      throw invalid(`Invalid type for '${flag}': expected a boolean.`, flag, 'invalid_type');
  return {
    ...turn,
    stream: body['stream'] === true,
    store,
    encryptedReasoning: include.includes('reasoning.encrypted_content'),
    instructions: instructions ?? null,
    reasoningEffort: typeof effort === 'string' ? effort : null,
    echo: {
      tools,
      toolChoice: body['tool_choice'] ?? 'auto',
      parallelToolCalls: body['parallel_tool_calls'] !== false,
      text,
      maxOutputTokens: typeof maxOutput === 'number' ? maxOutput : null,
      metadata: body['metadata'] ?? {},
      temperature: typeof body['temperature'] === 'number' ? body['temperature'] : 1,
      topP: typeof body['top_p'] === 'number' ? body['top_p'] : 1,
    },
  };
}

/** `POST /v1/responses/compact`: the model, and the input items (checked as for a response). */
export function parseCompactBody(body: unknown, check: OpaqueCheck): Turn {
  if (!isObject(body)) throw invalid('The body must be a JSON object.', null, null);
  for (const field of Object.keys(body))
    if (!COMPACT_FIELDS.has(field))
      throw new WireError(`Unknown parameter: '${field}'.`, {
        param: field,
        code: 'unknown_parameter',
      });
  if (typeof body['model'] !== 'string' || body['model'] === '') throw missing('model');
  const turn = emptyTurn(body['model']);
  const instructions = optionalString(body['instructions'], 'instructions');
  if (instructions !== undefined) addMessage(turn, 'system', [instructions]);
  readInput(turn, body['input'], check, true);
  return turn;
}

function emptyTurn(model: string): Turn {
  return {
    model,
    messages: [],
    tools: [],
    toolChoice: { none: false, required: false },
    format: undefined,
    thinking: false,
    maxTokens: 4096,
    stopSequences: [],
    texts: [],
    images: [],
    videos: 0,
  };
}

function optionalString(value: unknown, param: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string')
    throw invalid(`Invalid type for '${param}': expected a string.`, param, 'invalid_type');
  return value;
}

/** Function tools only (flattened: `{type: 'function', name, description, parameters, strict}`). */
function readTools(turn: Turn, tools: unknown): unknown[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw invalid("Invalid type for 'tools'.", 'tools', 'invalid_type');
  if (tools.length > SIMULATOR_LIMITS.tools)
    throw invalid(
      `Invalid 'tools': array too long. Expected at most ${SIMULATOR_LIMITS.tools} tools.`,
      'tools',
      'array_above_max_length',
    );
  for (const [index, tool] of tools.entries()) {
    const param = `tools[${index}]`;
    if (!isObject(tool)) throw invalid(`Invalid type for '${param}'.`, param, 'invalid_type');
    if (tool['type'] !== 'function')
      throw invalid(
        `Invalid value: '${shown(tool['type'])}'. The simulator supports only 'function' tools.`,
        `${param}.type`,
      );
    turn.tools.push({ name: requiredString(tool, 'name', param), parameters: tool['parameters'] });
  }
  if (tools.length > 0) turn.texts.push(JSON.stringify(tools));
  return tools;
}

function readToolChoice(choice: unknown): TurnToolChoice {
  if (choice === undefined || choice === null || choice === 'auto')
    return { none: false, required: false };
  if (choice === 'none') return { none: true, required: false };
  if (choice === 'required') return { none: false, required: true };
  if (isObject(choice) && choice['type'] === 'function' && typeof choice['name'] === 'string')
    return { none: false, required: true, forced: choice['name'] };
  if (isObject(choice) && choice['type'] === 'allowed_tools' && Array.isArray(choice['tools'])) {
    const names = choice['tools']
      .filter(isObject)
      .map((tool) => (typeof tool['name'] === 'string' ? tool['name'] : ''));
    return { none: false, required: choice['mode'] === 'required', allowed: names };
  }
  throw invalid("Invalid value for 'tool_choice'.", 'tool_choice');
}

/** `text.format`: `text` (default), `json_schema` (name and schema required) or `json_object`. */
function readTextFormat(turn: Turn, text: unknown): unknown {
  if (text === undefined || text === null) return { format: { type: 'text' } };
  if (!isObject(text)) throw invalid("Invalid type for 'text'.", 'text', 'invalid_type');
  const format = text['format'];
  if (format === undefined || format === null) return text;
  if (!isObject(format))
    throw invalid("Invalid type for 'text.format'.", 'text.format', 'invalid_type');
  if (format['type'] === 'json_schema') {
    if (typeof format['name'] !== 'string') throw missing('text.format.name');
    if (!isObject(format['schema'])) throw missing('text.format.schema');
    turn.format = { type: 'json_schema', schema: format['schema'] };
  } else if (format['type'] === 'json_object') turn.format = { type: 'json_object' };
  else if (format['type'] !== 'text')
    throw invalid(`Invalid value: '${shown(format['type'])}'.`, 'text.format.type');
  return text;
}
