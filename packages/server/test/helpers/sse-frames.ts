/** One SSE frame of a named-event stream (Responses, Anthropic Messages). */
export interface NamedFrame {
  /** Its `event:` line; '' when it has none. */
  readonly event: string;
  readonly data: Record<string, unknown>;
}

/** An SSE body as its frames, each with its `event:` name and its `data:` JSON. */
export function namedFrames(text: string): NamedFrame[] {
  return text
    .split('\n\n')
    .filter((frame) => frame.trim() !== '')
    .map((frame) => ({
      event: /^event: (.*)$/m.exec(frame)?.[1] ?? '',
      data: JSON.parse(/^data: (.*)$/m.exec(frame)?.[1] ?? 'null') as Record<string, unknown>,
    }));
}
