import type { ChatAnswer } from './chat.js';
import type { SimulatorDialect } from './chat-dialects.js';
import type { OpaqueState } from './opaque-state.js';
import { WireError } from './wire-error.js';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Who is asking: signatures are made for, and checked against, the caller's organisation. */
export interface ContinuitySigner {
  readonly state: OpaqueState;
  readonly callerKey: string;
}

/**
 * What each provider requires back in a tool loop, enforced as it enforces it (docs/providers.md,
 * "Continuity"): the state of an earlier answer that must come back with its tool call.
 *
 * - `deepseek` (api-docs.deepseek.com/guides/thinking_mode#tool-calls) and `kimi`
 *   (platform.moonshot.ai/docs/guide/use-kimi-k2-thinking-model): with thinking on, every
 *   assistant message that called tools must carry its `reasoning_content`; each refuses one
 *   without it, in its own words.
 * - `gemini` (ai.google.dev/gemini-api/docs/thought-signatures): each answer's first tool call
 *   carries a thought signature (`extra_content.google.thought_signature`, here an HMAC of the
 *   call for the caller's organisation); in the current turn (after the last user message) each
 *   assistant message's first call must bring its signature back, unaltered (Gemini 3's strict
 *   validation).
 * - `glm` asks for reasoning back but does not refuse a turn without it; `openai` and `qwen`
 *   take none.
 */
export function checkContinuity(
  dialect: SimulatorDialect,
  body: unknown,
  thinking: boolean,
  signer: ContinuitySigner,
): void {
  const messages = isObject(body) && Array.isArray(body['messages']) ? body['messages'] : [];
  if ((dialect === 'deepseek' || dialect === 'kimi') && thinking)
    messages.forEach((message: unknown, index) => {
      if (!isObject(message) || message['role'] !== 'assistant') return;
      if (!Array.isArray(message['tool_calls']) || message['tool_calls'].length === 0) return;
      if (typeof message['reasoning_content'] === 'string') return;
      throw new WireError(
        dialect === 'deepseek'
          ? `Missing \`reasoning_content\` field in the assistant message at message index ${index}. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls`
          : `thinking is enabled but reasoning_content is missing in assistant tool call message at index ${index}`,
        { param: `messages.${index}.reasoning_content`, code: 'invalid_request_error' },
      );
    });
  if (dialect === 'gemini') checkThoughtSignatures(messages, signer);
}

function checkThoughtSignatures(messages: readonly unknown[], signer: ContinuitySigner): void {
  const lastUser = messages.findLastIndex(
    (message) => isObject(message) && message['role'] === 'user',
  );
  messages.forEach((message, index) => {
    if (index <= lastUser || !isObject(message) || message['role'] !== 'assistant') return;
    const calls = Array.isArray(message['tool_calls']) ? message['tool_calls'] : [];
    const first: unknown = calls[0];
    if (!isObject(first)) return;
    const fn = isObject(first['function']) ? first['function'] : {};
    const extra = isObject(first['extra_content']) ? first['extra_content'] : {};
    const google = isObject(extra['google']) ? extra['google'] : {};
    const signature = google['thought_signature'];
    if (signature === undefined)
      throw new WireError(
        `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${String(fn['name'])}\` , position ${index}. please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`,
        { param: `messages.${index}.tool_calls.0`, code: 'invalid_argument' },
      );
    if (!signer.state.verify(PURPOSE, signer.callerKey, signedText(first, fn), signature))
      throw new WireError('Thought signature is not valid.', {
        param: `messages.${index}.tool_calls.0`,
        code: 'invalid_argument',
      });
  });
}

const PURPOSE = 'gemini.thought_signature';

/** What a signature vouches for: the call as the model made it. */
function signedText(call: Json, fn: Json): string {
  return `${String(call['id'])}\n${String(fn['name'])}\n${String(fn['arguments'])}`;
}

/** The answer as the provider writes it: Gemini signs each answer's first tool call. */
export function signedAnswer(
  dialect: SimulatorDialect,
  answer: ChatAnswer,
  signer: ContinuitySigner,
): ChatAnswer {
  const [first, ...others] = answer.toolCalls;
  if (dialect !== 'gemini' || first === undefined) return answer;
  const signature = signer.state.sign(PURPOSE, signer.callerKey, signedText(first, first.function));
  return {
    ...answer,
    toolCalls: [
      { ...first, extra_content: { google: { thought_signature: signature } } },
      ...others,
    ],
  };
}
