import type { H3Task } from '@tollgate/protocol';
import { afterEach, expect, it, vi } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { notReceivedAfterMsOf, type ConfigFile } from '../../src/config/schema.js';
import { ArkH3Tasks } from '../../src/providers/ark/h3-tasks.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { manualClock, startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import { h3QuoteAndSubmit } from '../helpers/h3.js';

/**
 * Issue 35 item 17: an H3 task whose worker died between writing `sending` and sending is
 * `submission_unknown`, holding its quote. Its upstream can be looked up (`task_lookup`, on for
 * the simulator): a look-up that finds the job resumes it; one that keeps answering "no such
 * job" must not hold the money for ever. Once it has answered so for the upstream's
 * `not_received_after_ms` (longer than its timeouts) since its first such answer, the task fails
 * and its hold is released in one guarded transition, journalled; before that nothing changes; a
 * look-up that fails never counts toward the window; an operator may resolve it sooner.
 */

const BALANCE = 10_000_000;
const input = {
  action: 'generate',
  prompt: 'a harbour at night',
  parameters: { resolution: '480p', ratio: '16:9', duration: 4 },
};
/** The simulator upstream's window with the default timeouts (10 minutes). */
const WINDOW = notReceivedAfterMsOf(parseConfig(testConfig(), 'test').upstreams['simulator']!);

/** The adapter's look-up by idempotency key (private: replaced to make it fail or find). */
const lookupOf = ArkH3Tasks.prototype as unknown as {
  find: (idempotencyKey: string) => Promise<string | null>;
};

