import { afterEach, expect, it } from 'vitest';
import type { LeasedTask } from '../../src/tasks/task-store.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import type { TaskBody } from '../helpers/tasks.js';

/**
 * Issue 35 item 18: every write of a worker's step is fenced by its claim's token
 * (`claim_token = <its token>`, docs/tasks.md "Claims"). In the worker, the state guards of the
 * same writes usually refuse a stale worker first (the new claim has moved the task on), so
 * removing the token's condition failed no test. Here the task's states are left exactly as the
 * old claim expects, so only the token can refuse: once a new claim has taken the task (same
 * task, new token), the old claim's move, renewal and release each change nothing.
 */
describeEachDialect('an old claim after a new claim of the same task, on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  /** A queued video, claimed by `old` whose lease ran out (by the database's clock), then by `new`. */
  async function claimedTwice() {
    gateway = await startGateway(dialect);
    const gw = gateway;
    const { key } = await gw.account(10_000_000);
    const created = await gw.call('POST', '/v1/videos', {
      key,
      body: { model: 'sim-video', prompt: 'a quiet harbour', seconds: 1, size: '320x240' },
    });
    expect(created.statusCode, created.body).toBe(202);
    const id = created.json<TaskBody>().id;
    const store = gw.services.taskStore;
    let token = 0;
    const claim = async (owner: string, leaseMs: number): Promise<LeasedTask> => {
      const [leased] = await store.claimDue({
        owner,
        now: gw.services.clock.now(),
        leaseMs,
        limit: 1,
        running: new Map(),
        perAccount: 1,
        newToken: () => `claim_${owner}_${(token += 1)}`,
      });
      if (leased === undefined) throw new Error(`${owner} claimed nothing`);
      return leased;
    };
    const old = await claim('old', 1);
    // The old claim's lease runs out; a new claim takes the task (a new token).
    let fresh: LeasedTask | undefined;
    for (let attempt = 0; attempt < 100 && fresh === undefined; attempt += 1) {
      await sleep(10);
      fresh = await claim('new', 60_000).catch(() => undefined);
    }
    if (fresh === undefined) throw new Error('the task was never claimed again');
    expect(fresh.id).toBe(id);
    expect(fresh.claim_token).not.toBe(old.claim_token);
    const row = async () => {
      const found = await store.byId(id);
      if (found === undefined) throw new Error(`no task ${id}`);
      return found;
    };
    return { gw, store, old, fresh, row };
  }

  it("the old claim's move changes nothing; the same move under the new claim goes through", async () => {
    const { gw, store, old, fresh, row } = await claimedTwice();
    const before = await row();
    const markSending = (claim: string) =>
      store.move(
        gw.services.store.db,
        {
          id: old.id,
          now: gw.services.clock.now(),
          claim,
          status: { from: 'queued', to: 'queued' },
          submission: { from: 'pending', to: 'sending' },
        },
        { submitted_at: gw.services.clock.now() },
      );

    expect(await markSending(old.claim_token)).toBe(false);
    expect(await row()).toEqual(before);

    expect(await markSending(fresh.claim_token)).toBe(true);
    expect((await row()).submission).toBe('sending');
  });

  it("the old claim's renewal changes nothing", async () => {
    const { store, old, row } = await claimedTwice();
    const before = await row();

    expect(await store.renewLease(old, 3_600_000)).toBe(false);

    expect(await row()).toEqual(before);
  });

  it("the old claim's release changes nothing: the new claim keeps the task", async () => {
    const { gw, store, old, fresh, row } = await claimedTwice();
    const before = await row();
    expect(before).toMatchObject({ claim_token: fresh.claim_token, lease_owner: 'new' });

    await store.releaseLease(old, { dueAt: null, now: gw.services.clock.now() + 1 });

    expect(await row()).toEqual(before);
  });
});
