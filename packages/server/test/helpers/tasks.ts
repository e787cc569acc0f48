import { expect } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import type { ConfigFile } from '../../src/config/schema.js';
import { simulatorBaseUrl, startSimulator, type Simulator } from '../../src/simulator/server.js';
import type { Clock } from '../../src/util/effects.js';
import { asSkippingClock, skippingClock, type SkippingClock } from './clock.js';
import type { TestDialect } from './dialects.js';
import { startGateway, testConfig, type TestGateway } from './gateway.js';

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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Ticks the gateway's task worker until `done` says so (or fails after `timeoutMs` of real
 * time). A tick that ran steps is followed by the next at once; one that ran none waits for the
 * next task's `due_at` — skipped to at once on a `skippingClock` (`startTaskGateway`), waited for
 * (50 ms at most) on any other clock. A task already due that no tick takes is under a live
 * claim, whose lease runs out by the database's clock (or waits for a free slot): that is a short
 * real wait, never skipped.
 */
export async function workUntil(
  gateway: TestGateway,
  done: () => Promise<boolean>,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const skipping = asSkippingClock(gateway.services.clock);
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('tasks did not get there in time');
    if ((await gateway.services.taskWorker.tick()) > 0) continue;
    const next = await nextDueAt(gateway);
    const now = gateway.services.clock.now();
    if (next === undefined || next <= now) await sleep(next === undefined ? 20 : 10);
    else if (skipping !== undefined) skipping.advanceTo(next);
    else await sleep(Math.min(next - now, 50));
  }
}

/** The earliest `due_at` of any task (undefined: none is due again until something acts). */
async function nextDueAt(gateway: TestGateway): Promise<number | undefined> {
  const row = await gateway.services.store.db
    .selectFrom('tasks')
    .select((eb) => eb.fn.min('due_at').as('next'))
    .where('due_at', 'is not', null)
    .executeTakeFirst();
  return row?.next === null || row?.next === undefined ? undefined : Number(row.next);
}

/** A test gateway whose simulator runs on the gateway's clock (`startTaskGateway`). */
export type TaskGateway<C extends Clock = SkippingClock> = TestGateway & {
  readonly clock: C;
  readonly simulator: Simulator;
};

/**
 * `startGateway` for task tests: the gateway and its simulator share one clock (by default a
 * `skippingClock`), so a simulated job's progress, the worker's poll back-offs and a task's next
 * due time move together, and `workUntil` skips the time nothing is due instead of waiting for it.
 *
 * The simulator is the same one `kind: 'simulator'` starts in-process (simulator/server.ts), only
 * started here, on that clock: each `simulator` upstream of the configuration becomes an HTTP
 * upstream at its URL with the simulator's task look-up (`task_lookup`, which `kind: 'simulator'`
 * has by default), every other setting of it (timeouts, failover statuses) kept.
 */
export async function startTaskGateway<C extends Clock = SkippingClock>(
  dialect: TestDialect,
  options: Omit<NonNullable<Parameters<typeof startGateway>[1]>, 'clock'> & { clock?: C } = {},
): Promise<TaskGateway<C>> {
  const clock = options.clock ?? (skippingClock() as Clock as C);
  const simulator = await startSimulator({ now: () => clock.now() });
  try {
    const config = onSimulator(options.config ?? testConfig(), simulator);
    const gateway = await startGateway(dialect, { ...options, config, clock });
    return {
      ...gateway,
      clock,
      simulator,
      async close() {
        await gateway.close();
        await simulator.close();
      },
    };
  } catch (error) {
    await simulator.close();
    throw error;
  }
}

/** The configuration with its `simulator` upstreams pointed at `simulator`. */
function onSimulator(config: ConfigFile, simulator: Simulator): ConfigFile {
  const upstreams = Object.entries(config.upstreams ?? {}).map(([name, upstream]) => [
    name,
    upstream.kind === 'simulator'
      ? {
          ...upstream,
          kind: 'openai' as const,
          base_url: simulatorBaseUrl(simulator),
          task_lookup: upstream.task_lookup ?? true,
        }
      : upstream,
  ]);
  return { ...config, upstreams: Object.fromEntries(upstreams) as ConfigFile['upstreams'] };
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
