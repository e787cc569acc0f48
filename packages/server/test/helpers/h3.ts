import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { H3Quote, H3Task } from '@tollgate/protocol';
import type { TestGateway } from './gateway.js';
import { workUntil } from './tasks.js';

/** An H3 input (spec 4.4) without `operation` and the echo. */
export type H3Input = Record<string, unknown> & { model?: string; action: string };

/** `POST /v1/h3/tasks` with `"operation":"quote"`; asserts 200. */
export async function h3Quote(gateway: TestGateway, key: string, input: H3Input): Promise<H3Quote> {
  const response = await gateway.call('POST', '/v1/h3/tasks', {
    key,
    body: { model: 'sim-h3', ...input, operation: 'quote' },
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<H3Quote>();
}

/** The submit body of an input and its quote: the input, identical, plus the echo. */
export function submitBody(input: H3Input, quote: H3Quote) {
  return {
    model: 'sim-h3',
    ...input,
    operation: 'submit',
    expected_input_digest: quote.input_digest,
    expected_price_version: quote.price_version,
    expected_quote_amount: quote.quoted_amount,
  };
}

/** Quote, then submit the same input with the echo; returns the raw submit response. */
export async function h3QuoteAndSubmit(
  gateway: TestGateway,
  key: string,
  input: H3Input,
  idempotencyKey: string = randomUUID(),
) {
  const quote = await h3Quote(gateway, key, input);
  const response = await gateway.call('POST', '/v1/h3/tasks', {
    key,
    idempotencyKey,
    body: submitBody(input, quote),
  });
  return { quote, response };
}

/** Ticks the worker until the task left queued/running; returns it as read. */
export async function finishedH3(gateway: TestGateway, key: string, id: string): Promise<H3Task> {
  let task: H3Task | undefined;
  await workUntil(gateway, async () => {
    task = (await gateway.call('GET', `/v1/h3/tasks/${id}`, { key })).json<H3Task>();
    return task.status !== 'queued' && task.status !== 'running';
  });
  if (task === undefined) throw new Error('no task');
  return task;
}

/** The exact settle body of spec 4.5 for a priced H3 task. */
export function h3SettleBody(task: H3Task) {
  return {
    actual_amount: task.billing.actual_amount,
    price_version: task.billing.price_version,
    confirmation: 'settle_original_h3',
  };
}

/** Submits, works and settles an H3 task; returns it settled. Asserts each step. */
export async function settledH3(
  gateway: TestGateway,
  key: string,
  input: H3Input,
): Promise<H3Task> {
  const { response } = await h3QuoteAndSubmit(gateway, key, input);
  expect(response.statusCode, response.body).toBe(202);
  const task = await finishedH3(gateway, key, response.json<H3Task>().id);
  expect(task.status, JSON.stringify(task)).toBe('succeeded');
  const settled = await gateway.call('POST', `/v1/h3/tasks/${task.id}/settle`, {
    key,
    body: h3SettleBody(task),
  });
  expect(settled.statusCode, settled.body).toBe(200);
  return settled.json<H3Task>();
}

/** Rows that prove nothing was created: tasks, holds and records. */
export async function countCreated(gateway: TestGateway) {
  const db = gateway.services.store.db;
  const count = async (table: 'tasks' | 'holds' | 'requests') =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<string>().as('count'))
          .executeTakeFirstOrThrow()
      ).count,
    );
  return {
    tasks: await count('tasks'),
    holds: await count('holds'),
    requests: await count('requests'),
  };
}
