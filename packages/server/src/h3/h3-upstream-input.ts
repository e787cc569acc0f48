import type { H3TaskInput } from '../providers/task-provider.js';
import { readTaskAssets } from '../tasks/task-assets.js';
import type { FamilyStepDeps } from '../tasks/task-family.js';
import type { TaskRow } from '../tasks/task-store.js';
import type { H3StoredInput } from './h3-stored-input.js';

/**
 * What an H3 upstream is sent (docs/h3-upstream.md): the stored input, with the references'
 * bytes in the order given, the source task's video first as the `reference_video`.
 */
export async function h3UpstreamInput(
  deps: Pick<FamilyStepDeps, 'db' | 'storage'>,
  task: Pick<TaskRow, 'account_id'>,
  input: H3StoredInput,
): Promise<H3TaskInput> {
  const named = [
    ...(input.sourceAssetId === undefined
      ? []
      : [{ assetId: input.sourceAssetId, role: 'reference_video' as const }]),
    ...input.references,
  ];
  const read = await readTaskAssets(
    deps,
    task,
    named.map((reference) => reference.assetId),
  );
  const bytesById = new Map(read.map((asset) => [asset.id, asset]));
  return {
    kind: 'h3',
    action: input.action,
    upstreamModel: input.upstreamModel,
    prompt: input.prompt,
    resolution: input.resolution,
    ratio: input.ratio,
    duration: input.duration,
    generateAudio: input.generateAudio,
    watermark: input.watermark,
    references: named.flatMap((reference) => {
      const asset = bytesById.get(reference.assetId);
      return asset === undefined
        ? []
        : [{ role: reference.role, mediaType: asset.mediaType, bytes: asset.bytes }];
    }),
  };
}
