import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import type { ConfigFile } from '../../src/config/schema.js';
import { seededRandom } from '../../src/routing/channel-selection.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startFaultFront, type FaultFront } from '../helpers/fault-front.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import {
  expectChargedActualOnce,
  finishedTask,
  settleBodyOf,
  type TaskBody,
} from '../helpers/tasks.js';

const BALANCE = 100_000_000;
const timeouts = { connect_ms: 2_000, first_byte_ms: 10_000, idle_ms: 10_000 };

const base = defaultConfig.models.find((model) => model.id === 'sim-image');
if (base === undefined) throw new Error('no sim-image');
const { upstream: _single, ...image } = base;

/** Image submissions (not downloads) a front received. */
const submissions = (front: FaultFront) =>
  front.requests.filter((request) => request === 'POST /images/generations').length;

/**
 * Issue 35, Found 16: a task submitted to two upstreams on a 503. The failover rule counted 503
 * as "certainly not processed" for tasks too, but a 503 written by a proxy or load balancer
 * after it forwarded the submission means a job already made there, and the second channel's
 * job is a second, separately billed one (the task id as `Idempotency-Key` does not dedupe
 * across providers). A task now fails over only when nothing was sent, or on a status its
 * upstream's `task_failover_statuses` names.
 */
describeEachDialect('an image task answered 503 on $name', (dialect) => {
  let simulator: Simulator;
  /** Answers 503 to everything: an overloaded upstream, or a proxy in front of one. */
  let overloaded: FaultFront;
  /** The same, on an upstream configured to fail tasks over on 503. */
  let overloadedListed: FaultFront;
  let healthy: FaultFront;
  let gateway: TestGateway;

  beforeAll(async () => {
    simulator = await startSimulator();
    overloaded = await startFaultFront(simulator.url);
    overloaded.mode = 503;
    overloadedListed = await startFaultFront(simulator.url);
    overloadedListed.mode = 503;
    healthy = await startFaultFront(simulator.url);
    const config: ConfigFile = testConfig({
      upstreams: {
        overloaded: { kind: 'openai', base_url: overloaded.url, timeouts },
        'overloaded-listed': {
          kind: 'openai',
          base_url: overloadedListed.url,
          timeouts,
          task_failover_statuses: [503],
        },
        healthy: { kind: 'openai', base_url: healthy.url, timeouts },
      },
      models: [
        {
          ...image,
          channels: [
            { id: 'image-503', upstream: 'overloaded', model: 'sim-image', priority: 10 },
            { id: 'image-spare', upstream: 'healthy', model: 'sim-image', priority: 0 },
          ],
        },
        {
          ...image,
          id: 'sim-image-listed',
          channels: [
            {
              id: 'image-503-listed',
              upstream: 'overloaded-listed',
              model: 'sim-image',
              priority: 10,
            },
            { id: 'image-spare-2', upstream: 'healthy', model: 'sim-image', priority: 0 },
          ],
        },
      ],
    });
    gateway = await startGateway(dialect, {
      config,
      services: {
        random: seededRandom(11),
        breaker: { failureThreshold: 1_000, cooldownMs: 1_000, maxCooldownMs: 1_000 },
      },
    });
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
    await overloaded.close();
    await overloadedListed.close();
    await healthy.close();
    await simulator.close();
  });

  async function createImage(key: string, model: string): Promise<TaskBody> {
    const created = await gateway.call('POST', '/v1/images/generations', {
      key,
      body: { model, prompt: 'a lantern in the rain', size: '256x256' },
    });
    expect(created.statusCode, created.body).toBe(202);
    return created.json<TaskBody>();
  }

  it('is not sent to the second channel: submitted once, failed, its hold released', async () => {
    const { accountId, key } = await gateway.account(BALANCE);
    const before = { first: submissions(overloaded), spare: submissions(healthy) };
    const created = await createImage(key, 'sim-image');
    const task = await finishedTask(gateway, key, `/v1/images/${created.id}`);
    expect(task.status).toBe('failed');
    expect(task.error?.code).toBe('MODEL_UNAVAILABLE');
    expect(submissions(overloaded) - before.first).toBe(1);
    expect(submissions(healthy) - before.spare).toBe(0);
    const row = await gateway.services.taskStore.byId(created.id);
    expect(row).toMatchObject({ channel: 'image-503', upstream: 'overloaded' });
    expect(await gateway.balance(accountId)).toEqual({
      balance: BALANCE,
      held: 0,
      available: BALANCE,
    });
  });

  it('with 503 in its upstream task_failover_statuses, it moves to the second channel: one job, one charge', async () => {
    const { accountId, key } = await gateway.account(BALANCE);
    const before = { first: submissions(overloadedListed), spare: submissions(healthy) };
    const created = await createImage(key, 'sim-image-listed');
    const task = await finishedTask(gateway, key, `/v1/images/${created.id}`);
    expect(task.status).toBe('succeeded');
    expect(submissions(overloadedListed) - before.first).toBe(1);
    expect(submissions(healthy) - before.spare).toBe(1);
    const row = await gateway.services.taskStore.byId(created.id);
    expect(row).toMatchObject({ channel: 'image-spare-2', upstream: 'healthy' });
    const settled = await gateway.call('POST', `/v1/images/${created.id}/settle`, {
      key,
      body: settleBodyOf(task),
    });
    expect(settled.statusCode, settled.body).toBe(200);
    await expectChargedActualOnce(gateway, accountId, BALANCE, task);
  });
});
