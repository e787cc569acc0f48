import { call, type Page } from './api.js';

/**
 * The caller's task and settlement calls (docs/console.md, "Tasks"): the owner's view of every
 * key's tasks, the spec's exact settle body, records awaiting funds.
 */

/** One line of a bill (protocol `LineItem`): `amount = (quantity - free_quantity) * unit_price`. */
export interface LineItem {
  name: string;
  quantity: number;
  free_quantity?: number;
  unit_price: number;
  amount: number;
  detail: string;
}

export interface TaskBilling {
  settlement_pending: boolean;
  actual_amount?: number;
  price_version: string;
  reserved_amount: number;
  settled_amount: number;
  state: 'reserved' | 'pending' | 'settled' | 'released' | 'expired';
  line_items?: LineItem[];
  pricing_rule?: string;
}

export interface TaskOutput {
  asset_id: string;
  media_type: string;
  bytes: number;
  width: number | null;
  height: number | null;
}

export interface OwnerTask {
  object: 'image.task' | 'video.task' | 'h3.task';
  id: string;
  key_id: string;
  model: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'submission_unknown';
  created_at: string;
  finished_at?: string;
  billing: TaskBilling;
  settlement?: { url: string; method: string; expires_at: string };
  outputs?: TaskOutput[];
  error?: { code: string; message: string };
}

export interface AwaitingRecord {
  id: string;
  key_id: string;
  model: string | null;
  status: string;
  bill: { amount: number } | null;
  created_at: string;
}

/** The confirmation word of the task's family (spec 4.3, 4.5). */
export function confirmationOf(task: OwnerTask): string {
  return task.object === 'h3.task' ? 'settle_original_h3' : 'settle_original_approved';
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

export interface AccountUsage {
  from: string;
  to: string;
  data: { date: string; model: string; requests: number; amount: number }[];
  totals: { requests: number; amount: number };
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

/** What each key of the account was charged over a range (`GET /console/api/usage/keys`). */
export interface KeySpend {
  from: string;
  to: string;
  data: { key_id: string | null; requests: number; amount: number }[];
}

export const callerApi = {
  /** Spend per UTC day and model; `from`/`to` are `YYYY-MM-DD` (UTC), both included. */
  usage: (from: string, to: string) => call<AccountUsage>('GET', `/usage?from=${from}&to=${to}`),
  /** Spend per key over the same kind of range. */
  keySpend: (from: string, to: string) =>
    call<KeySpend>('GET', `/usage/keys?from=${from}&to=${to}`),
  tasks: (filter: { billing_state?: string } = {}) =>
    call<{ data: OwnerTask[] }>(
      'GET',
      `/tasks${filter.billing_state === undefined ? '' : `?billing_state=${encodeURIComponent(filter.billing_state)}`}`,
    ),
  task: (id: string) => call<OwnerTask>('GET', `/tasks/${encodeURIComponent(id)}`),
  /** The spec's exact settle body; `idempotencyKey` is kept by the caller for a retry. */
  settleTask: (task: OwnerTask, idempotencyKey: string) =>
    call<OwnerTask>(
      'POST',
      `/tasks/${encodeURIComponent(task.id)}/settle`,
      {
        actual_amount: task.billing.actual_amount,
        price_version: task.billing.price_version,
        confirmation: confirmationOf(task),
      },
      { 'idempotency-key': idempotencyKey },
    ),
  awaitingRecords: () =>
    call<Page<AwaitingRecord>>('GET', '/requests?status=awaiting_funds&limit=100'),
  settleRecord: (id: string, idempotencyKey: string) =>
    call<AwaitingRecord>('POST', `/requests/${encodeURIComponent(id)}/settle`, undefined, {
      'idempotency-key': idempotencyKey,
    }),
};
