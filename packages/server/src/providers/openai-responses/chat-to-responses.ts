import type { PlacedOpaquePart } from '../../chat/opaque-parts.js';
import { notCarried } from '../upstream-error.js';

type Json = Record<string, unknown>;

/**
 * The internal chat request as an OpenAI Responses body (docs/agents.md, "Upstream protocols"):
 * messages become input items (an assistant message's tool calls become `function_call` items,
 * tool messages `function_call_output`), the opaque reasoning items this channel made go back
 * unchanged before the assistant turn they belong to, and the output cap held is always sent.
 * `store` is false (Tollgate keeps the state) and encrypted reasoning is always asked for, so
 * the next turn can give it back. A field Responses has no place for is refused by name when it
 * would change the answer, dropped when it would not.
 */
export function chatToResponses(
  body: Json,
  opaque: readonly PlacedOpaquePart[],
  maxOutputTokens: number,
): Json {
  for (const [field, value] of Object.entries(body)) refuseUncarried(field, value);
  const messages = (body['messages'] ?? []) as Json[];
  for (const part of opaque)
    if (part.kind !== 'responses_reasoning' && part.kind !== 'responses_compaction')
      throw notCarried(
        part.path,
        'was made by an Anthropic upstream; it cannot go to a Responses upstream',
      );
  const input: Json[] = [];
  const reasoningBefore = (index: number) => {
    for (const part of opaque) if (part.messageIndex === index) input.push({ ...part.payload });
  };
  messages.forEach((message, index) => {
    reasoningBefore(index);
    input.push(...inputItems(message, index));
  });
  reasoningBefore(messages.length);

  const request: Json = {
    model: body['model'],
    input,
    store: false,
    include: ['reasoning.encrypted_content'],
    max_output_tokens: maxOutputTokens,
  };
  const copy = (from: string, to = from) => {
    if (body[from] !== undefined && body[from] !== null) request[to] = body[from];
  };
  for (const field of [
    'temperature',
    'top_p',
    'user',
    'safety_identifier',
    'prompt_cache_key',
    'service_tier',
    'parallel_tool_calls',
    'metadata',
  ])
    copy(field);
  if (body['reasoning_effort'] !== undefined)
    request['reasoning'] = { effort: body['reasoning_effort'] };
  const format = textFormat(body['response_format']);
  const verbosity = body['verbosity'];
  if (format !== undefined || verbosity !== undefined)
    request['text'] = {
      ...(format === undefined ? {} : { format }),
      ...(verbosity === undefined ? {} : { verbosity }),
    };
  if (Array.isArray(body['tools']))
    request['tools'] = (body['tools'] as Json[]).map((tool) => {
      const fn = tool['function'] as Json;
      // `parameters` is required by Responses (an object, or null for none).
      return {
        type: 'function',
        ...fn,
        parameters: fn['parameters'] ?? null,
        strict: fn['strict'] ?? false,
      };
    });
  if (body['tool_choice'] !== undefined) request['tool_choice'] = toolChoice(body['tool_choice']);
  return request;
}

/**
 * Internal fields with no place in a Responses body: refused when they change the answer,
 * dropped (by not being copied) when they do not.
 */
function refuseUncarried(field: string, value: unknown): void {
  const refuse = (why: string) => {
    throw notCarried(field, `${why}; a Responses upstream has no such field`);
  };
  switch (field) {
    case 'stop':
      refuse('stop sequences change where the answer ends');
      break;
    case 'seed':
    case 'presence_penalty':
    case 'frequency_penalty':
    case 'logit_bias':
    case 'prediction':
      refuse('it changes the answer');
      break;
    case 'logprobs':
      if (value === true) refuse('log probabilities are not returned');
      break;
    case 'top_logprobs':
      refuse('log probabilities are not returned');
      break;
    case 'modalities':
      // Only text is made: `["text"]` reaches here and asks for nothing else.
      break;
  }
}

function inputItems(message: Json, index: number): Json[] {
  const role = message['role'];
  const content = message['content'];
  if (role === 'tool')
    return [
      {
        type: 'function_call_output',
        call_id: message['tool_call_id'],
        output: typeof content === 'string' ? content : textOf(content),
      },
    ];
  if (role === 'assistant') {
    const items: Json[] = [];
    const said = typeof content === 'string' ? content : textOf(content);
    // Plain text: an input message's content parts are input parts only (the SDK's
    // EasyInputMessage), and an output_text part would need an id and annotations.
    if (said !== '') items.push({ type: 'message', role: 'assistant', content: said });
    for (const call of (message['tool_calls'] ?? []) as Json[]) {
      const fn = call['function'] as Json;
      items.push({
        type: 'function_call',
        call_id: call['id'],
        name: fn['name'],
        arguments: fn['arguments'],
      });
    }
    return items;
  }
  return [
    {
      type: 'message',
      role,
      content:
        typeof content === 'string'
          ? content
          : (content as Json[]).map((part, partIndex) => {
              if (part['type'] === 'image_url')
                return {
                  type: 'input_image',
                  image_url: (part['image_url'] as Json)['url'],
                  detail: (part['image_url'] as Json)['detail'] ?? 'auto',
                };
              if (part['type'] !== 'text')
                throw notCarried(
                  `messages.${index}.content.${partIndex}.type`,
                  `a ${String(part['type'])} part cannot go to a Responses upstream (it takes text and images)`,
                );
              return { type: 'input_text', text: part['text'] };
            }),
    },
  ];
}

/** The text of chat content parts (an assistant's or a tool's): text parts joined. */
function textOf(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return (content as Json[])
    .filter((part) => part['type'] === 'text')
    .map((part) => String(part['text']))
    .join('');
}

function textFormat(format: unknown): Json | undefined {
  if (typeof format !== 'object' || format === null) return undefined;
  const typed = format as Json;
  if (typed['type'] === 'json_object') return { type: 'json_object' };
  if (typed['type'] !== 'json_schema') return undefined;
  return { type: 'json_schema', ...(typed['json_schema'] as Json) };
}

function toolChoice(choice: unknown): unknown {
  if (typeof choice === 'string') return choice;
  const typed = choice as Json;
  if (typed['type'] === 'function')
    return { type: 'function', name: (typed['function'] as Json)['name'] };
  const allowed = typed['allowed_tools'] as Json;
  return {
    type: 'allowed_tools',
    mode: allowed['mode'],
    tools: (allowed['tools'] as Json[]).map((tool) => ({
      type: 'function',
      name: (tool['function'] as Json)['name'],
    })),
  };
}
