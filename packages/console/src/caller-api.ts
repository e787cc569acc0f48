import {
  H3_SETTLE_CONFIRMATION,
  SETTLE_CONFIRMATION,
  type AccountUsage,
  type ConsoleModelList,
  type H3SettleBody,
  type H3Task,
  type KeySpend,
  type OwnerRequestList,
  type OwnerTask,
  type OwnerTaskList,
  type RequestRecord,
  type SettleBody,
  type Task,
  type TaskKind,
  type TaskStatus,
} from '@tollgate/protocol';
import { ApiFailure, queryText, request } from './api.js';

/**
 * The caller's task and settlement calls (docs/console.md, "Tasks"): the owner's view of every
 * key's tasks, the spec's exact settle body, records awaiting funds, and the spend figures.
 */

/**
 * The spec's exact settle body of a task (spec 4.3, 4.5): its actual amount and price version as
 * read, and its family's confirmation word; `null` while it has no actual amount (not priced).
 */
export function settleBodyOf(task: OwnerTask): SettleBody | H3SettleBody | null {
  const { actual_amount: amount, price_version: priceVersion } = task.billing;
  if (amount === undefined) return null;
  return task.object === 'h3.task'
    ? { actual_amount: amount, price_version: priceVersion, confirmation: H3_SETTLE_CONFIRMATION }
    : { actual_amount: amount, price_version: priceVersion, confirmation: SETTLE_CONFIRMATION };
}

/** A task's status, an H3 task's `FAILED` (the spec's spelling) read as `failed`. */
export function statusOf(task: OwnerTask): TaskStatus {
  return task.status === 'FAILED' ? 'failed' : task.status;
}

/** A task's kind from its object (`image.task` → `image`), as `TaskKind` names it. */
export function taskKindOf(task: { object: 'image.task' | 'video.task' | 'h3.task' }): TaskKind {
  return task.object === 'h3.task' ? 'h3' : task.object === 'video.task' ? 'video' : 'image';
}

/**
 * A version-4 UUID for `Idempotency-Key` from `crypto.getRandomValues`, which (unlike
 * `crypto.randomUUID`) also exists on a console served over plain http.
 */
export function newIdempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = [...bytes].map((byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Where the console reads a delivered asset (preview and download). */
export function assetContentUrl(assetId: string): string {
  return `/console/api/assets/${encodeURIComponent(assetId)}/content`;
}

const DAY_MS = 86_400_000;

/** A UTC day `YYYY-MM-DD`, as the usage routes count days. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The last 30 UTC days, today included: the range the overview and the keys page show. */
export function last30Days(now: number): { from: string; to: string } {
  return { from: utcDay(now - 29 * DAY_MS), to: utcDay(now) };
}

export const callerApi = {
  /** The models the account's usable keys may call, with their current prices (models page). */
  callableModels: () => request<ConsoleModelList>('GET', '/models/callable'),
  /** Spend per UTC day and model; `from`/`to` are `YYYY-MM-DD` (UTC), both included. */
  usage: (from: string, to: string) =>
    request<AccountUsage>('GET', `/usage${queryText(new URLSearchParams({ from, to }))}`),
  /** Spend per key over the same kind of range. */
  keySpend: (from: string, to: string) =>
    request<KeySpend>('GET', `/usage/keys${queryText(new URLSearchParams({ from, to }))}`),
  tasks: (filter: { billing_state?: string } = {}) =>
    request<OwnerTaskList>('GET', `/tasks${queryText(new URLSearchParams(filter))}`),
  task: (id: string) => request<OwnerTask>('GET', `/tasks/${encodeURIComponent(id)}`),
  /**
   * The spec's exact settle body (`settleBodyOf`); `idempotencyKey` is kept by the caller for a
   * retry. Answers the creating key's view of the task (without `key_id`).
   */
  settleTask: (task: OwnerTask, idempotencyKey: string) => {
    const body = settleBodyOf(task);
    if (body === null)
      return Promise.reject(new ApiFailure(0, 'UNKNOWN', 'the task has no amount to settle yet'));
    return request<Task | H3Task>('POST', `/tasks/${encodeURIComponent(task.id)}/settle`, {
      body,
      headers: { 'idempotency-key': idempotencyKey },
    });
  },
  awaitingRecords: () =>
    request<OwnerRequestList>('GET', '/requests?status=awaiting_funds&limit=100'),
  settleRecord: (id: string, idempotencyKey: string) =>
    request<RequestRecord>('POST', `/requests/${encodeURIComponent(id)}/settle`, {
      headers: { 'idempotency-key': idempotencyKey },
    }),
};
