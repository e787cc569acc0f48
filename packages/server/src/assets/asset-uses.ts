import { UNFINISHED_TASK_STATUSES } from '@tollgate/protocol';
import type { Kysely, Transaction } from 'kysely';
import { ApiError } from '../errors/api-error.js';
import type { Database, RequestStatus } from '../store/schema.js';
import type { Clock } from '../util/effects.js';

/** Request states that are not final: the request may still need the assets it named. */
export const UNFINISHED_REQUEST_STATES: readonly RequestStatus[] = [
  'processing',
  'submission_unknown',
  'awaiting_funds',
];

/**
 * The 404 of a missing asset, also given for another account's. Inside a body (`param` set) it
 * names the id, since a body may name several; on a route the id is the path.
 */
export const assetNotFound = (id: string, param?: string) =>
  param === undefined
    ? new ApiError('NOT_FOUND', 'no such asset')
    : new ApiError('NOT_FOUND', `no such asset ${id.slice(0, 64)}`, param);

/**
 * A live, delivered asset of the account, for its content routes (`/v1/assets/{id}/content`
 * and the console's): anything else, another account's included, is the 404 of a missing one.
 */
export async function ownDeliveredAsset(db: Kysely<Database>, accountId: string, id: string) {
  const row = await db
    .selectFrom('assets')
    .selectAll()
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .where('delivered_at', 'is not', null)
    .executeTakeFirst();
  if (row === undefined || row.account_id !== accountId) throw assetNotFound(id);
  return row;
}

/**
 * Locks an asset row for the rest of the transaction and says whether it is live and the
 * account's. The no-op update takes PostgreSQL's row lock (SQLite's `BEGIN IMMEDIATE` already
 * serialises writers), so deletion and a new use of the same asset never interleave: whichever
 * commits second sees the other's effect.
 */
async function lockLiveAsset(
  trx: Transaction<Database>,
  accountId: string,
  assetId: string,
): Promise<boolean> {
  const locked = await trx
    .updateTable('assets')
    .set((eb) => ({ deleted_at: eb.ref('deleted_at') }))
    .where('id', '=', assetId)
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    // An undelivered task output is not the caller's yet: the same 404 as a missing asset.
    .where('delivered_at', 'is not', null)
    .executeTakeFirst();
  return locked.numUpdatedRows === 1n;
}

/**
 * Records that a request uses these assets, inside the transaction that claims the request. An
 * asset deleted since the caller's request was read is the 404 of a missing asset, and the
 * whole claim rolls back.
 */
export async function recordAssetUses(
  trx: Transaction<Database>,
  use: { accountId: string; requestId: string; assetIds: readonly string[]; now: number },
): Promise<void> {
  const distinct = [...new Set(use.assetIds)].sort();
  if (distinct.length === 0) return;
  for (const assetId of distinct) {
    if (!(await lockLiveAsset(trx, use.accountId, assetId)))
      throw assetNotFound(assetId, 'assetIds');
  }
  await trx
    .insertInto('asset_uses')
    .values(
      distinct.map((assetId) => ({
        asset_id: assetId,
        request_id: use.requestId,
        created_at: use.now,
      })),
    )
    .execute();
}

/**
 * Deletes an asset of the account, unless a request that uses it is unfinished (409
 * `ASSET_IN_USE`, naming that request). Another account's asset is the 404 of a missing one.
 */
export async function deleteAsset(
  db: Kysely<Database>,
  target: { accountId: string; assetId: string; clock: Clock },
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (!(await lockLiveAsset(trx, target.accountId, target.assetId)))
      throw assetNotFound(target.assetId);
    const user = await trx
      .selectFrom('asset_uses')
      .innerJoin('requests', 'requests.id', 'asset_uses.request_id')
      // A task's creation record stays `accepted`: the task says whether it is unfinished.
      .leftJoin('tasks', 'tasks.id', 'requests.task_id')
      .select([
        'requests.id',
        'requests.status',
        'tasks.id as task_id',
        'tasks.status as task_status',
      ])
      .where('asset_uses.asset_id', '=', target.assetId)
      .where((eb) =>
        eb.or([
          eb('requests.status', 'in', UNFINISHED_REQUEST_STATES),
          eb('tasks.status', 'in', UNFINISHED_TASK_STATUSES),
        ]),
      )
      .orderBy('requests.id')
      .executeTakeFirst();
    if (user !== undefined)
      throw new ApiError(
        'ASSET_IN_USE',
        user.task_id === null
          ? `asset ${target.assetId} is used by request ${user.id}, which is ${user.status}; delete it once that request is finished, settled or resolved`
          : `asset ${target.assetId} is used by task ${user.task_id}, which is ${user.task_status}; delete it once that task is finished`,
      );
    await trx
      .updateTable('assets')
      // Read now, once the lock is held and no use is unfinished: every use finished before it
      // (a time read before the lock could precede the end of a use that finished meanwhile).
      .set({ deleted_at: target.clock.now() })
      .where('id', '=', target.assetId)
      .execute();
  });
}
