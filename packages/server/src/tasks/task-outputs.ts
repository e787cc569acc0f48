import { storeTaskOutput } from '../assets/output-writer.js';
import type { AssetMediaType } from '../assets/probe.js';
import type { DeliveryReport, TaskOutputSource } from '../providers/task-provider.js';
import type { AssetTable } from '../store/schema.js';
import type { TaskStepDeps } from './task-steps.js';
import type { TaskRow } from './task-store.js';
import type { TaskOutput } from './task-view.js';

const IMAGE_TYPES: readonly AssetMediaType[] = ['image/png', 'image/jpeg', 'image/webp'];
const VIDEO_TYPES: readonly AssetMediaType[] = ['video/mp4'];
/** The largest image output stored. */
const MAX_IMAGE_BYTES = 64 * 1024 * 1024;

/**
 * Stores every output of a finished task as an (undelivered) asset, checked by its bytes, and
 * returns the rows to insert, the outputs as the task shows them, and the delivery report to
 * price — for videos with the seconds cut to the stored files' own duration when shorter.
 */
export async function storeOutputs(
  deps: TaskStepDeps,
  task: TaskRow,
  result: { readonly outputs: readonly TaskOutputSource[]; readonly report: DeliveryReport },
): Promise<{ assets: AssetTable[]; outputs: TaskOutput[]; report: DeliveryReport }> {
  const assets: AssetTable[] = [];
  for (const source of result.outputs) {
    const opened = await source.open();
    deps.fault('mid_download', task);
    assets.push(
      await storeTaskOutput(
        { db: deps.db, storage: deps.storage, clock: deps.effects.clock, ids: deps.effects.ids },
        {
          body: opened.body,
          maxBytes: task.kind === 'image' ? MAX_IMAGE_BYTES : deps.maxVideoBytes,
          mediaTypes: task.kind === 'image' ? IMAGE_TYPES : VIDEO_TYPES,
          accountId: task.account_id,
          keyId: task.key_id,
          taskId: task.id,
          model: task.model,
        },
      ),
    );
  }
  const storedSeconds = assets.reduce((sum, asset) => sum + (asset.duration_ms ?? 0) / 1000, 0);
  const report: DeliveryReport =
    task.kind === 'image'
      ? {
          ...result.report,
          imagesDelivered: Math.min(result.report.imagesDelivered, assets.length),
        }
      : {
          ...result.report,
          secondsDelivered:
            assets.length === 0 ? 0 : Math.min(result.report.secondsDelivered, storedSeconds),
        };
  return {
    assets,
    report,
    outputs: assets.map((asset) => ({
      asset_id: asset.id,
      media_type: asset.media_type,
      bytes: asset.bytes,
      width: asset.width,
      height: asset.height,
      seconds: asset.duration_ms === null ? null : asset.duration_ms / 1000,
    })),
  };
}
