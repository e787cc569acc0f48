import { afterEach, expect, it } from 'vitest';
import type { Clock } from '../../src/util/effects.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { testConfig, type TestGateway } from '../helpers/gateway.js';
import { startTaskGateway, type TaskBody } from '../helpers/tasks.js';

const BALANCE = 100_000_000;
/** Room left to a noisy, shared machine over the task's own time (the issue's bound). */
const MARGIN_MS = 2_000;
/** The other account's videos timed each time: the slowest of them is the p99 of so few. */
const SAMPLES = 5;
const prompts = (subject: string) =>
  Array.from({ length: SAMPLES }, (_, index) => `${subject} ${index}`);
/** How much faster than real time the gateway's and the simulator's clock runs. */
const SPEED = 10;

/**
 * A clock that runs `speed` times as fast as real time: what the gateway and the simulator decide
 * by it (the worker's poll back-offs, a one-second job's progress) passes that much sooner, for
 * the videos alone and meanwhile alike. The hanging calls still hang on real timers (the 60 s
 * first-byte timeout), and every time this test measures is real time.
 */
function fastClock(speed: number): Clock {
  const start = Date.now();
  return { now: () => start + (Date.now() - start) * speed };
}

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

  /**
   * Creates one ordinary one-second video of `key` per prompt, all at once, and waits for them
   * all; each one's time runs from its create call to the first read that shows it succeeded.
   */
  async function videoTimes(
    client: TestGateway,
    key: string,
    prompts: readonly string[],
  ): Promise<number[]> {
    const videos = await Promise.all(
      prompts.map(async (prompt) => {
        const started = Date.now();
        const created = await client.call('POST', '/v1/videos', {
          key,
          body: { model: 'sim-video', prompt, seconds: 1, size: '320x240' },
        });
        expect(created.statusCode, created.body).toBe(202);
        return { started, path: `/v1/videos/${created.json<TaskBody>().id}` };
      }),
    );
    const times: (number | undefined)[] = videos.map(() => undefined);
    const first = Math.min(...videos.map((video) => video.started));
    while (times.includes(undefined)) {
      if (Date.now() - first > 30_000)
        throw new Error(
          `videos unfinished after 30 s: ${times.map((time) => (time === undefined ? 'unfinished' : `${time} ms`)).join(', ')}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 50));
      for (const [index, video] of videos.entries()) {
        if (times[index] !== undefined) continue;
        const task = (await client.call('GET', video.path, { key })).json<TaskBody>();
        if (task.status === 'queued' || task.status === 'running') continue;
        expect(task.status).toBe('succeeded');
        times[index] = Date.now() - video.started;
      }
    }
    return times as number[];
  }

  it("one account's hanging images never delay another account's videos: their p99 stays within their own time + 2 s", async () => {
    gateway = await startTaskGateway(dialect, {
      clock: fastClock(SPEED),
      // Hanging calls end at the default 60 s first-byte timeout; four steps at once, two each.
      config: testConfig({ tasks: { worker_concurrency: 4, worker_concurrency_per_account: 2 } }),
      services: { worker: { stopGraceMs: 0, intervalMs: 100 } },
    });
    const client = gateway;
    const slow = await client.account(BALANCE);
    const fast = await client.account(BALANCE);
    client.services.taskWorker.start();

    // Their own time: the same ordinary one-second videos, as many at once, with nothing else
    // running (B's own share bounds B here too; only A's hanging calls differ below). Measured
    // after a first video: the process's first task pays its warm-up (seen: 2 s more), which
    // would loosen the bound.
    await videoTimes(client, fast.key, ['a first light']);
    const alone = Math.max(...(await videoTimes(client, fast.key, prompts('a lighthouse'))));

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

    // Account B's ordinary videos while A's calls hang: the slowest (p99) within their own time.
    const meanwhile = await videoTimes(client, fast.key, prompts('a harbour'));
    expect(
      Math.max(...meanwhile),
      `alone ${alone} ms, meanwhile ${meanwhile.join(', ')} ms`,
    ).toBeLessThanOrEqual(alone + MARGIN_MS);
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
