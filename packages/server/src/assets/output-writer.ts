import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { AssetTable, Database } from '../store/schema.js';
import type { Clock, IdGenerator } from '../util/effects.js';
import type { AssetStorage } from './local-storage.js';
import { placeAsset } from './placement.js';
import { probeFile, type AssetMediaType } from './probe.js';

/** A task output that is not what the task makes (wrong type, unreadable, too large). */
export class UnacceptableOutput extends Error {
  override readonly name = 'UnacceptableOutput';
}

/**
 * Stores a task's output as an asset of the creating account, checked like an upload: streamed
 * to staging (hashed, capped), probed by its bytes (never by the upstream's label), required to
 * be one of `mediaTypes`, then placed at its content address. The row is returned, not inserted:
 * the worker records it at once, undelivered (`delivered_at` null) until settlement, fenced by
 * its claim (tasks/task-kept-outputs.ts). Bytes placed by a worker that dies before recording
 * them belong to no asset and are reclaimed by the sweeper (asset-objects.ts).
 */
export async function storeTaskOutput(
  deps: {
    db: Kysely<Database>;
    storage: AssetStorage;
    clock: Clock;
    ids: IdGenerator;
  },
  output: {
    body: Readable;
    maxBytes: number;
    mediaTypes: readonly AssetMediaType[];
    accountId: string;
    keyId: string;
    taskId: string;
    model: string;
  },
  signal?: AbortSignal,
): Promise<AssetTable> {
  const staged = await deps.storage.stage(output.body, output.maxBytes, signal);
  try {
    const probe = await probeFile(staged.tempPath).catch((error: unknown) => {
      throw new UnacceptableOutput(`the output cannot be read: ${(error as Error).message}`);
    });
    if (!output.mediaTypes.includes(probe.mediaType))
      throw new UnacceptableOutput(
        `the output is ${probe.mediaType}, expected ${output.mediaTypes.join(' or ')}`,
      );
    return await placeAsset(deps, staged, probe, {
      accountId: output.accountId,
      keyId: output.keyId,
      fileName: null,
      model: output.model,
      taskId: output.taskId,
      delivered: false,
    });
  } finally {
    await deps.storage.discard(staged);
  }
}
