import type { H3Action, H3Task } from '@tollgate/protocol';
import type { TaskRow } from '../tasks/task-store.js';
import {
  taskBillingOf,
  taskEndingOf,
  taskPath,
  taskQuoteOf,
  taskSettlementOf,
  type TaskOutput,
} from '../tasks/task-view.js';

/** What an H3 task stores as its outputs: the video (an asset), or the text of an `understand`. */
export type H3StoredOutput = TaskOutput | { readonly text: string };

/** The private download path of an H3 task's video (creating key only, once delivered). */
export const h3ContentPath = (id: string) => `${taskPath('h3', id)}/content`;

/**
 * An H3 task as its creating key reads it (spec 2.6; docs/h3.md, "The task"): `billing` per spec
 * 2.5, `settlement` only while settlement is possible, a failed task as `FAILED`, and once
 * delivered (settled) the video's `asset_id` and `content_path`, or the `text` of an understand.
 */
export function h3TaskView(row: TaskRow): H3Task {
  const input = JSON.parse(row.input) as {
    action: H3Action;
    digest: string;
    sourceTaskId?: string;
  };
  const settlement = taskSettlementOf(row);
  const delivered = row.billing_state === 'settled' && row.outputs !== null;
  const output = delivered ? (JSON.parse(row.outputs ?? '[]') as H3StoredOutput[])[0] : undefined;
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
