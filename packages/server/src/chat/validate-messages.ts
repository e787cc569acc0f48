import { CLIENT_ONLY_ASSISTANT_FIELDS } from './client-only-fields.js';
import { invalidInput } from '../errors/api-error.js';
import type { ImagePart } from './chat-types.js';

/**
 * Structural checks of `messages` (OpenAI's chat format). Every error names the field as a
 * dotted path (`messages.2.content.0.image_url.url`). Counts what the worst case needs.
 */
export interface MessageScan {
  images: ImagePart[];
  videoCount: number;
  textBytes: number;
}

/**
 * Most messages in one request. Far above real conversations; it keeps the per-message work
 * (validation, fingerprint, worst-case count) of one request short however small each message.
 */
export const MAX_MESSAGES = 2_048;
const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);
const DATA_URI = /^data:([a-z]+\/[a-z0-9.+-]+);base64,([A-Za-z0-9+/=\s]*)$/i;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function scanMessages(messages: unknown): MessageScan {
  if (!Array.isArray(messages) || messages.length === 0)
    throw invalidInput('messages', 'must be a non-empty array');
  if (messages.length > MAX_MESSAGES)
    throw invalidInput(
      'messages',
      `has ${messages.length} messages; at most ${MAX_MESSAGES} are accepted in one request`,
    );
  const scan: MessageScan = { images: [], videoCount: 0, textBytes: 0 };
  messages.forEach((message: unknown, index) => scanMessage(message, `messages.${index}`, scan));
  return scan;
}

function scanMessage(message: unknown, path: string, scan: MessageScan): void {
  if (!isObject(message)) throw invalidInput(path, 'must be an object');
  const role = message['role'];
  if (typeof role !== 'string' || !ROLES.has(role))
    throw invalidInput(`${path}.role`, 'must be one of system, developer, user, assistant, tool');
  const allowed = new Set([
    'role',
    'content',
    'name',
    ...(role === 'assistant'
      ? ['tool_calls', 'refusal', 'reasoning_content', ...CLIENT_ONLY_ASSISTANT_FIELDS]
      : []),
    ...(role === 'tool' ? ['tool_call_id'] : []),
  ]);
  for (const key of Object.keys(message))
    if (!allowed.has(key))
      throw invalidInput(`${path}.${key}`, `is not a field of a ${role} message`);
  if (message['name'] !== undefined && typeof message['name'] !== 'string')
    throw invalidInput(`${path}.name`, 'must be a string');
  const content = message['content'];
  if (role === 'assistant') {
    if (message['function_call'] !== undefined && message['function_call'] !== null)
      throw invalidInput(
        `${path}.function_call`,
        "is OpenAI's legacy function calling: continue with tool_calls and tool messages",
      );
    // An empty list, as client libraries leave it, is no tool call (and is not sent upstream).
    const listed = message['tool_calls'];
    const toolCalls = Array.isArray(listed) && listed.length === 0 ? undefined : listed;
    if (toolCalls !== undefined) scanToolCalls(toolCalls, `${path}.tool_calls`, scan);
    if (
      message['refusal'] !== undefined &&
      message['refusal'] !== null &&
      typeof message['refusal'] !== 'string'
    )
      throw invalidInput(`${path}.refusal`, 'must be a string or null');
    if ((content === undefined || content === null) && toolCalls === undefined)
      throw invalidInput(`${path}.content`, 'is required unless the message has tool_calls');
    if (content !== undefined && content !== null)
      scanContent(content, `${path}.content`, scan, false);
    if (typeof message['reasoning_content'] === 'string')
      scan.textBytes += Buffer.byteLength(message['reasoning_content']);
    return;
  }
  if (
    role === 'tool' &&
    (typeof message['tool_call_id'] !== 'string' || message['tool_call_id'] === '')
  ) {
    throw invalidInput(`${path}.tool_call_id`, 'is required on a tool message');
  }
  if (content === undefined || content === null)
    throw invalidInput(`${path}.content`, 'is required');
  scanContent(content, `${path}.content`, scan, role === 'user');
}

function scanToolCalls(toolCalls: unknown, path: string, scan: MessageScan): void {
  if (!Array.isArray(toolCalls) || toolCalls.length === 0)
    throw invalidInput(path, 'must be a non-empty array');
  toolCalls.forEach((call: unknown, index) => {
    const at = `${path}.${index}`;
    if (!isObject(call)) throw invalidInput(at, 'must be an object');
    if (typeof call['id'] !== 'string' || call['id'] === '')
      throw invalidInput(`${at}.id`, 'is required');
    if (call['type'] !== 'function') throw invalidInput(`${at}.type`, 'must be function');
    const fn = call['function'];
    if (!isObject(fn) || typeof fn['name'] !== 'string' || typeof fn['arguments'] !== 'string') {
      throw invalidInput(`${at}.function`, 'must have a string name and string arguments');
    }
    scan.textBytes += Buffer.byteLength(fn['name']) + Buffer.byteLength(fn['arguments']);
  });
}

function scanContent(
  content: unknown,
  path: string,
  scan: MessageScan,
  mediaAllowed: boolean,
): void {
  if (typeof content === 'string') {
    scan.textBytes += Buffer.byteLength(content);
    return;
  }
  if (!Array.isArray(content) || content.length === 0)
    throw invalidInput(path, 'must be a string or a non-empty array of content parts');
  content.forEach((part: unknown, index) => {
    const at = `${path}.${index}`;
    if (!isObject(part)) throw invalidInput(at, 'must be a content part object');
    const type = part['type'];
    if (type === 'text') {
      if (typeof part['text'] !== 'string') throw invalidInput(`${at}.text`, 'must be a string');
      scan.textBytes += Buffer.byteLength(part['text']);
      return;
    }
    if (!mediaAllowed)
      throw invalidInput(`${at}.type`, 'only text parts are allowed in this message');
    if (type === 'image_url') {
      scan.images.push(imagePart(part['image_url'], `${at}.image_url`));
      return;
    }
    if (type === 'video_url') {
      const video = part['video_url'];
      if (!isObject(video) || typeof video['url'] !== 'string' || video['url'] === '')
        throw invalidInput(`${at}.video_url.url`, 'must be a URL or data URI');
      scan.videoCount += 1;
      return;
    }
    throw invalidInput(`${at}.type`, 'must be text, image_url or video_url');
  });
}

function imagePart(image: unknown, path: string): ImagePart {
  if (!isObject(image) || typeof image['url'] !== 'string' || image['url'] === '')
    throw invalidInput(`${path}.url`, 'must be a data URI or an https URL');
  const detail = image['detail'];
  if (
    detail !== undefined &&
    (typeof detail !== 'string' || !['auto', 'low', 'high'].includes(detail))
  )
    throw invalidInput(`${path}.detail`, 'must be auto, low or high');
  const url = image['url'];
  const match = DATA_URI.exec(url);
  if (match !== null) {
    const bytes = Buffer.from(match[2] ?? '', 'base64');
    if (bytes.length === 0) throw invalidInput(`${path}.url`, 'the data URI holds no bytes');
    return { path, kind: 'data_uri', mediaType: match[1]?.toLowerCase(), bytes };
  }
  if (url.startsWith('data:'))
    throw invalidInput(`${path}.url`, 'a data URI must be data:<media type>;base64,<data>');
  if (!url.startsWith('https://'))
    throw invalidInput(`${path}.url`, 'must be a data URI or an https URL');
  return { path, kind: 'url', mediaType: undefined, bytes: undefined };
}
