import type { Kysely } from 'kysely';
import type { AssetTable, Database } from '../store/schema.js';
import type { Clock, IdGenerator } from '../util/effects.js';
import { claimObject } from './asset-objects.js';
import type { AssetStorage, StagedUpload } from './local-storage.js';
import type { Probe } from './probe.js';

/**
 * Places checked, staged bytes at their content address and describes the asset row that names
 * them: the one path by which uploads (uploads/upload-service.ts) and task outputs
 * (assets/output-writer.ts) become assets. The object is claimed before the bytes are placed,
 * so the sweeper cannot reclaim them in between. The caller inserts the row (uploads at once;
 * task outputs undelivered, fenced by the worker's claim: tasks/task-kept-outputs.ts).
 */
export async function placeAsset(
  deps: { db: Kysely<Database>; storage: AssetStorage; clock: Clock; ids: IdGenerator },
  staged: StagedUpload,
  probe: Probe,
  owner: {
    accountId: string;
    keyId: string;
    fileName: string | null;
    model: string | null;
    taskId: string | null;
    /** Uploads are delivered when placed; task outputs when their task is settled. */
    delivered: boolean;
  },
): Promise<AssetTable> {
  await claimObject(deps.db, staged.sha256, () => deps.clock.now());
  await deps.storage.commit(staged);
  const now = deps.clock.now();
  return {
    id: deps.ids.next('asset'),
    account_id: owner.accountId,
    key_id: owner.keyId,
    sha256: staged.sha256,
    media_type: probe.mediaType,
    bytes: staged.bytes,
    width: probe.width,
    height: probe.height,
    duration_ms: probe.durationSeconds === null ? null : Math.round(probe.durationSeconds * 1000),
    file_name: owner.fileName,
    model: owner.model,
    created_at: now,
    deleted_at: null,
    task_id: owner.taskId,
    delivered_at: owner.delivered ? now : null,
  };
}
