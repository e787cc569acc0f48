import { storeTaskOutput } from '../assets/output-writer.js';
import type { DeliveryReport, TaskOutputSource } from '../providers/task-provider.js';
import type { AssetTable } from '../store/schema.js';
import type { TaskFamily } from './task-family.js';
import type { TaskStepDeps } from './task-steps.js';
import type { TaskRow } from './task-store.js';
import type { TaskOutput } from './task-stored-json.js';

/**
 * Stores every output of a finished task as an (undelivered) asset, checked by its bytes
 * against the family's rules, and returns the rows to insert, the outputs as the task shows
 * them, and the delivery report to price, cut by the family to what was stored.
 */
export async function storeOutputs(
  deps: TaskStepDeps,
  family: TaskFamily,
  task: TaskRow,
  result: { readonly outputs: readonly TaskOutputSource[]; readonly report: DeliveryReport },
): Promise<{ assets: AssetTable[]; outputs: TaskOutput[]; report: DeliveryReport }> {
  const rules = family.outputRules(deps);
  const assets: AssetTable[] = [];
  for (const source of result.outputs) {
    const opened = await source.open();
    deps.fault('mid_download', task);
    assets.push(
      await storeTaskOutput(
        { db: deps.db, storage: deps.storage, clock: deps.effects.clock, ids: deps.effects.ids },
        {
          body: opened.body,
          maxBytes: rules.maxBytes,
          mediaTypes: rules.mediaTypes,
          accountId: task.account_id,
          keyId: task.key_id,
          taskId: task.id,
          model: task.model,
        },
      ),
    );
  }
  return {
    assets,
    report: family.deliveredReport(result.report, assets),
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

/**
 * A report of seconds cut to the stored files' own duration when that is shorter (a caller
 * never pays for seconds it cannot play): the `deliveredReport` of families that deliver video.
 */
export function secondsStored(
  report: DeliveryReport,
  stored: readonly AssetTable[],
): DeliveryReport {
  const seconds = stored.reduce((sum, asset) => sum + (asset.duration_ms ?? 0) / 1000, 0);
  return {
    ...report,
    secondsDelivered: stored.length === 0 ? 0 : Math.min(report.secondsDelivered, seconds),
  };
}
