import type { Kysely } from 'kysely';
import type { AssetStorage } from '../assets/local-storage.js';
import type { Probe } from '../assets/probe.js';
import { assetNotFound } from '../assets/asset-uses.js';
import { checkRequirements } from '../assets/requirements.js';
import type { Principal } from '../auth/key-service.js';
import type { ModelConfig } from '../config/schema.js';
import { ApiError, invalidInput } from '../errors/api-error.js';
import type { AssetTable, Database } from '../store/schema.js';

/** Assets are sent upstream inline; larger files are refused rather than held in memory. */
const MAX_INLINE_BYTES = 20 * 1024 * 1024;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A chat body with its asset references replaced, and the ids of the assets it used. */
export interface ResolvedAssets {
  readonly body: Record<string, unknown>;
  readonly assetIds: readonly string[];
}

/**
 * Whether a chat body names any asset (top-level `assetIds`, or an `asset` part in a message).
 * Synchronous: most bodies name none, and then `resolveAssets` need not be awaited at all.
 */
export function namesAssets(body: Readonly<Record<string, unknown>>): boolean {
  if (body['assetIds'] !== undefined) return true;
  const messages = body['messages'];
  return (
    Array.isArray(messages) &&
    messages.some(
      (message) =>
        isObject(message) &&
        Array.isArray(message['content']) &&
        message['content'].some((part) => isObject(part) && part['type'] === 'asset'),
    )
  );
}

/**
 * Replaces asset references in a chat body with the content parts an upstream accepts:
 * `{"type": "asset", "asset_id"}` parts in user messages, and top-level `assetIds` (appended to
 * the last user message). Each id must be an asset of the caller's account (else the 404 of a
 * missing asset), meet the model's asset requirements, and be an image (→ `image_url`) or a
 * video (→ `video_url`), sent as a data URI. Returns the body unchanged when it names no asset.
 * The request claim then records the ids as in use (assets/asset-uses.ts).
 */
export async function resolveAssets(
  body: Record<string, unknown>,
  principal: Principal,
  model: ModelConfig,
  deps: { db: Kysely<Database>; storage: AssetStorage },
): Promise<ResolvedAssets> {
  const topLevel = body['assetIds'];
  const messages = body['messages'];
  if (!namesAssets(body)) return { body, assetIds: [] };
  if (
    topLevel !== undefined &&
    (!Array.isArray(topLevel) ||
      topLevel.length === 0 ||
      topLevel.length > 16 ||
      topLevel.some((id) => typeof id !== 'string'))
  ) {
    throw invalidInput('assetIds', 'must be an array of 1 to 16 asset ids');
  }
  if (!Array.isArray(messages)) return { body, assetIds: [] };
  const used: string[] = [];
  const toPart = async (id: unknown, param: string) => {
    if (typeof id !== 'string') throw invalidInput(param, 'must be an asset id');
    const row = await deps.db
      .selectFrom('assets')
      .selectAll()
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .where('delivered_at', 'is not', null)
      .executeTakeFirst();
    if (row === undefined || row.account_id !== principal.accountId) throw assetNotFound(id, param);
    used.push(row.id);
    return inlinePart(row, model, param, deps.storage);
  };
  const resolved: unknown[] = [];
  for (const [index, message] of messages.entries()) {
    if (!isObject(message) || !Array.isArray(message['content'])) {
      resolved.push(message);
      continue;
    }
    const parts: unknown[] = [];
    for (const [partIndex, part] of message['content'].entries()) {
      parts.push(
        isObject(part) && part['type'] === 'asset'
          ? await toPart(part['asset_id'], `messages.${index}.content.${partIndex}.asset_id`)
          : part,
      );
    }
    resolved.push({ ...message, content: parts });
  }
  if (Array.isArray(topLevel)) {
    const lastUser = resolved
      .map((message) => isObject(message) && message['role'] === 'user')
      .lastIndexOf(true);
    if (lastUser === -1)
      throw invalidInput('assetIds', 'needs a user message to attach the assets to');
    const target = resolved[lastUser] as Record<string, unknown>;
    const content =
      typeof target['content'] === 'string'
        ? [{ type: 'text', text: target['content'] }]
        : (target['content'] as unknown[]);
    const extra = await Promise.all(topLevel.map((id, index) => toPart(id, `assetIds.${index}`)));
    resolved[lastUser] = { ...target, content: [...content, ...extra] };
  }
  const { assetIds: _ignored, ...rest } = body;
  return { body: { ...rest, messages: resolved }, assetIds: used };
}

async function inlinePart(
  row: AssetTable,
  model: ModelConfig,
  param: string,
  storage: AssetStorage,
) {
  const probe: Probe = {
    mediaType: row.media_type as Probe['mediaType'],
    width: row.width,
    height: row.height,
    durationSeconds: row.duration_ms === null ? null : row.duration_ms / 1000,
  };
  try {
    checkRequirements(model, probe, row.bytes);
  } catch (error) {
    if (error instanceof ApiError)
      throw invalidInput(param, error.message.replace(/^X-Tollgate-Model: /, ''));
    throw error;
  }
  if (row.bytes > MAX_INLINE_BYTES)
    throw invalidInput(
      param,
      `assets sent to a model are at most ${MAX_INLINE_BYTES} bytes; this one has ${row.bytes}`,
    );
  const url = `data:${row.media_type};base64,${(await storage.readAll(row.sha256)).toString('base64')}`;
  if (row.media_type.startsWith('image/')) return { type: 'image_url', image_url: { url } };
  if (row.media_type.startsWith('video/')) return { type: 'video_url', video_url: { url } };
  throw invalidInput(param, `${row.media_type} assets cannot be chat input`);
}
