import { defaultConfig } from '../../src/config/default-config.js';
import type { ModelConfig } from '../../src/config/schema.js';
import { ONE_IN_THREE_OUT } from './charged-turns.js';

/**
 * What the tool-loop suites share (test/providers: agent-thought-signatures,
 * agent-reasoning-continuity, tool-loop-continuity): the first turn's question, its one tool and
 * the models they ask it of.
 */

/** The first turn's question: the simulator answers it with a call of `get_weather`. */
export const QUESTION = 'What is the weather in Paris? Use get_weather.';

/** `get_weather`'s parameters (JSON Schema), whichever protocol declares the tool. */
export const PARAMETERS = {
  type: 'object',
  properties: { city: { type: 'string' } },
  required: ['city'],
  additionalProperties: false,
};

/** `get_weather` as a `/v1/messages` caller (Claude Code) declares it. */
export const MESSAGES_TOOLS = [
  { name: 'get_weather', description: 'the weather', input_schema: PARAMETERS },
];

/** `get_weather` as a `/v1/responses` caller (Codex) declares it. */
export const RESPONSES_TOOLS = [
  { type: 'function', name: 'get_weather', parameters: PARAMETERS, strict: false },
];

/** Tool loops with thinking, streamed or not. */
export const TOOL_LOOP_COMBINATIONS: ModelConfig['combinations'] = [
  ['streaming', 'tools', 'thinking'],
];

const simChat = defaultConfig.models.find((model) => model.id === 'sim-chat');
if (simChat === undefined) throw new Error('no sim-chat in the default configuration');

/**
 * A model `id` on `upstream` with the default configuration's sim-chat settings, `combinations`
 * (tool loops with thinking unless given), `ONE_IN_THREE_OUT` prices and 4,096 output tokens.
 */
export const simChatModel = (
  id: string,
  upstream: string,
  combinations: ModelConfig['combinations'] = TOOL_LOOP_COMBINATIONS,
) => ({
  ...simChat,
  id,
  upstream,
  combinations,
  prices: ONE_IN_THREE_OUT,
  max_output_tokens: 4_096,
});
