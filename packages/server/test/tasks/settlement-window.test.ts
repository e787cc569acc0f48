import pino from 'pino';
import { afterEach, expect, it } from 'vitest';
import { checkLedger } from '../../src/billing/ledger-check.js';
import { parseConfig } from '../../src/config/load.js';
import { startSweeper } from '../../src/maintenance/sweeper.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { ADMIN_TOKEN, manualClock, testConfig, type TestGateway } from '../helpers/gateway.js';
import { settleBodyOf, startTaskGateway, workUntil, type TaskBody } from '../helpers/tasks.js';

const BALANCE = 100_000_000;
const DAY_MS = 86_400_000;
const WINDOW_MS = 7 * DAY_MS;

type Clock = ReturnType<typeof manualClock>;

/**
 * Issue 18, Found 13 / Deliver 9: a caller whose client never settles (the `openai` SDK's
 * `images.generate` creates the task and stops) must not hold its quote forever. A task that
 * awaits settlement longer than `tasks.settlement_window_ms` (default 7 days, shown as
 * `settlement.expires_at`) expires in the maintenance sweep: the hold released, its outputs
 * deleted, nothing charged; a settle after that is 409 `SETTLEMENT_EXPIRED`.
 */
describeEachDialect('the settlement window on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  /** One maintenance sweep of an instance (the sweep at start; no interval within the test). */
  async function sweep(client: TestGateway): Promise<void> {
    const sweeper = startSweeper(client.services, {
      config: parseConfig(testConfig(), 'test'),
      logger: pino({ level: 'silent' }),
      intervalMs: 3_600_000,
    });
    await sweeper.first;
    sweeper.stop();
  }

  /** Ticks the worker (moving the manual clock past poll back-offs) until the task is priced. */
  async function pricedTask(client: TestGateway, clock: Clock, key: string, path: string) {
    let task: TaskBody | undefined;
    await workUntil(client, async () => {
      clock.advance(1_000);
      task = (await client.call('GET', path, { key })).json<TaskBody>();
      return task.status !== 'queued' && task.status !== 'running';
    });
    if (task === undefined) throw new Error('no task');
    expect(task.billing.state).toBe('pending');
    return task;
  }

  async function pricedImage(client: TestGateway, clock: Clock) {
    const owner = await client.account(BALANCE);
    const created = await client.call('POST', '/v1/images/generations', {
      key: owner.key,
      body: { model: 'sim-image', prompt: 'a lighthouse', size: '256x256' },
    });
    expect(created.statusCode, created.body).toBe(202);
    const path = `/v1/images/${created.json<TaskBody>().id}`;
    return { ...owner, path, task: await pricedTask(client, clock, owner.key, path) };
  }

  const outputAssetIds = async (client: TestGateway, taskId: string) =>
    (
      await client.services.store.db
        .selectFrom('assets')
        .select('id')
        .where('task_id', '=', taskId)
        .execute()
    ).map((row) => row.id);

  it('a task never settled expires after the window: hold back, outputs deleted, nothing charged, task and record say so', async () => {
    const clock = manualClock();
    gateway = await startTaskGateway(dialect, { clock });
    const client = gateway;
    const { accountId, key, path, task } = await pricedImage(client, clock);
    const finishedAt = Date.parse(task.finished_at ?? '');
    const expiresAt = new Date(finishedAt + WINDOW_MS).toISOString();
    expect(task.settlement).toEqual({
      url: `${path}/settle`,
      method: 'POST',
      expires_at: expiresAt,
    });
    expect(await client.balance(accountId)).toMatchObject({ held: task.quote.quoted_amount });
    const assetIds = await outputAssetIds(client, task.id);
    expect(assetIds.length).toBeGreaterThan(0);

    // Just inside the window the sweep leaves it alone.
    clock.advance(Date.parse(expiresAt) - clock.now() - 1);
    await sweep(client);
    const stillPending = (await client.call('GET', path, { key })).json<TaskBody>();
    expect(stillPending.billing.state).toBe('pending');
    expect(stillPending.settlement?.url).toBe(`${path}/settle`);

    clock.advance(1);
    await sweep(client);
    const expired = await client.call('GET', path, { key });
    expect(expired.statusCode).toBe(200);
    const body = expired.json<TaskBody>();
    expect(body).toMatchObject({
      status: 'succeeded',
      billing: { state: 'expired', settlement_pending: false, settled_amount: 0 },
    });
    expect(body.settlement).toBeUndefined();
    expect(body.outputs).toBeUndefined();
    expect(body.billing.actual_amount).toBeUndefined();
    expect(await client.balance(accountId)).toEqual({
      balance: BALANCE,
      held: 0,
      available: BALANCE,
    });
    for (const assetId of assetIds) {
      const content = await client.call('GET', `/v1/assets/${assetId}/content`, { key });
      expect(content.statusCode).toBe(404);
    }
    // The creation record: its hold released, nothing billed.
    const record = await client.call('GET', `/v1/requests/${task.request_id}`, { key });
    expect(record.json()).toMatchObject({
      status: 'accepted',
      task_id: task.id,
      reserve: { state: 'released' },
      bill: null,
    });
    // An operator sees it expired too, and cannot resolve it any more.
    expect(await client.admin('GET', `/admin/v1/tasks/${task.id}`)).toMatchObject({
      billing: { state: 'expired' },
    });
  });

  it('a settle after the window is 409 SETTLEMENT_EXPIRED and charges nothing, before and after the sweep', async () => {
    const clock = manualClock();
    gateway = await startTaskGateway(dialect, { clock });
    const client = gateway;
    const { accountId, key, path, task } = await pricedImage(client, clock);
    clock.advance(WINDOW_MS);
    // The window has closed though no sweep has run yet: refused all the same, nothing moved.
    const early = await client.call('POST', `${path}/settle`, { key, body: settleBodyOf(task) });
    expect(early.statusCode, early.body).toBe(409);
    expect(early.json()).toMatchObject({ error: { code: 'SETTLEMENT_EXPIRED' } });
    expect(await client.balance(accountId)).toMatchObject({
      balance: BALANCE,
      held: task.quote.quoted_amount,
    });

    await sweep(client);
    const late = await client.call('POST', `${path}/settle`, { key, body: settleBodyOf(task) });
    expect(late.statusCode, late.body).toBe(409);
    expect(late.json()).toMatchObject({ error: { code: 'SETTLEMENT_EXPIRED' } });
    expect(await client.balance(accountId)).toEqual({
      balance: BALANCE,
      held: 0,
      available: BALANCE,
    });
  });

  it('a settle just before the window closes succeeds, and the sweep then leaves the task alone', async () => {
    const clock = manualClock();
    gateway = await startTaskGateway(dialect, { clock });
    const client = gateway;
    const { accountId, key, path, task } = await pricedImage(client, clock);
    clock.advance(WINDOW_MS - 60_000);
    const settled = await client.call('POST', `${path}/settle`, { key, body: settleBodyOf(task) });
    expect(settled.statusCode, settled.body).toBe(200);
    const body = settled.json<TaskBody>();
    expect(body.billing.state).toBe('settled');
    expect(body.settlement).toBeUndefined();
    clock.advance(DAY_MS);
    await sweep(client);
    const after = (await client.call('GET', path, { key })).json<TaskBody>();
    expect(after.billing).toMatchObject({
      state: 'settled',
      settled_amount: task.billing.actual_amount,
    });
    expect(after.outputs?.length).toBeGreaterThan(0);
    const actual = task.billing.actual_amount ?? 0;
    expect(await client.balance(accountId)).toEqual({
      balance: BALANCE - actual,
      held: 0,
      available: BALANCE - actual,
    });
  });

  it('two sweepers racing expire a task once: one release, the hold back once', async () => {
    const clock = manualClock();
    gateway = await startTaskGateway(dialect, { clock });
    const client = gateway;
    const { accountId, task } = await pricedImage(client, clock);
    clock.advance(WINDOW_MS);
    await Promise.all([sweep(client), sweep(client), sweep(client)]);
    const releases = await client.services.store.db
      .selectFrom('journal')
      .select(['kind', 'held_delta'])
      .where('account_id', '=', accountId)
      .where('kind', '=', 'release')
      .execute();
    expect(releases).toEqual([{ kind: 'release', held_delta: -task.quote.quoted_amount }]);
    expect(await client.balance(accountId)).toEqual({
      balance: BALANCE,
      held: 0,
      available: BALANCE,
    });
    expect((await client.services.taskStore.byId(task.id))?.billing_state).toBe('expired');
  });

  it('a video shows its window while pending; expired, its content is 404', async () => {
    const clock = manualClock();
    gateway = await startTaskGateway(dialect, {
      clock,
      config: testConfig({ tasks: { settlement_window_ms: DAY_MS } }),
    });
    const client = gateway;
    const { accountId, key } = await client.account(BALANCE);
    const created = await client.call('POST', '/v1/videos', {
      key,
      body: { model: 'sim-video', prompt: 'a short wave', seconds: 1, size: '320x240' },
    });
    expect(created.statusCode, created.body).toBe(202);
    const path = `/v1/videos/${created.json<TaskBody>().id}`;
    const task = await pricedTask(client, clock, key, path);
    const finishedAt = Date.parse(task.finished_at ?? '');
    // The configured window, not the default.
    expect(task.settlement?.expires_at).toBe(new Date(finishedAt + DAY_MS).toISOString());
    const before = await client.call('GET', `${path}/content`, { key });
    expect(before.statusCode).toBe(409);
    clock.advance(DAY_MS);
    await sweep(client);
    const content = await client.call('GET', `${path}/content`, { key });
    expect(content.statusCode, content.body).toBe(404);
    expect((await client.call('GET', path, { key })).json<TaskBody>().billing.state).toBe(
      'expired',
    );
    expect(await client.balance(accountId)).toMatchObject({ balance: BALANCE, held: 0 });
  });

  it('an operator releases a task nobody settles at once: hold back, outputs deleted, a settle is 409 SETTLEMENT_EXPIRED', async () => {
    const clock = manualClock();
    gateway = await startTaskGateway(dialect, { clock });
    const client = gateway;
    const { accountId, key, path, task } = await pricedImage(client, clock);
    const assetIds = await outputAssetIds(client, task.id);
    const resolve = (reason: string) =>
      client.app.inject({
        method: 'POST',
        url: `/admin/v1/tasks/${task.id}/resolve`,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        payload: { action: 'release', reason },
      });
    const released = await resolve('the caller never settles');
    expect(released.statusCode, released.body).toBe(200);
    expect(released.json()).toMatchObject({
      status: 'succeeded',
      billing: { state: 'expired', settlement_pending: false, settled_amount: 0 },
      resolution: { action: 'release', reason: 'the caller never settles', by: 'operator' },
    });
    expect(await client.balance(accountId)).toEqual({
      balance: BALANCE,
      held: 0,
      available: BALANCE,
    });
    for (const assetId of assetIds)
      expect((await client.call('GET', `/v1/assets/${assetId}/content`, { key })).statusCode).toBe(
        404,
      );
    const settle = await client.call('POST', `${path}/settle`, { key, body: settleBodyOf(task) });
    expect(settle.statusCode, settle.body).toBe(409);
    expect(settle.json()).toMatchObject({ error: { code: 'SETTLEMENT_EXPIRED' } });
    // Once only: the second release changes nothing.
    const again = await resolve('twice');
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ error: { code: 'SETTLEMENT_NOT_ALLOWED' } });
    const journal = await client.services.store.db
      .selectFrom('journal')
      .select(['held_delta'])
      .where('account_id', '=', accountId)
      .where('reason', '=', 'operator: the caller never settles')
      .execute();
    expect(journal).toEqual([{ held_delta: -task.quote.quoted_amount }]);
  });

  it('the ledger check holds an expired task to a released hold (invariant 8)', async () => {
    const clock = manualClock();
    gateway = await startTaskGateway(dialect, { clock });
    const client = gateway;
    const { task } = await pricedImage(client, clock);
    const db = client.services.store.db;
    // A tampered row (never written so by the engine): expired while its hold is still open.
    await db
      .updateTable('tasks')
      .set({ billing_state: 'expired' })
      .where('id', '=', task.id)
      .execute();
    const report = await checkLedger(db);
    expect(report.violations).toEqual([
      expect.objectContaining({ invariant: 'task_billing_matches_hold', subject: task.id }),
    ]);
    expect(report.violations[0]?.detail).toContain('expected released');
    await db
      .updateTable('tasks')
      .set({ billing_state: 'pending' })
      .where('id', '=', task.id)
      .execute();
  });
});
