import { createHash } from 'node:crypto';
import { characterCount } from '../util/characters.js';
import { parseDirectives, type Directives } from './directives.js';
import { BadRequest } from './embeddings.js';
import { SIMULATOR_LIMITS } from './limits.js';

/** What the upstream model does, by the end of its name (real Ark has one endpoint per capability). */
export type H3SimAction = 'generate' | 'regenerate' | 'understand';

export const RESOLUTIONS = ['480p', '720p', '1080p', '2K'] as const;
export type Resolution = (typeof RESOLUTIONS)[number];

/** Content item types that carry media, with the roles each may take and the media family of its data URI. */
const MEDIA_ITEMS = {
  image_url: { family: 'image', roles: ['first_frame', 'last_frame', 'reference_image'] },
  video_url: { family: 'video', roles: ['reference_video'] },
  audio_url: { family: 'audio', roles: ['reference_audio'] },
} as const;
type MediaItemType = keyof typeof MEDIA_ITEMS;
export type H3SimRole = (typeof MEDIA_ITEMS)[MediaItemType]['roles'][number];

export interface H3Reference {
  readonly role: H3SimRole;
  readonly mediaType: string;
  readonly bytes: Buffer;
  /** SHA-256 of `bytes`, hex. */
  readonly digest: string;
}

/** `POST /v1/contents/generations/tasks`, parsed and checked. */
export interface H3Request {
  readonly action: H3SimAction;
  readonly model: string;
  /** The text item without its directives ('' when there is none). */
  readonly prompt: string;
  readonly directives: Directives;
  /** In the order sent. */
  readonly references: readonly H3Reference[];
  readonly resolution: Resolution | undefined;
  readonly ratio: string | undefined;
  readonly duration: number | undefined;
  readonly generateAudio: boolean;
  readonly watermark: boolean;
  /** SHA-256 of everything sent, to tell a replay from another request under one Idempotency-Key. */
  readonly fingerprint: string;
}

const FIELDS = new Set([
  'model',
  'content',
  'resolution',
  'ratio',
  'duration',
  'generate_audio',
  'watermark',
]);
const MOST_ITEMS = 16;
const RATIO = /^[1-9][0-9]{0,3}:[1-9][0-9]{0,3}$/;
const DATA_URI = /^data:([a-z]+)\/([a-z0-9.+-]+);base64,/i;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
/** Understanding watches 4 to 15 seconds (the spec's `understand` limit). */
export const UNDERSTAND_SECONDS = { min: 4, max: 15 } as const;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function actionOf(model: string): H3SimAction {
  if (model.endsWith('-understand')) return 'understand';
  if (model.endsWith('-regenerate')) return 'regenerate';
  return 'generate';
}

/**
 * Parses the body strictly (unknown fields, item types and roles are 400s, so an adapter's
 * mistake shows) and applies each action's rules. Throws `BadRequest`, or `DirectiveError` for a
 * bad `[sim:…]` directive in the text item.
 */
export function parseH3Body(body: unknown): H3Request {
  if (!isObject(body)) throw new BadRequest('body must be a JSON object');
  const unknown = Object.keys(body).find((field) => !FIELDS.has(field));
  if (unknown !== undefined) throw new BadRequest(`unknown field ${unknown}`);
  const { model, content } = body;
  if (typeof model !== 'string' || model === '' || model.length > 200)
    throw new BadRequest('model must be a string of 1 to 200 characters');
  if (!Array.isArray(content) || content.length === 0 || content.length > MOST_ITEMS)
    throw new BadRequest(`content must be an array of 1 to ${MOST_ITEMS} items`);
  const texts: string[] = [];
  const references: H3Reference[] = [];
  content.forEach((item: unknown, index) => {
    const parsed = parseItem(item, `content[${index}]`);
    if (typeof parsed === 'string') texts.push(parsed);
    else references.push(parsed);
  });
  if (texts.length > 1) throw new BadRequest('content may hold at most one text item');
  const text = texts[0];
  const { directives, cleaned } = parseDirectives(text === undefined ? [] : [text]);
  const action = actionOf(model);
  const duration = optionalDuration(body['duration'], action);
  const request: H3Request = {
    action,
    model,
    prompt: cleaned[0] ?? '',
    directives,
    references,
    resolution: optionalResolution(body['resolution']),
    ratio: optionalRatio(body['ratio']),
    duration,
    generateAudio: optionalBoolean(body['generate_audio'], 'generate_audio'),
    watermark: optionalBoolean(body['watermark'], 'watermark'),
    fingerprint: createHash('sha256')
      .update(
        JSON.stringify([
          model,
          text ?? null,
          references.map((reference) => [reference.role, reference.mediaType, reference.digest]),
          body['resolution'] ?? null,
          body['ratio'] ?? null,
          duration ?? null,
          body['generate_audio'] ?? null,
          body['watermark'] ?? null,
        ]),
      )
      .digest('hex'),
  };
  checkRoles(request);
  return request;
}

