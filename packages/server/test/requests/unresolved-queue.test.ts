import { afterEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import {
  manualClock,
  shortTimeoutsConfig,
  startGateway,
  type TestGateway,
} from '../helpers/gateway.js';
import { finishedRequest, unknownOutcome } from '../helpers/records.js';
import { workUntil, type TaskBody } from '../helpers/tasks.js';

/**
 * Money held by outcomes never confirmed must be visible in one place, exactly: the operator's
 * queue (`GET /admin/v1/unresolved`: records and tasks, count, held total, oldest) and the
 * gauges an alert watches (`tollgate_submission_unknown_held_microyuan`). Records that hold
 * nothing any more (resolved, succeeded) never count.
 */

describeEachDialect('the unresolved queue and its gauge on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  const clock = manualClock();
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  /** A `sim-image` task whose submission was never answered (`submission_unknown`). */
  async function unknownTask(gw: TestGateway, key: string): Promise<TaskBody> {
    const created = await gw.call('POST', '/v1/images/generations', {
      key,
      body: { model: 'sim-image', prompt: 'fog [sim:task=unknown]', size: '256x256' },
    });
    expect(created.statusCode, created.body).toBe(202);
    const id = created.json<TaskBody>().id;
    let task: TaskBody | undefined;
    await workUntil(gw, async () => {
      task = (await gw.call('GET', `/v1/images/${id}`, { key })).json<TaskBody>();
      return task.status === 'submission_unknown';
    });
    if (task === undefined) throw new Error('no task');
    return task;
  }

  it('totals records and tasks to the micro-yuan, with the oldest, and the gauge reports the same', async () => {
    gateway = await startGateway(dialect, { clock, config: shortTimeoutsConfig() });
    const gw = gateway;
    const { key } = await gw.account(100_000_000);
    const first = await finishedRequest(gw.services, {
      key,
      hold: 11_111,
      outcome: unknownOutcome,
    });
    clock.advance(90_000);
    await finishedRequest(gw.services, { key, hold: 22_222, outcome: unknownOutcome });
    // Resolved by an operator: its hold is released, it is no longer in the queue.
    const resolved = await finishedRequest(gw.services, {
      key,
      hold: 44_444,
      outcome: unknownOutcome,
    });
    await gw.admin('POST', `/admin/v1/requests/${resolved}/resolve`, {
      action: 'release',
      reason: 'never ran',
    });
    const task = await unknownTask(gw, key);
    const taskHeld = task.billing.reserved_amount ?? 0;
    expect(taskHeld).toBeGreaterThan(0);
    clock.advance(30_000);

    const queue = await gw.admin('GET', '/admin/v1/unresolved');

    const createdAt = new Date(
      (await gw.services.requests.records.byId(first))?.created_at ?? 0,
    ).toISOString();
    expect(queue).toMatchObject({
      object: 'unresolved',
      requests: { count: 2, held: 33_333, oldest_created_at: createdAt, oldest_age_seconds: 120 },
      tasks: { count: 1, held: taskHeld },
      total: {
        count: 3,
        held: 33_333 + taskHeld,
        oldest_created_at: createdAt,
        oldest_age_seconds: 120,
      },
    });
    const requests = queue['requests'] as { data: { id: string }[] };
    expect(requests.data.map((item) => item.id)).toContain(first);
    expect(requests.data.map((item) => item.id)).not.toContain(resolved);
    expect((queue['tasks'] as { data: { id: string }[] }).data.map((item) => item.id)).toEqual([
      task.id,
    ]);

    const metrics = (await gw.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toContain('tollgate_submission_unknown_held_microyuan{kind="request"} 33333');
    expect(metrics).toContain(
      `tollgate_submission_unknown_held_microyuan{kind="task"} ${taskHeld}`,
    );
    expect(metrics).toContain('tollgate_submission_unknown{kind="request"} 2');
    expect(metrics).toContain('tollgate_submission_unknown{kind="task"} 1');
    expect(metrics).toContain('tollgate_submission_unknown_oldest_age_seconds{kind="request"} 120');
  });

  it('is empty and zero when nothing is unresolved', async () => {
    gateway = await startGateway(dialect, { clock });
    const queue = await gateway.admin('GET', '/admin/v1/unresolved');
    const none = { count: 0, held: 0, oldest_created_at: null, oldest_age_seconds: null };
    expect(queue).toEqual({
      object: 'unresolved',
      total: none,
      requests: { ...none, data: [] },
      tasks: { ...none, data: [] },
    });
    const metrics = (await gateway.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toContain('tollgate_submission_unknown_held_microyuan{kind="request"} 0');
  });
});
