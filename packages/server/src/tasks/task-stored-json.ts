import type { LineItem, TaskResolution } from '@tollgate/protocol';
import { z } from 'zod';
import { CorruptTaskRow, describe } from './task-family.js';
import type { TaskRow } from './task-store.js';

/**
 * The JSON columns every family's task stores alike, parsed at the store boundary with the
 * schemas of what the kernel writes there (task-steps.ts, task-row.ts): a row that does not
 * match is a `CorruptTaskRow` (the task stops for an operator), never a price or a view built
 * on a guess. A family's own input is parsed by the family (task-family.ts `parseInput`).
 */

const amount = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

export const lineItemSchema = z.strictObject({
  name: z.enum(['image', 'video_second', 'reference_image', 'input_token', 'output_token']),
  quantity: z.number().min(0),
  free_quantity: z.number().int().min(0).optional(),
  unit_price: amount,
  per_units: z.number().int().min(1).optional(),
  amount,
  measured: z
    .strictObject({
      input_audio_seconds: z.number().min(0),
      input_video_seconds: z.number().min(0),
      output_seconds: z.number().min(0),
    })
    .optional(),
  detail: z.string(),
});

const lineItemsSchema = z.array(lineItemSchema);

/** One stored output file of a task (an asset of the creating account). */
export const taskOutputSchema = z.strictObject({
  asset_id: z.string().min(1),
  media_type: z.string().min(1),
  bytes: z.number().int().min(0),
  width: z.number().int().nullable(),
  height: z.number().int().nullable(),
  /** Videos: seconds of the delivered file. */
  seconds: z.number().min(0).nullable(),
});

export type TaskOutput = z.infer<typeof taskOutputSchema>;

/** What a task stores as its outputs: files, or the text of a text answer (H3 `understand`). */
const outputsSchema = z.array(z.union([taskOutputSchema, z.strictObject({ text: z.string() })]));

export type StoredOutput = z.infer<typeof outputsSchema>[number];

function parseColumn<Out>(
  row: Pick<TaskRow, 'id'>,
  column: string,
  text: string,
  schema: z.ZodType<Out>,
): Out {
  try {
    return schema.parse(JSON.parse(text));
  } catch (error) {
    throw new CorruptTaskRow(
      `task ${row.id}: its stored ${column} does not match their schema (${describe(error)})`,
    );
  }
}

/** The quote's line items. */
// (`as`: the schema's optional fields read `| undefined`, which LineItem spells as absent.)
export const quotedLineItemsOf = (row: Pick<TaskRow, 'id' | 'line_items'>): LineItem[] =>
  parseColumn(row, 'line_items', row.line_items, lineItemsSchema) as LineItem[];

/** The bill's line items, once priced. */
export const actualLineItemsOf = (
  row: Pick<TaskRow, 'id' | 'actual_line_items'>,
): LineItem[] | null =>
  row.actual_line_items === null
    ? null
    : (parseColumn(row, 'actual_line_items', row.actual_line_items, lineItemsSchema) as LineItem[]);

/** The stored outputs, once the task succeeded. */
export const outputsOf = (row: Pick<TaskRow, 'id' | 'outputs'>): StoredOutput[] | null =>
  row.outputs === null ? null : parseColumn(row, 'outputs', row.outputs, outputsSchema);

/** What the upstream reported delivering (providers/task-provider.ts `DeliveryReport`). */
const deliveryReportSchema = z.strictObject({
  imagesDelivered: z.number().int().min(0),
  secondsDelivered: z.number().min(0),
  billedFailure: z.boolean(),
  tokens: z
    .strictObject({ input: z.number().int().min(0), output: z.number().int().min(0) })
    .optional(),
});

/**
 * A finished task's result not delivered yet, kept for the next step (task-outputs.ts): either
 * the URLs the upstream gave, in order, to download again (`urls`), or the number of outputs
 * already stored as the task's undelivered assets (`stored`: a late answer of bytes,
 * task-late-answer.ts), with the upstream's delivery report.
 */
export const resultSourcesSchema = z.union([
  z.strictObject({ urls: z.array(z.url()).min(1).max(16), report: deliveryReportSchema }),
  z.strictObject({ stored: z.number().int().min(0).max(16), report: deliveryReportSchema }),
]);

export type ResultSources = z.infer<typeof resultSourcesSchema>;

/** The kept result sources, while a finished task's download is being retried. */
export const resultSourcesOf = (
  row: Pick<TaskRow, 'id' | 'result_sources'>,
): ResultSources | null =>
  row.result_sources === null
    ? null
    : parseColumn(row, 'result_sources', row.result_sources, resultSourcesSchema);

/** How an operator resolved a task (task-operations.ts writes it; the wire's `TaskResolution`). */
export const taskResolutionSchema = z.strictObject({
  action: z.enum(['release', 'attach']),
  reason: z.string().min(1).max(1_000),
  by: z.literal('operator'),
  at: z.iso.datetime(),
  upstream_task_id: z.string().min(1).optional(),
});

/** The operator's resolution, when there is one. */
export const resolutionOf = (row: Pick<TaskRow, 'id' | 'resolution'>): TaskResolution | null =>
  row.resolution === null
    ? null
    : // (`as`: the schema's optional field reads `| undefined`, which TaskResolution spells as absent.)
      (parseColumn(row, 'resolution', row.resolution, taskResolutionSchema) as TaskResolution);
