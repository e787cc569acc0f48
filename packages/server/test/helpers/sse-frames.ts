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

type Json = Record<string, unknown>;
const text = (value: unknown) => (typeof value === 'string' ? value : '');

/** A Messages stream's content blocks put together as Claude Code (the Anthropic SDK) does. */
export function messagesContent(body: string): Json[] {
  const blocks: Json[] = [];
  const json: string[] = [];
  for (const { event, data } of namedFrames(body)) {
    const index = data['index'] as number;
    if (event === 'content_block_start') {
      blocks[index] = { ...(data['content_block'] as Json) };
      json[index] = '';
    }
    if (event !== 'content_block_delta' && event !== 'content_block_stop') continue;
    const block = blocks[index]!;
    if (event === 'content_block_stop') {
      if (block['type'] === 'tool_use' && json[index] !== '')
        block['input'] = JSON.parse(json[index]!) as unknown;
      continue;
    }
    const delta = data['delta'] as Json;
    switch (delta['type']) {
      case 'thinking_delta':
        block['thinking'] = text(block['thinking']) + String(delta['thinking']);
        break;
      case 'signature_delta':
        block['signature'] = text(block['signature']) + String(delta['signature']);
        break;
      case 'text_delta':
        block['text'] = text(block['text']) + String(delta['text']);
        break;
      case 'input_json_delta':
        json[index] += String(delta['partial_json']);
        break;
    }
  }
  return blocks;
}

/** A Responses stream's output items as Codex keeps them: each `response.output_item.done`. */
export function responsesOutput(body: string): Json[] {
  return namedFrames(body)
    .filter(({ event }) => event === 'response.output_item.done')
    .map(({ data }) => data['item'] as Json);
}
