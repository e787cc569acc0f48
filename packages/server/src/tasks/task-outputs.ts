import { storeTaskOutput } from '../assets/output-writer.js';
import type { DeliveryReport, TaskOutputSource, TaskProvider } from '../providers/task-provider.js';
import type { AssetTable } from '../store/schema.js';
import { TaskNeedsOperator, type TaskFamily } from './task-family.js';
import type { TaskStepDeps } from './task-step-kit.js';
import type { TaskRow } from './task-store.js';
import { keptOutputsOf } from './task-kept-outputs.js';
import { resultSourcesOf, type ResultSources, type TaskOutput } from './task-stored-json.js';

/** A finished upstream result: the outputs to store and what the upstream reports delivering. */
export interface FinishedResult {
  readonly outputs: readonly TaskOutputSource[];
  readonly report: DeliveryReport;
}

/**
 * Stores every output of a finished task as an (undelivered) asset, checked by its bytes
 * against the family's rules, and returns the rows, the outputs as the task shows them, and the
 * delivery report to price, cut by the family to what was stored. Outputs an earlier step of
 * this delivery already stored (task-kept-outputs.ts) are taken as they are, never downloaded
 * twice; `fresh` says whether the rows are new and still to be recorded.
 */
export async function storeOutputs(
  deps: TaskStepDeps,
  family: TaskFamily,
  task: TaskRow,
  result: FinishedResult,
): Promise<{
  assets: AssetTable[];
  outputs: TaskOutput[];
  report: DeliveryReport;
  fresh: boolean;
}> {
  const kept = await keptOutputsOf(deps.db, task.id);
  const reuse = kept.length > 0 && kept.length === result.outputs.length;
  const assets = reuse ? kept : await downloadOutputs(deps, family, task, result);
  return {
    assets,
    fresh: !reuse,
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
 * A finished result whose output the upstream no longer serves (`TaskOutputSource.expiresAt`
 * reached, e.g. Ark's 24-hour result URLs): it can never be stored, whatever is retried.
 */
export class ResultExpired extends Error {
  override readonly name = 'ResultExpired';
  constructor(readonly expiresAt: number) {
    super(`its result URL expired at ${new Date(expiresAt).toISOString()}`);
  }
}

/**
 * Opens and stores each output, checked by its bytes; the rows are returned, not inserted.
 * Throws `ResultExpired`, before opening any, when an output's URL is past its expiry.
 */
async function downloadOutputs(
  deps: TaskStepDeps,
  family: TaskFamily,
  task: TaskRow,
  result: FinishedResult,
): Promise<AssetTable[]> {
  const now = deps.effects.clock.now();
  for (const source of result.outputs)
    if (source.expiresAt !== undefined && source.expiresAt <= now)
      throw new ResultExpired(source.expiresAt);
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
  return assets;
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

/**
 * A result whose outputs could not be stored, as it is kept on the task (`result_sources`) to be
 * retried without asking the upstream again: the URLs the upstream gave and its report. Null
 * when some output has no URL to open again (base64 bytes in the answer: storing them fails the
 * same way every time).
 */
export function keptSources(result: FinishedResult): string | null {
  const urls = result.outputs.map((source) => source.url);
  if (urls.length === 0 || !urls.every((url) => url !== undefined)) return null;
  const kept: ResultSources = { urls, report: result.report };
  return JSON.stringify(kept);
}

/**
 * A result whose outputs are already stored as the task's undelivered assets (a late answer of
 * bytes, task-late-answer.ts), as it is kept on the task: how many, and the upstream's report.
 */
export function storedSources(result: FinishedResult): string {
  const kept: ResultSources = { stored: result.outputs.length, report: result.report };
  return JSON.stringify(kept);
}

/**
 * The result kept on a task not delivered yet, as the next step finishes it; null when none is
 * kept. Kept URLs are opened again through the provider as its own answer's would be (the
 * guarded fetch for another origin). Outputs kept as stored assets are taken as they are
 * (`storeOutputs` reuses them); should they be gone, opening one fails like a broken download.
 */
export function keptResult(provider: TaskProvider, task: TaskRow): FinishedResult | null {
  const kept = resultSourcesOf(task);
  if (kept === null) return null;
  if ('stored' in kept)
    return {
      outputs: Array.from({ length: kept.stored }, () => ({
        open: () =>
          Promise.reject(
            new Error(`task ${task.id}: the output stored from its upstream's answer is gone`),
          ),
      })),
      report: kept.report,
    };
  const reopen = provider.resultSource;
  if (reopen === undefined)
    throw new TaskNeedsOperator(
      `task ${task.id}: its kept result URLs cannot be opened by its upstream's adapter`,
    );
  return { outputs: kept.urls.map((url) => reopen(url)), report: kept.report };
}
