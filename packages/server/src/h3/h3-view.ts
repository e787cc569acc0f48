import type { H3Task } from '@tollgate/protocol';
import type { TaskRow } from '../tasks/task-store.js';
import { outputsOf } from '../tasks/task-stored-json.js';
import { taskBillingOf, taskEndingOf, taskQuoteOf, taskSettlementOf } from '../tasks/task-view.js';
import type { H3StoredInput } from './h3-stored-input.js';

/** Where an H3 task lives on the wire. */
export const h3TaskPath = (id: string) => `/v1/h3/tasks/${id}`;

/** The private download path of an H3 task's video (creating key only, once delivered). */
export const h3ContentPath = (id: string) => `${h3TaskPath(id)}/content`;

/**
 * An H3 task as its creating key reads it (spec 2.6; docs/h3.md, "The task"): `billing` per spec
 * 2.5, `settlement` only while settlement is possible, a failed task as `FAILED`, and once
 * delivered (settled) the video's `asset_id` and `content_path`, or the `text` of an understand.
 * `input` is the row's stored input, parsed by the family (h3-family.ts).
 */
export function h3TaskView(row: TaskRow, input: H3StoredInput): H3Task {
  const settlement = taskSettlementOf(row, h3TaskPath(row.id));
  const delivered = row.billing_state === 'settled';
  const output = delivered ? outputsOf(row)?.[0] : undefined;
  return {
    object: 'h3.task',
    id: row.id,
    model: row.model,
    action: input.action,
    status: row.status === 'failed' ? 'FAILED' : row.status,
    request_id: row.request_id,
    input_digest: input.digest,
    ...(input.sourceTaskId === undefined ? {} : { source_task_id: input.sourceTaskId }),
    created_at: new Date(row.created_at).toISOString(),
    ...(row.finished_at === null ? {} : { finished_at: new Date(row.finished_at).toISOString() }),
    quote: taskQuoteOf(row),
    billing: taskBillingOf(row),
    ...(settlement === undefined ? {} : { settlement }),
    ...(output === undefined
      ? {}
      : 'text' in output
        ? { text: output.text }
        : {
            asset_id: output.asset_id,
            content_path: h3ContentPath(row.id),
            ...(output.seconds === null ? {} : { seconds: output.seconds }),
          }),
    ...taskEndingOf(row),
  };
}
