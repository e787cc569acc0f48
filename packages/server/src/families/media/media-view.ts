import type { Task } from '@tollgate/protocol';
import type { TaskRow } from '../../tasks/task-store.js';
import { outputsOf, type TaskOutput } from '../../tasks/task-stored-json.js';
import {
  taskBillingOf,
  taskEndingOf,
  taskQuoteOf,
  taskSettlementOf,
} from '../../tasks/task-view.js';

/** Where an image or video task lives on the wire. */
export const mediaTaskPath = (kind: 'image' | 'video', id: string) =>
  kind === 'image' ? `/v1/images/${id}` : `/v1/videos/${id}`;

/**
 * An image or video task as its creating key reads it (docs/tasks.md): `billing` per spec 2.5,
 * `settlement` only while settlement is possible, `outputs` only once delivered (settled), each
 * with where its content is read, `error` for a failed task. Amounts are integer micro-yuan.
 */
export function mediaTaskView(
  row: TaskRow,
  object: 'image.task' | 'video.task',
  contentUrl: (id: string, output: TaskOutput) => string,
): Task {
  const path = mediaTaskPath(object === 'image.task' ? 'image' : 'video', row.id);
  const settlement = taskSettlementOf(row, path);
  const delivered = row.billing_state === 'settled';
  const outputs = delivered ? outputsOf(row) : null;
  return {
    object,
    id: row.id,
    model: row.model,
    status: row.status,
    request_id: row.request_id,
    created_at: new Date(row.created_at).toISOString(),
    ...(row.finished_at === null ? {} : { finished_at: new Date(row.finished_at).toISOString() }),
    quote: taskQuoteOf(row),
    billing: taskBillingOf(row),
    ...(settlement === undefined ? {} : { settlement }),
    ...(outputs === null
      ? {}
      : {
          outputs: outputs.flatMap((output) =>
            'text' in output ? [] : [{ ...output, content_url: contentUrl(row.id, output) }],
          ),
        }),
    ...taskEndingOf(row),
  };
}

export type TaskView = ReturnType<typeof mediaTaskView>;

/** An image task's view: each output is read as the asset it is. */
export const imageView = (row: TaskRow) =>
  mediaTaskView(row, 'image.task', (_id, output) => `/v1/assets/${output.asset_id}/content`);

/** A video task's view: its file is read through the task's own content route. */
export const videoView = (row: TaskRow) =>
  mediaTaskView(row, 'video.task', (id) => `${mediaTaskPath('video', id)}/content`);