/** A text item's text, or a media item as a reference. */
function parseItem(item: unknown, where: string): string | H3Reference {
  if (!isObject(item)) throw new BadRequest(`${where} must be an object`);
  const type = item['type'];
  if (type === 'text') {
    onlyFields(item, ['type', 'text'], where);
    const text = item['text'];
    if (typeof text !== 'string' || characterCount(text) > SIMULATOR_LIMITS.promptCharacters)
      throw new BadRequest(
        `${where}.text must be a string of at most ${SIMULATOR_LIMITS.promptCharacters} characters`,
      );
    return text;
  }
  if (type !== 'image_url' && type !== 'video_url' && type !== 'audio_url')
    throw new BadRequest(`${where}.type must be text, image_url, video_url or audio_url`);
  onlyFields(item, ['type', type, 'role'], where);
  const { family, roles } = MEDIA_ITEMS[type];
  const role = item['role'];
  if (!(roles as readonly unknown[]).includes(role))
    throw new BadRequest(`${where}.role must be ${roles.join(' or ')} for ${type}`);
  const holder = item[type];
  const url = isObject(holder) ? holder['url'] : undefined;
  if (!isObject(holder) || typeof url !== 'string')
    throw new BadRequest(`${where}.${type} must be an object with a url`);
  const media = parseDataUri(url, family, `${where}.${type}.url`);
  return { role: role as H3SimRole, ...media };
}

function parseDataUri(url: string, family: string, where: string) {
  const match = DATA_URI.exec(url);
  if (match === null)
    throw new BadRequest(`${where} must be a base64 data: URI (the simulator fetches nothing)`);
  if (match[1]?.toLowerCase() !== family)
    throw new BadRequest(`${where} must hold ${family}/*, not ${match[1] ?? ''}/${match[2] ?? ''}`);
  const data = url.slice(match[0].length);
  if (data.length % 4 !== 0 || !BASE64.test(data))
    throw new BadRequest(`${where} must hold non-empty, padded base64`);
  const bytes = Buffer.from(data, 'base64');
  return {
    mediaType: `${family}/${(match[2] ?? '').toLowerCase()}`,
    bytes,
    digest: createHash('sha256').update(bytes).digest('hex'),
  };
}

function onlyFields(item: Record<string, unknown>, allowed: readonly string[], where: string) {
  const extra = Object.keys(item).find((field) => !allowed.includes(field));
  if (extra !== undefined) throw new BadRequest(`${where} has an unknown field ${extra}`);
}

/**
 * Roles by action: at most one first and one last frame, a last frame only after a first;
 * `regenerate` and `understand` watch exactly one `reference_video`; `regenerate` takes no
 * prompt (directives only).
 */
function checkRoles(request: H3Request): void {
  const count = (role: H3SimRole) =>
    request.references.filter((reference) => reference.role === role).length;
  if (count('first_frame') > 1 || count('last_frame') > 1)
    throw new BadRequest('content may hold at most one first_frame and one last_frame');
  if (count('last_frame') === 1 && count('first_frame') === 0)
    throw new BadRequest('a last_frame needs a first_frame');
  if (request.action !== 'generate' && count('reference_video') !== 1)
    throw new BadRequest(`${request.action} needs exactly one reference_video item`);
  if (request.action === 'regenerate' && request.prompt !== '')
    throw new BadRequest('regenerate takes no prompt: it derives from the reference_video alone');
}

function optionalDuration(value: unknown, action: H3SimAction): number | undefined {
  if (value === undefined) return undefined;
  const { min, max } = action === 'understand' ? UNDERSTAND_SECONDS : SIMULATOR_LIMITS.videoSeconds;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw new BadRequest(`duration must be an integer from ${min} to ${max} for ${action}`);
  return value;
}

function optionalResolution(value: unknown): Resolution | undefined {
  if (value === undefined) return undefined;
  const found = RESOLUTIONS.find((resolution) => resolution === value);
  if (found === undefined) throw new BadRequest(`resolution must be ${RESOLUTIONS.join(', ')}`);
  return found;
}

function optionalRatio(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !RATIO.test(value))
    throw new BadRequest('ratio must be W:H, each a whole number from 1 to 9999');
  return value;
}

function optionalBoolean(value: unknown, field: string): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw new BadRequest(`${field} must be a boolean`);
  return value;
}
