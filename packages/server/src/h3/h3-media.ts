import type { H3Role } from '@tollgate/protocol';
import type { Kysely } from 'kysely';
import { assetNotFound } from '../assets/asset-uses.js';
import type { Principal } from '../auth/key-service.js';
import { ApiError, invalidInput } from '../errors/api-error.js';
import type { Database } from '../store/schema.js';
import { storedInputOf } from '../tasks/task-family.js';
import { h3StoredInputSchema } from './h3-stored-input.js';
import type { H3VideoSource } from '../config/schema.js';
import type { H3Media, H3Reference, H3Request } from './h3-input.js';

/** What each role's asset must be, by its bytes (probed at upload). */
const ROLE_MEDIA: Readonly<Record<H3Role, readonly string[]>> = {
  first_frame: ['image/png', 'image/jpeg', 'image/webp'],
  last_frame: ['image/png', 'image/jpeg', 'image/webp'],
  reference_image: ['image/png', 'image/jpeg', 'image/webp'],
  reference_video: ['video/mp4'],
  reference_audio: ['audio/mpeg', 'audio/wav'],
};
const IMAGE_ROLES: readonly H3Role[] = ['first_frame', 'last_frame', 'reference_image'];
/** Reference bytes sent upstream inline (data URIs) per task, at most: base64 makes them a third larger, and upstream bodies are bounded (the simulator takes 32 MiB). */
export const MAX_INLINE_REFERENCE_BYTES = 20 * 1024 * 1024;

/** How an H3 task's stored input is read back (the family's own `parseInput`, h3-family.ts). */
const H3_STORED_INPUT = { parseInput: (stored: unknown) => h3StoredInputSchema.parse(stored) };

/** The media of an H3 input (h3-input.ts, below the stored input that records it). */
export type { H3Media } from './h3-input.js';

/**
 * Reads and checks the media an H3 input names (spec 4.4): reference assets are the caller's own
 * delivered assets of the kind their role needs (a personal key only: assets are personal); the
 * source task is the calling key's own succeeded, delivered video task (an H3 generate or
 * regenerate, or a `/v1/videos` task). A foreign or missing id is the 404 of a missing one.
 * Durations come from the files as probed at upload (or stored at delivery), never the request.
 */
export async function readH3Media(
  db: Kysely<Database>,
  principal: Principal,
  request: H3Request,
): Promise<H3Media> {
  const references = await readReferences(db, principal, request.references);
  const source =
    request.sourceTaskId === undefined
      ? undefined
      : await readSource(db, principal, request.sourceTaskId);
  const inlineBytes =
    references.reduce((total, reference) => total + reference.bytes, 0) + (source?.bytes ?? 0);
  if (inlineBytes > MAX_INLINE_REFERENCE_BYTES)
    throw invalidInput(
      'referenceAssets',
      `the input media add up to ${inlineBytes} bytes; one task sends at most ${MAX_INLINE_REFERENCE_BYTES} upstream`,
    );
  const sum = (role: H3Role) =>
    references
      .filter((reference) => reference.role === role)
      .reduce((total, reference) => total + reference.durationMs, 0);
  const uploadedVideo = references.some((reference) => reference.role === 'reference_video');
  return {
    references: references.map(({ bytes: _bytes, ...reference }) => reference),
    source: source?.media,
    videoSource: source?.kind ?? (uploadedVideo ? 'upload' : undefined),
    referenceImages: references.filter((reference) => IMAGE_ROLES.includes(reference.role)).length,
    inputAudioMs: sum('reference_audio'),
    inputVideoMs: sum('reference_video') + (source?.media.durationMs ?? 0),
    assetIds: [
      ...references.map((reference) => reference.assetId),
      ...(source === undefined ? [] : [source.media.assetId]),
    ],
  };
}

async function readReferences(
  db: Kysely<Database>,
  principal: Principal,
  references: readonly H3Reference[],
): Promise<(H3Media['references'][number] & { readonly bytes: number })[]> {
  if (references.length === 0) return [];
  if (principal.kind !== 'personal')
    throw new ApiError(
      'PERMISSION_DENIED',
      'reference assets are personal: name them with a personal API key',
      'referenceAssets',
    );
  const rows = await db
    .selectFrom('assets')
    .select(['id', 'account_id', 'media_type', 'duration_ms', 'bytes'])
    .where(
      'id',
      'in',
      references.map((reference) => reference.assetId),
    )
    .where('deleted_at', 'is', null)
    .where('delivered_at', 'is not', null)
    .execute();
  const byId = new Map(rows.map((row) => [row.id, row]));
  return references.map((reference, index) => {
    const row = byId.get(reference.assetId);
    if (row === undefined || row.account_id !== principal.accountId)
      throw assetNotFound(reference.assetId, `referenceAssets.${index}.asset_id`);
    const allowed = ROLE_MEDIA[reference.role];
    if (!allowed.includes(row.media_type))
      throw invalidInput(
        `referenceAssets.${index}.role`,
        `${reference.role} must be ${allowed.join(' or ')}; asset ${reference.assetId} is ${row.media_type}`,
      );
    return { ...reference, durationMs: row.duration_ms ?? 0, bytes: row.bytes };
  });
}

async function readSource(db: Kysely<Database>, principal: Principal, taskId: string) {
  const task = await db
    .selectFrom('tasks')
    .select(['id', 'kind', 'key_id', 'status', 'billing_state', 'input'])
    .where('id', '=', taskId)
    .executeTakeFirst();
  if (task === undefined || task.key_id !== principal.keyId)
    throw new ApiError('TASK_NOT_FOUND', 'no such task', 'source_task_id');
  // Parsed with the schema that wrote it: a source row that fails it is a `CorruptTaskRow`,
  // answered like a caller's read of a corrupt task (500, the reason in the log only) before
  // anything is held or created — never a video source guessed from garbage.
  const action = task.kind === 'h3' ? storedInputOf(H3_STORED_INPUT, task).action : undefined;
  if (task.kind === 'image' || action === 'understand')
    throw invalidInput(
      'source_task_id',
      `task ${taskId} made ${task.kind === 'image' ? 'images' : 'text'}, not a video: name a video task (an H3 generate or regenerate, or a /v1/videos task)`,
    );
  if (task.status !== 'succeeded')
    throw invalidInput(
      'source_task_id',
      `task ${taskId} is ${task.status === 'failed' ? 'FAILED' : task.status}: only a succeeded video task can be the source`,
    );
  if (task.billing_state !== 'settled')
    throw new ApiError(
      'CONTENT_NOT_DELIVERED',
      task.billing_state === 'expired'
        ? `task ${taskId} expired unsettled: its video was deleted`
        : `task ${taskId} awaits settlement: settle it, then use its video`,
      'source_task_id',
    );
  const asset = await db
    .selectFrom('assets')
    .select(['id', 'duration_ms', 'bytes'])
    .where('task_id', '=', taskId)
    .where('media_type', '=', 'video/mp4')
    .where('deleted_at', 'is', null)
    .where('delivered_at', 'is not', null)
    .orderBy('id')
    .executeTakeFirst();
  if (asset === undefined)
    throw invalidInput('source_task_id', `task ${taskId} has no video any more (it was deleted)`);
  const kind: H3VideoSource =
    task.kind === 'video' ? 'video_task' : action === 'regenerate' ? 'regenerated' : 'generated';
  return {
    kind,
    bytes: asset.bytes,
    media: { taskId, assetId: asset.id, durationMs: asset.duration_ms ?? 0 },
  };
}
