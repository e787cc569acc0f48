/**
 * Fields OpenAI's client libraries put on an assistant message they hand back (the usual
 * `messages.push(completion.choices[0].message)` after `chat.completions.parse()` or
 * `stream().finalMessage()`): the parsed output, annotations, a `null` audio or function call,
 * an empty `tool_calls`. They describe an answer; the upstream is not sent them. A non-null
 * legacy `function_call` is refused by the message scan instead (validate-messages.ts).
 */
export const CLIENT_ONLY_ASSISTANT_FIELDS = ['parsed', 'annotations', 'audio', 'function_call'];

/** The messages as the upstream gets them, and the fields dropped (`messages[].parsed`, …). */
export function clientOnlyMessageFields(messages: readonly Record<string, unknown>[]): {
  messages: Record<string, unknown>[];
  dropped: string[];
} {
  const dropped = new Set<string>();
  const cleaned = messages.map((message) => {
    if (message['role'] !== 'assistant') return message;
    const kept: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(message)) {
      const emptyToolCalls = key === 'tool_calls' && Array.isArray(value) && value.length === 0;
      if (CLIENT_ONLY_ASSISTANT_FIELDS.includes(key) || emptyToolCalls)
        dropped.add(`messages[].${key}`);
      else kept[key] = value;
    }
    return kept;
  });
  return { messages: cleaned, dropped: [...dropped] };
}
