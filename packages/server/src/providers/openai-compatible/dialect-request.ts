import { notCarried } from '../upstream-error.js';
import type { ProviderDialect } from './provider-dialects.js';
import { openedSignatures } from './thought-signatures.js';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The internal chat request (a validated chat-completions body) as this provider takes it: each
 * rule is the dialect's (provider-dialects.ts), applied here in one place. Throws `notCarried`
 * (400 naming the field, nothing sent: the router may try the model's next channel) for what the
 * provider cannot take and nothing translates. The body given is not changed.
 */
export function dialectRequest(body: Json, dialect: ProviderDialect, channel: string): Json {
  const out: Json = { ...body };
  if (dialect.tokenLimitField === 'max_tokens' && out['max_completion_tokens'] != null) {
    out['max_tokens'] = out['max_completion_tokens'];
    delete out['max_completion_tokens'];
  }
  translateThinking(out, dialect);
  if (Array.isArray(out['messages'])) {
    const messages = openedSignatures(out['messages'], dialect, channel);
    if (!dialect.videoParts) refuseVideoParts(messages, dialect);
    out['messages'] = reasoningHistory(messages, dialect);
  }
  return out;
}

/** `thinking` as the provider takes it (`ProviderDialect.thinking`). */
function translateThinking(out: Json, dialect: ProviderDialect): void {
  const thinking = out['thinking'];
  const rule = dialect.thinking;
  if (!isObject(thinking) || rule === 'native') return;
  delete out['thinking'];
  const enabled = thinking['type'] === 'enabled';
  const budget = typeof thinking['budget_tokens'] === 'number' ? thinking['budget_tokens'] : null;
  if (rule === 'enable_thinking') {
    out['enable_thinking'] = enabled;
    if (enabled && budget !== null) out['thinking_budget'] = budget;
    return;
  }
  // One control, two fields: the caller's own reasoning_effort is the one the provider names.
  if (out['reasoning_effort'] !== undefined) return;
  const { levels, disabled } = rule.effort;
  const effort = !enabled
    ? disabled
    : budget === null
      ? 'medium'
      : (levels.find((level) => budget <= level.budget) ?? levels.at(-1))?.effort;
  if (effort !== undefined) out['reasoning_effort'] = effort;
}

/** A `video_url` part to a provider that has none: refused, naming the part. */
function refuseVideoParts(messages: readonly unknown[], dialect: ProviderDialect): void {
  messages.forEach((message, messageIndex) => {
    const content = isObject(message) ? message['content'] : undefined;
    if (!Array.isArray(content)) return;
    content.forEach((part, partIndex) => {
      if (isObject(part) && part['type'] === 'video_url')
        throw notCarried(
          `messages.${messageIndex}.content.${partIndex}.type`,
          `${dialect.name}'s chat completions take no video_url parts`,
        );
    });
  });
}

/**
 * Assistant messages' `reasoning_content` as the provider takes it back
 * (`ProviderDialect.reasoningHistory`). With `tool_turns`, a user turn is the run of messages
 * from one user message to the next: where an assistant message of it called tools, every
 * assistant message of it keeps its reasoning; elsewhere reasoning is left out.
 */
function reasoningHistory(messages: readonly unknown[], dialect: ProviderDialect): unknown[] {
  if (dialect.reasoningHistory === 'forward') return [...messages];
  const keep = new Set<number>();
  if (dialect.reasoningHistory === 'tool_turns') {
    let turn: number[] = [];
    let calledTools = false;
    const close = () => {
      if (calledTools) for (const index of turn) keep.add(index);
      turn = [];
      calledTools = false;
    };
    messages.forEach((message, index) => {
      if (!isObject(message)) return;
      if (message['role'] === 'user') close();
      if (message['role'] !== 'assistant') return;
      turn.push(index);
      const calls = message['tool_calls'];
      if (Array.isArray(calls) && calls.length > 0) calledTools = true;
    });
    close();
  }
  return messages.map((message, index) => {
    if (!isObject(message) || !('reasoning_content' in message) || keep.has(index)) return message;
    const { reasoning_content: _reasoning, ...rest } = message;
    return rest;
  });
}
