import { afterEach, expect, it, vi } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import type { TestGateway } from '../helpers/gateway.js';
import { startTaskGateway, workUntil, type TaskBody } from '../helpers/tasks.js';

const BALANCE = 100_000_000;

/**
 * Issue 18, Found 10 (worker hygiene) and Deliver 3: the provider look-up sat outside the step's
 * `try`, so one task whose provider could not be made rejected the whole tick, and made after
 * `sending` was written it left a never-sent task `submission_unknown`; and `poll` marked a
 * running task without an upstream id `submission_unknown` "from queued", a move that never
 * matched, so the task was retried every 5 s forever. Each step's failure is now its own, a
 * provider is made before `sending`, and such a running task goes to the operator queue.
 */
describeEachDialect('task worker hygiene on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  async function createVideo(client: TestGateway, key: string, prompt: string): Promise<string> {
    const created = await client.call('POST', '/v1/videos', {
      key,
      body: { model: 'sim-video', prompt, seconds: 1, size: '320x240' },
    });
    expect(created.statusCode, created.body).toBe(202);
    return created.json<TaskBody>().id;
  }

  /** Its upstream gone from this instance's configuration: making its provider throws. */
  const loseUpstream = (client: TestGateway, id: string) =>
    client.services.store.db
      .updateTable('tasks')
      .set({ upstream: 'removed-upstream', channel: null })
      .where('id', '=', id)
      .execute();

  it('a queued task whose provider cannot be made is never marked sending: it waits, certainly unsent', async () => {
    gateway = await startTaskGateway(dialect);
    const client = gateway;
    const { key, accountId } = await client.account(BALANCE);
    const id = await createVideo(client, key, 'a lost upstream');
    // Its channel's upstream adapter cannot be made (the upstream gone from the configuration).
    vi.spyOn(client.services.providers, 'tasks').mockImplementation(() => {
      throw new Error('no upstream pool removed-upstream');
    });
    expect(await client.services.taskWorker.tick()).toBe(1);
    const row = await client.services.taskStore.byId(id);
    // Nothing was sent: still pending (a task marked sending would end submission_unknown).
    expect(row).toMatchObject({ status: 'queued', submission: 'pending', lease_until: null });
    expect(row?.due_at).toBeGreaterThan(client.services.clock.now());
    await client.services.taskOperations.resolve(id, { action: 'release', reason: 'gone' });
    expect((await client.balance(accountId)).held).toBe(0);
  });

  it('a running task whose provider cannot be made fails its own step only: another task of the tick finishes', async () => {
    gateway = await startTaskGateway(dialect);
    const client = gateway;
    const { key } = await client.account(BALANCE);
    const broken = await createVideo(client, key, 'a lost upstream');
    await workUntil(
      client,
      async () => (await client.services.taskStore.byId(broken))?.status === 'running',
    );
    await loseUpstream(client, broken);
    await client.services.store.db
      .updateTable('tasks')
      .set({ due_at: 0 })
      .where('id', '=', broken)
      .execute();
    const ordinary = await createVideo(client, key, 'an ordinary harbour');
    await workUntil(
      client,
      async () => (await client.services.taskStore.byId(ordinary))?.status === 'succeeded',
      20_000,
    );
    const row = await client.services.taskStore.byId(broken);
    // Its step failed alone: the claim given back, due again in 5 s, its state untouched.
    expect(row).toMatchObject({ status: 'running', lease_until: null });
    expect(row?.due_at).toBeGreaterThan(client.services.clock.now());
    await client.services.taskOperations.resolve(broken, { action: 'release', reason: 'gone' });
  });

  it('a running task without an upstream id goes to the operator queue with its hold, not retried forever', async () => {
    gateway = await startTaskGateway(dialect);
    const client = gateway;
    const { key, accountId } = await client.account(BALANCE);
    const id = await createVideo(client, key, 'a nameless job');
    await workUntil(
      client,
      async () => (await client.services.taskStore.byId(id))?.status === 'running',
    );
    // A running task whose upstream id was lost (nothing kept to download from either).
    await client.services.store.db
      .updateTable('tasks')
      .set({ upstream_task_id: null, due_at: 0 })
      .where('id', '=', id)
      .execute();
    await client.services.taskWorker.tick();
    const row = await client.services.taskStore.byId(id);
    expect(row).toMatchObject({ status: 'submission_unknown', due_at: null });
    expect(row?.error_message).toMatch(/running without an upstream id/);
    expect((await client.balance(accountId)).held).toBeGreaterThan(0);
    await client.services.taskOperations.resolve(id, { action: 'release', reason: 'no id' });
    expect((await client.balance(accountId)).held).toBe(0);
  });
});
