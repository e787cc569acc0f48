import type { Kysely } from 'kysely';
import { invalidInput } from '../errors/api-error.js';
import type { Database } from '../store/schema.js';
import { listPage } from '../util/list-page.js';
import { assetView } from './asset-view.js';

/**
 * The account's readable assets, newest first (`GET /v1/assets` and the console's list): live
 * (not deleted) and delivered (a task's outputs once settled). `limit` 1–100 (default 20);
 * `after` continues after an asset id of this account, else 400 naming it.
 */
export async function listAccountAssets(
  db: Kysely<Database>,
  accountId: string,
  page: { readonly limit?: string | undefined; readonly after?: string | undefined },
) {
  const limit = page.limit === undefined ? 20 : Number(page.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    throw invalidInput('limit', 'must be an integer from 1 to 100');
  let query = db
    .selectFrom('assets')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    // A task's outputs are listed once delivered (settled), not before.
    .where('delivered_at', 'is not', null);
  if (page.after !== undefined) {
    const cursor = await db
      .selectFrom('assets')
      .select(['created_at', 'id'])
      .where('id', '=', page.after)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (cursor === undefined) throw invalidInput('after', 'is not an asset id of this account');
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '<', cursor.created_at),
        eb.and([eb('created_at', '=', cursor.created_at), eb('id', '<', cursor.id)]),
      ]),
    );
  }
  const rows = await query
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  return listPage(rows, limit, assetView);
}
