import type {
  LineItem,
  Task,
  TaskBilling,
  TaskKind,
  TaskQuote,
  TaskResolution,
  TaskSettlement,
} from '@tollgate/protocol';
import type { TaskRow } from './task-store.js';

/** One stored output of a task (an asset of the creating account). */
export interface TaskOutput {
  readonly asset_id: string;
  readonly media_type: string;
  readonly bytes: number;
  readonly width: number | null;
  readonly height: number | null;
  /** Videos: seconds of the delivered file. */
  readonly seconds: number | null;
}

/** Where a task kind lives on the wire. */
export function taskPath(kind: TaskKind, id: string): string {
  return kind === 'image'
    ? `/v1/images/${id}`
    : kind === 'video'
      ? `/v1/videos/${id}`
      : `/v1/h3/tasks/${id}`;
}

/**
 * Where and how to settle, and until when: present only while the task awaits settlement
 * (billing `pending`), for every family alike.
 */
export function taskSettlementOf(row: TaskRow): TaskSettlement | undefined {
  if (row.billing_state !== 'pending') return undefined;
  // Every move to `pending` fixes the window (task-steps.ts), and migration 017 gave one to the
  // tasks that were pending before: a pending task without one is a bug, not a state.
  if (row.settlement_expires_at === null)
    throw new Error(`task ${row.id} awaits settlement without a settlement window`);
  return {
    url: `${taskPath(row.kind, row.id)}/settle`,
    method: 'POST',
    expires_at: new Date(row.settlement_expires_at).toISOString(),
  };
}

/** The quote a task was created with, as it was held. */
export function taskQuoteOf(row: TaskRow): TaskQuote {
  return {
    quoted_amount: row.quoted_amount,
    price_version: row.price_version,
    currency: 'CNY_MICRO' as const,
    line_items: JSON.parse(row.line_items) as LineItem[],
  };
}

/** The billing object of spec 2.5, the same for every task family. */
export function taskBillingOf(row: TaskRow): TaskBilling {
  return {
    settlement_pending: row.billing_state === 'pending',
    ...(row.actual_amount === null ? {} : { actual_amount: row.actual_amount }),
    price_version: row.price_version,
    reserved_amount: row.quoted_amount,
    settled_amount: row.settled_amount ?? 0,
    state: row.billing_state,
    currency: 'CNY_MICRO' as const,
    ...(row.actual_line_items === null
      ? {}
      : { line_items: JSON.parse(row.actual_line_items) as LineItem[] }),
    ...(row.pricing_rule === null ? {} : { pricing_rule: row.pricing_rule }),
  };
}

/** The parts every family shows alike once the task moved on: when it ended, why it failed, how an operator resolved it. */
export function taskEndingOf(row: TaskRow) {
  return {
    ...(row.status === 'failed' && row.error_code !== null
      ? { error: { code: row.error_code, message: row.error_message ?? '' } }
      : {}),
    ...(row.resolution === null
      ? {}
      : { resolution: JSON.parse(row.resolution) as TaskResolution }),
  };
}

/**
 * The task as its creating key reads it (docs/tasks.md): `billing` per spec 2.5, `settlement`
 * only while settlement is possible, `outputs` only once delivered (settled), `error` for a
 * failed task. Amounts are integer micro-yuan.
 */
export function taskView(row: TaskRow): Task {
  const path = taskPath(row.kind, row.id);
  const settlement = taskSettlementOf(row);
  const delivered = row.billing_state === 'settled' && row.outputs !== null;
  const outputs = delivered ? (JSON.parse(row.outputs ?? '[]') as TaskOutput[]) : undefined;
  return {
    object: row.kind === 'image' ? ('image.task' as const) : ('video.task' as const),
    id: row.id,
    model: row.model,
    status: row.status,
    request_id: row.request_id,
    created_at: new Date(row.created_at).toISOString(),
    ...(row.finished_at === null ? {} : { finished_at: new Date(row.finished_at).toISOString() }),
    quote: taskQuoteOf(row),
    billing: taskBillingOf(row),
    ...(settlement === undefined ? {} : { settlement }),
    ...(outputs === undefined
      ? {}
      : {
          outputs: outputs.map((output) => ({
            ...output,
            content_url:
              row.kind === 'video' ? `${path}/content` : `/v1/assets/${output.asset_id}/content`,
          })),
        }),
    ...taskEndingOf(row),
  };
}

export type TaskView = ReturnType<typeof taskView>;