describeEachDialect('an H3 submission the upstream never received, on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  const clock = manualClock();
  afterEach(async () => {
    vi.restoreAllMocks();
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  async function start(config: ConfigFile = testConfig()) {
    gateway = await startGateway(dialect, { clock, config });
    const gw = gateway;
    const { accountId, key } = await gw.account(BALANCE);
    const { quote, response } = await h3QuoteAndSubmit(gw, key, input);
    expect(response.statusCode, response.body).toBe(202);
    const id = response.json<H3Task>().id;
    const db = gw.services.store.db;
    // The worker wrote `sending` and died before the call: nothing reached the upstream.
    await db
      .updateTable('tasks')
      .set({ submission: 'sending', submitted_at: clock.now() })
      .where('id', '=', id)
      .execute();
    const row = async () => {
      const found = await gw.services.taskStore.byId(id);
      if (found === undefined) throw new Error(`no task ${id}`);
      return found;
    };
    /** Lets `ms` pass, then runs the task's next step at once (whatever its back-off said). */
    const stepAfter = async (ms: number) => {
      clock.advance(ms);
      await db.updateTable('tasks').set({ due_at: clock.now() }).where('id', '=', id).execute();
      await gw.services.taskWorker.tick();
    };
    const held = quote.quoted_amount;
    if (held === null) throw new Error('the input was not quoted');
    const expectHeld = async () => {
      const task = await row();
      expect(task).toMatchObject({
        status: 'submission_unknown',
        submission: 'sending',
        billing_state: 'reserved',
      });
      expect(await gw.balance(accountId)).toEqual({
        balance: BALANCE,
        held,
        available: BALANCE - held,
      });
    };
    const releases = () =>
      db
        .selectFrom('journal')
        .select(['kind', 'held_delta', 'reason'])
        .where('account_id', '=', accountId)
        .where('kind', '=', 'release')
        .execute();
    // The next worker finds it mid-submission: `submission_unknown`, hold kept.
    await stepAfter(0);
    await expectHeld();
    return { gw, id, key, accountId, held, row, stepAfter, expectHeld, releases };
  }

  it('fails the task and releases its hold once the look-up has answered "no such job" for the window, not before', async () => {
    const { gw, id, key, accountId, held, row, stepAfter, expectHeld, releases } = await start();
    expect(held).toBe(80_000);

    // The first "no such job" is noted; the window runs from it.
    await stepAfter(0);
    const since = clock.now();
    await expectHeld();
    expect((await row()).vanished_since).toBe(since);
    await stepAfter(WINDOW / 2);
    await stepAfter(WINDOW / 2 - 1);
    await expectHeld();
    expect(await releases()).toEqual([]);

    await stepAfter(1);
    const failed = await row();
    expect(failed).toMatchObject({
      status: 'failed',
      submission: 'sending',
      billing_state: 'released',
      error_code: 'NOT_RUN',
      due_at: null,
      actual_amount: null,
    });
    expect(failed.error_message).toContain('never received');
    expect(await gw.balance(accountId)).toEqual({ balance: BALANCE, held: 0, available: BALANCE });
    expect(await releases()).toEqual([
      expect.objectContaining({ held_delta: -held, reason: expect.stringContaining(id) }),
    ]);
    const view = (await gw.call('GET', `/v1/h3/tasks/${id}`, { key })).json<H3Task>();
    expect(view).toMatchObject({
      // H3 spells it so (spec: "FAILED (H3 task failed; cost not guaranteed to be zero)").
      status: 'FAILED',
      billing: { state: 'released', settlement_pending: false },
      error: { code: 'NOT_RUN' },
    });

    // Nothing is due any more: further ticks change nothing.
    clock.advance(WINDOW);
    expect(await gw.services.taskWorker.tick()).toBe(0);
    expect(await releases()).toHaveLength(1);
  });

  it('never counts a look-up that fails toward the window', async () => {
    const { gw, accountId, row, stepAfter, expectHeld, releases } = await start();
    const failing = vi
      .spyOn(lookupOf, 'find')
      .mockRejectedValue(new Error('upstream look-up: 502 bad gateway'));
    for (let step = 0; step < 4; step += 1) await stepAfter(WINDOW);
    expect(failing).toHaveBeenCalledTimes(4);
    await expectHeld();
    expect((await row()).vanished_since).toBeNull();

    // The first real "no such job" starts the window only now.
    failing.mockRestore();
    await stepAfter(0);
    const since = clock.now();
    expect((await row()).vanished_since).toBe(since);
    await stepAfter(WINDOW - 1);
    await expectHeld();
    await stepAfter(1);
    expect((await row()).status).toBe('failed');
    expect(await gw.balance(accountId)).toEqual({ balance: BALANCE, held: 0, available: BALANCE });
    expect(await releases()).toHaveLength(1);
  });

  it('resumes a task the look-up finds after answering "no such job", with the note cleared', async () => {
    const { row, stepAfter, expectHeld } = await start();
    await stepAfter(0);
    expect((await row()).vanished_since).not.toBeNull();
    await expectHeld();
    // The upstream has it now (a send that was still on its way): the task runs on.
    vi.spyOn(lookupOf, 'find').mockResolvedValue('cgt-found-late');
    await stepAfter(WINDOW);
    expect(await row()).toMatchObject({
      status: 'running',
      submission: 'accepted',
      upstream_task_id: 'cgt-found-late',
      billing_state: 'reserved',
      vanished_since: null,
    });
  });

  it("uses the upstream's configured not_received_after_ms", async () => {
    const window = 200_000;
    const { row, stepAfter, expectHeld } = await start(
      testConfig({
        upstreams: { simulator: { kind: 'simulator', not_received_after_ms: window } },
      }),
    );
    await stepAfter(0);
    await stepAfter(window - 1);
    await expectHeld();
    await stepAfter(1);
    expect((await row()).status).toBe('failed');
  });

  it('lets an operator release it sooner; the look-up then changes nothing', async () => {
    const { gw, id, accountId, row, stepAfter, releases } = await start();
    await stepAfter(0);
    await gw.admin('POST', `/admin/v1/tasks/${id}/resolve`, {
      action: 'release',
      reason: 'the provider console shows no such job',
    });
    expect(await row()).toMatchObject({ status: 'failed', billing_state: 'released' });
    clock.advance(WINDOW);
    await gw.services.taskWorker.tick();
    await stepAfter(0);
    expect(await row()).toMatchObject({ status: 'failed', error_code: 'NOT_RUN' });
    expect(await gw.balance(accountId)).toEqual({ balance: BALANCE, held: 0, available: BALANCE });
    expect(await releases()).toEqual([
      expect.objectContaining({ reason: 'operator: the provider console shows no such job' }),
    ]);
  });
});
