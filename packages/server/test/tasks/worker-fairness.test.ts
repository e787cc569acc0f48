import { afterEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import type { TaskBody } from '../helpers/tasks.js';

const BALANCE = 100_000_000;
/** Room left to a noisy, shared machine over the task's own time (the bound). */
const MARGIN_MS = 2_000;

/**
 * Issue 18, Found 1 and 10: one account's hanging upstream calls must not stall another
 * account's tasks. The worker runs with its real loop (`start`), as `npm start` does.
 */
describeEachDialect('a fair, bounded task worker on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  async function videoTime(client: TestGateway, key: string, prompt: string): Promise<number> {
    const started = Date.now();
    const created = await client.call('POST', '/v1/videos', {
      key,
      body: { model: 'sim-video', prompt, seconds: 1, size: '320x240' },
    });
    expect(created.statusCode, created.body).toBe(202);
    const path = `/v1/videos/${created.json<TaskBody>().id}`;
    for (;;) {
      const task = (await client.call('GET', path, { key })).json<TaskBody>();
      if (task.status !== 'queued' && task.status !== 'running') {
        expect(task.status).toBe('succeeded');
        return Date.now() - started;
      }
      if (Date.now() - started > 30_000) throw new Error(`video still ${task.status} after 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it("one account's hanging images never delay another account's video beyond its own time + 2 s", async () => {
    gateway = await startGateway(dialect, {
      // Hanging calls end at the default 60 s first-byte timeout; four steps at once, two each.
      config: testConfig({ tasks: { worker_concurrency: 4, worker_concurrency_per_account: 2 } }),
      services: { worker: { stopGraceMs: 0, intervalMs: 100 } },
    });
    const client = gateway;
    const slow = await client.account(BALANCE);
    const fast = await client.account(BALANCE);
    client.services.taskWorker.start();

    // Its own time: the same ordinary one-second video, with nothing else running.
    const alone = await videoTime(client, fast.key, 'a lighthouse');

    // Account A: more hanging images than the worker has slots.
    const hanging: string[] = [];
    for (let index = 0; index < 6; index += 1) {
      const created = await client.call('POST', '/v1/images/generations', {
        key: slow.key,
        body: { model: 'sim-image', prompt: `fog ${index} [sim:hang]`, size: '256x256' },
      });
      expect(created.statusCode, created.body).toBe(202);
      hanging.push(created.json<TaskBody>().id);
    }
    const sending = async () =>
      (
        await client.services.store.db
          .selectFrom('tasks')
          .select('id')
          .where('id', 'in', hanging)
          .where('submission', '=', 'sending')
          .execute()
      ).length;
    const deadline = Date.now() + 10_000;
    while ((await sending()) < 2) {
      if (Date.now() > deadline) throw new Error('the hanging images were never sent');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

    // Account B's ordinary video while A's calls hang.
    const meanwhile = await videoTime(client, fast.key, 'a harbour');
    expect(meanwhile).toBeLessThanOrEqual(alone + MARGIN_MS);
    // A's calls really were hanging all along, and A never had more than its share in flight.
    expect(await sending()).toBe(2);
    const stillQueued = await client.services.store.db
      .selectFrom('tasks')
      .select('id')
      .where('id', 'in', hanging)
      .where('status', '=', 'queued')
      .execute();
    expect(stillQueued).toHaveLength(6);
  }, 60_000);
});
