import { expect } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import type { TestGateway } from './gateway.js';

export interface TaskBody {
  id: string;
  object: string;
  status: string;
  request_id: string;
  finished_at?: string;
  quote: { quoted_amount: number; price_version: string };
  billing: {
    settlement_pending: boolean;
    actual_amount?: number;
    price_version: string;
    reserved_amount: number;
    settled_amount: number;
    state: string;
  };
  settlement?: { url: string; method: string; expires_at: string };
  outputs?: { asset_id: string; media_type: string; content_url: string; seconds: number | null }[];
  error?: { code: string; message: string };
}

/** Ticks the gateway's task worker until `done` says so (or fails after `timeoutMs`). */
export async function workUntil(
  gateway: TestGateway,
  done: () => Promise<boolean>,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('tasks did not get there in time');
    await gateway.services.taskWorker.tick();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Reads a task with `key` until it has left `queued`/`running`; returns it. */
export async function finishedTask(
  gateway: TestGateway,
  key: string,
  path: string,
): Promise<TaskBody> {
  let task: TaskBody | undefined;
  await workUntil(gateway, async () => {
    task = (await gateway.call('GET', path, { key })).json<TaskBody>();
    return task.status !== 'queued' && task.status !== 'running';
  });
  if (task === undefined) throw new Error('no task');
  return task;
}

/** The exact settle body of spec 4.3 for a priced task. */
export function settleBodyOf(task: TaskBody) {
  return {
    actual_amount: task.billing.actual_amount,
    price_version: task.billing.price_version,
    confirmation: 'settle_original_approved',
  };
}

export function json<T>(response: LightMyRequestResponse): T {
  return response.json<T>();
}

/**
 * A settled task charged its account exactly its actual amount (more than nothing), once, with
 * nothing left held: the balance is `opening` less that amount, which it returns.
 */
export async function expectChargedActualOnce(
  client: TestGateway,
  accountId: string,
  opening: number,
  task: { billing: { actual_amount?: number | null } },
): Promise<number> {
  const charged = task.billing.actual_amount ?? 0;
  expect(charged).toBeGreaterThan(0);
  expect(await client.balance(accountId)).toEqual({
    balance: opening - charged,
    held: 0,
    available: opening - charged,
  });
  return charged;
}
