import { afterEach, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import type { ConfigFile } from '../../src/config/schema.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import { finishedTask, type TaskBody } from '../helpers/tasks.js';

const base = defaultConfig.models.find((model) => model.id === 'sim-image');
if (base === undefined) throw new Error('no sim-image');
const { upstream: _single, ...image } = base;

/**
 * The risk: a task submitted on one channel is polled or downloaded on another, whose upstream
 * never heard of its job. The task row names its channel and upstream at submission; the
 * worker reads them from the row.
 */
describeEachDialect('a task stays on the channel it was submitted on ($name)', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  it('stores the highest-priority channel on the task row and finishes there', async () => {
    const config: ConfigFile = testConfig({
      models: [
        {
          ...image,
          channels: [
            { id: 'img-low', upstream: 'simulator', model: 'sim-image', priority: 0 },
            { id: 'img-high', upstream: 'simulator', model: 'sim-image', priority: 5 },
          ],
        },
      ],
    });
    gateway = await startGateway(dialect, { config });
    const { key } = await gateway.account(10_000_000);
    const created = await gateway.call('POST', '/v1/images/generations', {
      key,
      body: { model: 'sim-image', prompt: 'a channel', size: '256x256' },
    });
    expect(created.statusCode).toBe(202);
    const task = created.json<TaskBody>();
    const row = await gateway.services.store.db
      .selectFrom('tasks')
      .select(['channel', 'upstream'])
      .where('id', '=', task.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ channel: 'img-high', upstream: 'simulator' });
    const finished = await finishedTask(gateway, key, `/v1/images/${task.id}`);
    expect(finished.status).toBe('succeeded');
  });
});
