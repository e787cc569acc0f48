import type { ExpressionBuilder, Kysely } from 'kysely';
import { ApiError } from '../errors/api-error.js';
import type { Database } from '../store/schema.js';
import type { AssetStorage } from './local-storage.js';

/**
 * The lifetime of stored asset objects. Objects are content-addressed and shared by every asset
 * with the same bytes, so deleting an asset never deletes bytes; the sweeper reclaims an object
 * once no live asset names it. The database decides, without a transaction held across storage
 * I/O:
 *
 * - An upload **claims** the object (`claimObject`) before placing its bytes and recording the
 *   asset: the row becomes `live` with `claimed_at = now`.
 * - The sweeper marks an object `reclaiming` only if it is `live`, no live asset names it, and no
 *   upload claimed it within the grace period — one guarded UPDATE, so it and a claim serialise
 *   on the row. Then it deletes the bytes, then the row.
 * - A claim never revives a `reclaiming` object (its bytes may be going away): the upload waits
 *   until the reclaim is done and claims a fresh row, then places the bytes again.
 *
 * The grace period must exceed the time from a claim to the asset row (placing the bytes of one
 * upload); a reclaim interrupted by a crash is finished by a later sweep (`STUCK_RECLAIM_MS`).
 */

/**
 * A stored object as an answer serves it (http/serve-content.ts): asset content, video content, a
 * public share.
 */
export interface ServedObject {
  readonly sha256: string;
  readonly bytes: number;
  readonly media_type: string;
  readonly created_at: number;
}

export const RECLAIM_GRACE_MS = 60 * 60 * 1000;

export interface ClaimOptions {
  /** How long an upload waits for a reclaim of the same bytes to finish. */
  readonly waitMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Claims the object an upload is about to place; see the module comment. */
export async function claimObject(
  db: Kysely<Database>,
  sha256: string,
  now: () => number,
  options: ClaimOptions = {},
): Promise<void> {
  const sleep = options.sleep ?? defaultSleep;
  const waitMs = options.waitMs ?? 10_000;
  for (let waited = 0; ; waited += 50) {
    const claimed = await db
      .insertInto('asset_objects')
      .values({ sha256, state: 'live', claimed_at: now() })
      .onConflict((conflict) =>
        conflict
          .column('sha256')
          .doUpdateSet((eb) => ({ claimed_at: eb.ref('excluded.claimed_at') }))
          .where('asset_objects.state', '=', 'live'),
      )
      .returning('sha256')
      .executeTakeFirst();
    if (claimed !== undefined) return;
    if (waited >= waitMs)
      throw new ApiError(
        'INTERNAL_ERROR',
        'the storage is deleting an earlier copy of these bytes; send the upload again',
      );
    await sleep(50);
  }
}

export interface ReclaimReport {
  readonly reclaimed: number;
}

/** Another sweep's reclaim this old is taken to have died with its instance, and is finished. */
export const STUCK_RECLAIM_MS = 10 * 60 * 1000;

/** No live asset names the object: the condition for reclaiming it. */
const namedByNoLiveAsset = (eb: ExpressionBuilder<Database, 'asset_objects'>) =>
  eb.not(
    eb.exists(
      eb
        .selectFrom('assets')
        .select('assets.id')
        .whereRef('assets.sha256', '=', 'asset_objects.sha256')
        .where('assets.deleted_at', 'is', null),
    ),
  );

export interface ReclaimOptions {
  readonly now: number;
  /** How long after its last upload an unused object is kept (default `RECLAIM_GRACE_MS`). */
  readonly graceMs?: number;
}

/** An object the sweeper may reclaim: unused and past its grace, or a reclaim left stuck. */
export interface ReclaimCandidate {
  readonly sha256: string;
  readonly state: 'live' | 'reclaiming';
}

/** The condition for reclaiming an object found in `state`, checked again when marking it. */
function reclaimable(
  eb: ExpressionBuilder<Database, 'asset_objects'>,
  state: ReclaimCandidate['state'],
  options: ReclaimOptions,
) {
  if (state === 'reclaiming')
    return eb.and([
      eb('state', '=', 'reclaiming'),
      eb('claimed_at', '<', options.now - STUCK_RECLAIM_MS),
    ]);
  return eb.and([
    eb('state', '=', 'live'),
    eb('claimed_at', '<', options.now - (options.graceMs ?? RECLAIM_GRACE_MS)),
    namedByNoLiveAsset(eb),
  ]);
}

export function findReclaimable(
  db: Kysely<Database>,
  options: ReclaimOptions & { limit?: number },
): Promise<ReclaimCandidate[]> {
  return db
    .selectFrom('asset_objects')
    .select(['sha256', 'state'])
    .where((eb) =>
      eb.or([reclaimable(eb, 'reclaiming', options), reclaimable(eb, 'live', options)]),
    )
    .limit(options.limit ?? 100)
    .execute();
}

/**
 * Reclaims one candidate: marks it, guarded again in the same statement (an upload's claim since
 * the candidate was found wins), deletes its bytes, then its row. `false` when it was not ours to
 * reclaim any more. While reclaiming, `claimed_at` is when this reclaim started.
 */
export async function reclaimObject(
  db: Kysely<Database>,
  storage: AssetStorage,
  candidate: ReclaimCandidate,
  options: ReclaimOptions,
): Promise<boolean> {
  const marked = await db
    .updateTable('asset_objects')
    .set({ state: 'reclaiming', claimed_at: options.now })
    .where('sha256', '=', candidate.sha256)
    .where((eb) => reclaimable(eb, candidate.state, options))
    .executeTakeFirst();
  if (marked.numUpdatedRows !== 1n) return false;
  await storage.remove(candidate.sha256);
  await db
    .deleteFrom('asset_objects')
    .where('sha256', '=', candidate.sha256)
    .where('state', '=', 'reclaiming')
    .where('claimed_at', '=', options.now)
    .execute();
  return true;
}

/**
 * Deletes the bytes of objects that no live asset has named for the grace period (at most
 * `limit` per call), and finishes reclaims that a dead instance left half-done. Run one sweep at
 * a time per instance; sweeps of several instances may overlap: each reclaims only what it
 * marked itself, or what has been stuck for `STUCK_RECLAIM_MS`.
 */
export async function reclaimUnusedObjects(
  db: Kysely<Database>,
  storage: AssetStorage,
  options: ReclaimOptions & { limit?: number },
): Promise<ReclaimReport> {
  let reclaimed = 0;
  for (const candidate of await findReclaimable(db, options)) {
    if (await reclaimObject(db, storage, candidate, options)) reclaimed += 1;
  }
  return { reclaimed };
}
