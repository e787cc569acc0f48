import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { OpenAiVideos } from '../../src/providers/openai-compatible/videos.js';
import { shortTimeoutsConfig, startGateway, type TestGateway } from '../helpers/gateway.js';
import {
  finishedTask,
  settleBodyOf,
  workUntil,
  type TaskBody,
  expectChargedActualOnce,
} from '../helpers/tasks.js';
import { cliIn, type CliResult } from '../helpers/processes.js';

const BALANCE = 100_000_000;

interface OperatorTask extends TaskBody {
  account_id: string;
  upstream_task_id: string | null;
  submission: string;
  due_at: string | null;
  resolution?: { action: string; reason: string; by: string; upstream_task_id?: string };
}

/**
 * `tollgate tasks list|show|resolve` (docs/tasks.md "Operators") on the embedded SQLite file that
 * a running gateway also writes: an operator finds the tasks whose submission was never
 * confirmed, and resolves each once, with a reason — `--release` frees the hold, `--attach`
 * hands the task back to the worker with the upstream's id. Every refusal is a JSON error and
 * exit 1, and changes nothing.
 */
describe('tollgate tasks (operator CLI)', () => {
  let dataDir: string;
  let gateway: TestGateway | undefined;
  beforeEach(() => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'tollgate-cli-tasks-'));
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
    rmSync(dataDir, { recursive: true, force: true });
  });

  const cli = (...args: string[]): Promise<CliResult> => cliIn(dataDir, ...args);

  /** A gateway on the CLI's own SQLite file, with short upstream timeouts. */
  async function gatewayOnDataDir(): Promise<TestGateway> {
    const file = path.join(dataDir, 'tollgate.sqlite');
    return startGateway(
      { name: 'sqlite', fresh: () => ({ databaseUrl: file }) },
      { config: shortTimeoutsConfig() },
    );
  }

  /** Creates a task whose submission the simulator accepts and never answers, and works it until it is `submission_unknown`. */
  async function unknownTask(
    client: TestGateway,
    key: string,
    kind: 'image' | 'video',
  ): Promise<TaskBody> {
    const [createPath, base, body] =
      kind === 'image'
        ? ([
            '/v1/images/generations',
            '/v1/images',
            { model: 'sim-image', prompt: 'fog [sim:task=unknown]', size: '256x256' },
          ] as const)
        : ([
            '/v1/videos',
            '/v1/videos',
            { model: 'sim-video', prompt: 'fog [sim:task=unknown]', seconds: 1, size: '320x240' },
          ] as const);
    const created = await client.call('POST', createPath, { key, body });
    expect(created.statusCode, created.body).toBe(202);
    const id = created.json<TaskBody>().id;
    let task: TaskBody | undefined;
    // The worker is ticked only until then: a video's read-only look-up (due seconds later) is
    // never run, so the task waits for the operator here.
    await workUntil(client, async () => {
      task = (await client.call('GET', `${base}/${id}`, { key })).json<TaskBody>();
      return task.status === 'submission_unknown';
    });
    if (task === undefined) throw new Error('no task');
    return task;
  }

  it('lists and shows unknown submissions of any account, with their hold kept', async () => {
    gateway = await gatewayOnDataDir();
    const first = await gateway.account(BALANCE);
    const second = await gateway.account(BALANCE);
    const image = await unknownTask(gateway, first.key, 'image');
    const video = await unknownTask(gateway, second.key, 'video');

    const listed = await cli('tasks', 'list', '--status', 'submission_unknown');
    expect(listed.code).toBe(0);
    const ids = (listed.json['data'] as OperatorTask[]).map((task) => task.id);
    expect(ids.sort()).toEqual([image.id, video.id].sort());

    const ofSecond = await cli('tasks', 'list', '--account', second.accountId);
    expect(ofSecond.code).toBe(0);
    expect(ofSecond.json['data']).toEqual([
      expect.objectContaining({ id: video.id, account_id: second.accountId }),
    ]);

    const shown = await cli('tasks', 'show', image.id);
    expect(shown.code).toBe(0);
    expect(shown.json).toMatchObject({
      id: image.id,
      object: 'image.task',
      status: 'submission_unknown',
      account_id: first.accountId,
      submission: 'sending',
      upstream_task_id: null,
      billing: { state: 'reserved', settlement_pending: false },
    });
    expect(shown.json['settlement']).toBeUndefined();
    expect(await gateway.balance(first.accountId)).toMatchObject({
      held: image.billing.reserved_amount,
    });

    const badStatus = await cli('tasks', 'list', '--status', 'lost');
    expect(badStatus).toMatchObject({ code: 1, json: { error: { code: 'INVALID_INPUT' } } });
    expect(JSON.stringify(badStatus.json)).toContain('status');
    const missing = await cli('tasks', 'show', 'task_does_not_exist');
    expect(missing).toMatchObject({ code: 1, json: { error: { code: 'TASK_NOT_FOUND' } } });

    // Leave the ledger resolved: both holds released by the operator.
    for (const id of [image.id, video.id])
      expect((await cli('tasks', 'resolve', id, '--release', '--reason', 'cleanup')).code).toBe(0);
  }, 30_000);

  it('--release needs a reason, frees the hold once, and a second resolve is 409', async () => {
    gateway = await gatewayOnDataDir();
    const { accountId, key } = await gateway.account(BALANCE);
    const task = await unknownTask(gateway, key, 'image');
    const unchanged = async () => {
      expect((await cli('tasks', 'show', task.id)).json).toMatchObject({
        status: 'submission_unknown',
        billing: { state: 'reserved' },
      });
      expect(await gateway?.balance(accountId)).toEqual({
        balance: BALANCE,
        held: task.billing.reserved_amount,
        available: BALANCE - task.billing.reserved_amount,
      });
    };

    const withoutReason = await cli('tasks', 'resolve', task.id, '--release');
    expect(withoutReason).toMatchObject({ code: 1, json: { error: { code: 'INVALID_INPUT' } } });
    expect(JSON.stringify(withoutReason.json)).toContain('reason');
    const blankReason = await cli('tasks', 'resolve', task.id, '--release', '--reason', '  ');
    expect(blankReason).toMatchObject({ code: 1, json: { error: { code: 'INVALID_INPUT' } } });
    const noAction = await cli('tasks', 'resolve', task.id, '--reason', 'which one?');
    expect(noAction).toMatchObject({ code: 1, json: { error: { code: 'INVALID_INPUT' } } });
    expect(JSON.stringify(noAction.json)).toContain('release or attach');
    const both = await cli(
      'tasks',
      'resolve',
      task.id,
      '--release',
      '--attach',
      'x',
      '--reason',
      'r',
    );
    expect(both).toMatchObject({ code: 1, json: { error: { code: 'INVALID_INPUT' } } });
    // An image upstream answers at once: there is nothing to attach.
    const attachImage = await cli(
      'tasks',
      'resolve',
      task.id,
      '--attach',
      'img_1',
      '--reason',
      'r',
    );
    expect(attachImage).toMatchObject({ code: 1, json: { error: { code: 'INVALID_INPUT' } } });
    const unknownId = await cli('tasks', 'resolve', 'task_nope', '--release', '--reason', 'r');
    expect(unknownId).toMatchObject({ code: 1, json: { error: { code: 'TASK_NOT_FOUND' } } });
    await unchanged();

    const released = await cli(
      'tasks',
      'resolve',
      task.id,
      '--release',
      '--reason',
      'upstream support: never ran',
    );
    expect(released.code, JSON.stringify(released.json)).toBe(0);
    expect(released.json).toMatchObject({
      id: task.id,
      status: 'failed',
      billing: { state: 'released', settlement_pending: false, settled_amount: 0 },
      error: { code: 'NOT_RUN' },
      resolution: { action: 'release', reason: 'upstream support: never ran', by: 'operator' },
    });
    expect(await gateway.balance(accountId)).toEqual({
      balance: BALANCE,
      held: 0,
      available: BALANCE,
    });

    const again = await cli('tasks', 'resolve', task.id, '--release', '--reason', 'twice');
    expect(again).toMatchObject({ code: 1, json: { error: { code: 'SETTLEMENT_NOT_ALLOWED' } } });
    // The caller sees the operator's decision; the ledger agrees.
    const seen = await gateway.call('GET', `/v1/images/${task.id}`, { key });
    expect(seen.json()).toMatchObject({ status: 'failed', billing: { state: 'released' } });
    expect(await cli('ledger', 'check')).toMatchObject({ code: 0, json: { ok: true } });
  }, 30_000);

  it('--attach hands the task back to the worker with the upstream id: it runs on, is never resubmitted, and settles once', async () => {
    gateway = await gatewayOnDataDir();
    const client = gateway;
    const { accountId, key } = await client.account(BALANCE);
    const submissions = vi.spyOn(OpenAiVideos.prototype, 'submit');
    const task = await unknownTask(client, key, 'video');
    // What the operator looks up at the upstream (here: the simulator, by our task id).
    const upstream = client.services.providers.tasks('simulator', 'video', { accountId });
    const upstreamId = await upstream.lookup?.(task.id);
    if (upstreamId === undefined || upstreamId === null) throw new Error('the simulator has it');

    const withoutReason = await cli('tasks', 'resolve', task.id, '--attach', upstreamId);
    expect(withoutReason).toMatchObject({ code: 1, json: { error: { code: 'INVALID_INPUT' } } });
    expect(JSON.stringify(withoutReason.json)).toContain('reason');
    const attachEmpty = await cli('tasks', 'resolve', task.id, '--attach', '', '--reason', 'r');
    expect(attachEmpty).toMatchObject({ code: 1, json: { error: { code: 'INVALID_INPUT' } } });
    expect((await cli('tasks', 'show', task.id)).json).toMatchObject({
      status: 'submission_unknown',
      upstream_task_id: null,
    });

    const attached = await cli(
      'tasks',
      'resolve',
      task.id,
      '--attach',
      upstreamId,
      '--reason',
      'found it in the provider console',
    );
    expect(attached.code, JSON.stringify(attached.json)).toBe(0);
    expect(attached.json).toMatchObject({
      id: task.id,
      status: 'running',
      submission: 'accepted',
      upstream_task_id: upstreamId,
      billing: { state: 'reserved' },
      resolution: {
        action: 'attach',
        upstream_task_id: upstreamId,
        reason: 'found it in the provider console',
      },
    });
    // The task has its upstream id now: a second attach is refused (it would swap the job).
    const again = await cli(
      'tasks',
      'resolve',
      task.id,
      '--attach',
      upstreamId,
      '--reason',
      'twice',
    );
    expect(again).toMatchObject({ code: 1, json: { error: { code: 'SETTLEMENT_NOT_ALLOWED' } } });

    const done = await finishedTask(client, key, `/v1/videos/${task.id}`);
    expect(done.status).toBe('succeeded');
    // Polled under the attached id, never sent again.
    expect(submissions).toHaveBeenCalledTimes(1);
    const settled = await client.call('POST', `/v1/videos/${task.id}/settle`, {
      key,
      body: settleBodyOf(done),
    });
    expect(settled.statusCode, settled.body).toBe(200);
    const charged = await expectChargedActualOnce(client, accountId, BALANCE, done);
    expect((await cli('tasks', 'show', task.id)).json).toMatchObject({
      status: 'succeeded',
      billing: { state: 'settled', settled_amount: charged },
      resolution: { action: 'attach' },
    });
    expect(await cli('ledger', 'check')).toMatchObject({ code: 0, json: { ok: true } });
  }, 30_000);
});
