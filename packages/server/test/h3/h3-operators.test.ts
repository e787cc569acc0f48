import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { H3Task } from '@tollgate/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { shortTimeoutsConfig, type TestGateway } from '../helpers/gateway.js';
import { finishedH3, h3QuoteAndSubmit } from '../helpers/h3.js';
import { cliIn } from '../helpers/processes.js';
import { startTaskGateway, workUntil } from '../helpers/tasks.js';

/**
 * Risk: an H3 task whose submission was never answered keeps the caller's money held forever, or
 * an operator cannot tell H3 tasks apart. `tollgate tasks list --kind h3`, `show` and `resolve`
 * (the same engine and the same commands as images and videos) find it and release it once, on
 * the SQLite file a running gateway writes.
 */
describe('H3 tasks for operators (CLI)', () => {
  let dataDir: string;
  let gateway: TestGateway | undefined;
  beforeEach(() => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'tollgate-cli-h3-'));
  });
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('lists, shows and releases a submission_unknown H3 task; the hold goes back once', async () => {
    const file = path.join(dataDir, 'tollgate.sqlite');
    gateway = await startTaskGateway(
      { name: 'sqlite', fresh: () => ({ databaseUrl: file }) },
      { config: shortTimeoutsConfig() },
    );
    const client = gateway;
    const { accountId, key } = await client.account(10_000_000);
    const finished = await h3QuoteAndSubmit(client, key, {
      action: 'generate',
      prompt: 'calm sea',
      parameters: { resolution: '480p', duration: 4 },
    });
    // The simulator takes this one and never answers (and never created a job to look up).
    const lost = await h3QuoteAndSubmit(client, key, {
      action: 'generate',
      prompt: 'lost [sim:hang]',
      parameters: { resolution: '480p', duration: 4 },
    });
    const lostId = lost.response.json<H3Task>().id;
    await finishedH3(client, key, finished.response.json<H3Task>().id);
    await workUntil(client, async () => {
      const task = (await client.call('GET', `/v1/h3/tasks/${lostId}`, { key })).json<H3Task>();
      return task.status === 'submission_unknown';
    });
    expect(await client.balance(accountId)).toMatchObject({ held: 160_000 });

    const listed = await cliIn(
      dataDir,
      'tasks',
      'list',
      '--kind',
      'h3',
      '--status',
      'submission_unknown',
    );
    expect(listed.code, JSON.stringify(listed.json)).toBe(0);
    const rows = (listed.json as { data: { id: string; object: string }[] }).data;
    expect(rows.map((row) => [row.id, row.object])).toEqual([[lostId, 'h3.task']]);
    const all = await cliIn(dataDir, 'tasks', 'list', '--kind', 'h3');
    expect((all.json as { data: unknown[] }).data).toHaveLength(2);
    const badKind = await cliIn(dataDir, 'tasks', 'list', '--kind', 'audio');
    expect(badKind.code).toBe(1);

    const shown = await cliIn(dataDir, 'tasks', 'show', lostId);
    expect(shown.json).toMatchObject({
      object: 'h3.task',
      action: 'generate',
      status: 'submission_unknown',
      submission: 'sending',
      account_id: accountId,
    });

    const released = await cliIn(
      dataDir,
      'tasks',
      'resolve',
      lostId,
      '--release',
      '--reason',
      'not at the upstream',
    );
    expect(released.code, JSON.stringify(released.json)).toBe(0);
    expect(released.json).toMatchObject({
      status: 'FAILED',
      billing: { state: 'released', settlement_pending: false },
      resolution: { action: 'release', by: 'operator' },
    });
    const again = await cliIn(
      dataDir,
      'tasks',
      'resolve',
      lostId,
      '--release',
      '--reason',
      'twice',
    );
    expect(again.code).toBe(1);
    expect(await client.balance(accountId)).toMatchObject({ held: 80_000 });
    const read = (await client.call('GET', `/v1/h3/tasks/${lostId}`, { key })).json<H3Task>();
    expect(read).toMatchObject({ status: 'FAILED', error: { code: 'NOT_RUN' } });
    // The finished one is still awaiting settlement; settle it so the ledger closes cleanly.
    const priced = (
      await client.call('GET', `/v1/h3/tasks/${finished.response.json<H3Task>().id}`, { key })
    ).json<H3Task>();
    const settled = await client.call('POST', `/v1/h3/tasks/${priced.id}/settle`, {
      key,
      body: {
        actual_amount: priced.billing.actual_amount,
        price_version: priced.billing.price_version,
        confirmation: 'settle_original_h3',
      },
    });
    expect(settled.statusCode).toBe(200);
  });
});
