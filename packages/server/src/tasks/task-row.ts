import type { LineItem } from '@tollgate/protocol';
import type { ModelConfig } from '../config/schema.js';
import type { RequestIdentity } from '../requests/request-service.js';
import { taskChannel } from '../routing/channels.js';
import type { TaskKind, TaskTable } from '../store/schema.js';

/**
 * A new task row, as every family creates it inside its claim: queued, nothing sent, the quoted
 * amount reserved on `holdId`, due at once for the worker.
 */
export function newTaskRow(task: {
  id: string;
  kind: TaskKind;
  identity: RequestIdentity;
  model: ModelConfig;
  /** The parsed input, stored as JSON: what the worker sends and the bill is priced on. */
  input: object;
  quotedAmount: number;
  priceVersion: string;
  lineItems: readonly LineItem[];
  holdId: string;
  now: number;
}): TaskTable {
  const { now } = task;
  const channel = taskChannel(task.model);
  return {
    id: task.id,
    kind: task.kind,
    account_id: task.identity.principal.accountId,
    key_id: task.identity.principal.keyId,
    request_id: task.identity.requestId,
    model: task.model.id,
    upstream: channel.upstream,
    channel: channel.id,
    status: 'queued',
    submission: 'pending',
    input: JSON.stringify(task.input),
    quoted_amount: task.quotedAmount,
    price_version: task.priceVersion,
    line_items: JSON.stringify(task.lineItems),
    hold_id: task.holdId,
    billing_state: 'reserved',
    actual_amount: null,
    actual_line_items: null,
    pricing_rule: null,
    settled_amount: null,
    upstream_task_id: null,
    outputs: null,
    error_code: null,
    error_message: null,
    resolution: null,
    lease_owner: null,
    lease_until: null,
    claim_token: null,
    vanished_since: null,
    download_failures: 0,
    result_sources: null,
    refreshed_at: null,
    due_at: now,
    attempts: 0,
    submitted_at: null,
    finished_at: null,
    settled_at: null,
    settlement_expires_at: null,
    created_at: now,
    updated_at: now,
  };
}
