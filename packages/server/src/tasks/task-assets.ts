import type { FamilyStepDeps } from './task-family.js';
import type { TaskRow } from './task-store.js';

/**
 * The task's input assets, read from storage, in the order named. Their asset uses (recorded at
 * creation) keep them from deletion while the task is unfinished; one that is gone anyway is
 * skipped. Only the task's own account's assets are read.
 */
export async function readTaskAssets(
  deps: Pick<FamilyStepDeps, 'db' | 'storage'>,
  task: Pick<TaskRow, 'account_id'>,
  assetIds: readonly string[],
): Promise<{ id: string; mediaType: string; bytes: Buffer }[]> {
  if (assetIds.length === 0) return [];
  const rows = await deps.db
    .selectFrom('assets')
    .select(['id', 'sha256', 'media_type'])
    .where('id', 'in', [...assetIds])
    .where('account_id', '=', task.account_id)
    .where('deleted_at', 'is', null)
    .execute();
  const byId = new Map(rows.map((row) => [row.id, row]));
  const ordered = assetIds.flatMap((id) => {
    const row = byId.get(id);
    return row === undefined ? [] : [row];
  });
  return Promise.all(
    ordered.map(async (row) => ({
      id: row.id,
      mediaType: row.media_type,
      bytes: await deps.storage.readAll(row.sha256),
    })),
  );
}
