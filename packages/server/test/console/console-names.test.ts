import { afterEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { consoleUser, consoleCall as operatorCall } from '../helpers/console-session.js';
import { png } from '../helpers/media.js';
import { finishedRequest, unknownOutcome } from '../helpers/records.js';
import { finishedTask, type TaskBody } from '../helpers/tasks.js';
import { consoleCall, signedInMember } from './console-member.js';

/**
 * Names, not ids (issue 36, item 5; docs/console.md "Names, not ids"): the console's own answers
 * name each key beside its `key_id` (`key_name`, `key_hint`) and, for an operator, each account
 * beside its `account_id` (`account_email`) and a shared task by its kind and model; `/v1`
 * answers stay the spec's, without them.
 */

/** The account's own email (not its member's: a console user has one of their own). */
async function emailOf(gateway: TestGateway, accountId: string): Promise<string> {
  return String((await gateway.admin('GET', `/admin/v1/accounts/${accountId}`))['email']);
}

interface Named {
  key_id: string | null;
  key_name: string | null;
  key_hint: string | null;
}

describeEachDialect('console names on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  it('records, tasks, spend per key, shares and the operator queues name keys and accounts', async () => {
    gateway = await startGateway(dialect);
    const member = await signedInMember(gateway, 50_000_000);
    const accountEmail = await emailOf(gateway, member.accountId);
    const named = await gateway.newKey(member.accountId, { name: 'nightly reports' });
    const keys = (await gateway.admin('GET', `/admin/v1/accounts/${member.accountId}/keys`))[
      'data'
    ] as { id: string; hint: string }[];
    const hintOf = (keyId: string) => keys.find((key) => key.id === keyId)?.hint;
    const hints = { unnamed: hintOf(member.keyId), named: hintOf(named.keyId) };
    expect(hints.named).toMatch(/^tgk_…/);

    const embed = await gateway.call('POST', '/v1/embeddings', {
      key: named.key,
      body: { model: 'sim-embed', input: 'a few words' },
    });
    expect(embed.statusCode, embed.body).toBe(200);
    const embedId = String(embed.headers['x-service-request-id']);
    const unknown = await finishedRequest(gateway.services, {
      key: member.key,
      hold: 5_000,
      outcome: unknownOutcome,
    });
    const created = await gateway.call('POST', '/v1/images/generations', {
      key: named.key,
      body: { model: 'sim-image', prompt: 'a lighthouse', size: '256x256' },
    });
    expect(created.statusCode, created.body).toBe(202);
    const task = await finishedTask(
      gateway,
      named.key,
      `/v1/images/${created.json<TaskBody>().id}`,
    );
    const uploaded = await gateway.upload(member.key, png(16, 16), 'image/png');
    const assetId = uploaded.json<{ data: { id: string } }>().data.id;
    const shared = await gateway.call('POST', '/v1/shares', {
      key: member.key,
      body: { asset_id: assetId },
    });
    expect(shared.statusCode, shared.body).toBe(202);

    const get = async <Answer>(url: string) => {
      const response = await consoleCall(gateway as TestGateway, 'GET', url, {
        signed: member.signed,
      });
      expect(response.statusCode, response.body).toBe(200);
      return response.json<Answer>();
    };

    // Records: the list and one record, each naming its key (a named one, an unnamed one).
    const records = await get<{ data: (Named & { id: string })[] }>('/console/api/requests');
    const byId = new Map(records.data.map((row) => [row.id, row]));
    expect(byId.get(embedId)).toMatchObject({
      key_id: named.keyId,
      key_name: 'nightly reports',
      key_hint: hints.named,
    });
    expect(byId.get(unknown)).toMatchObject({
      key_id: member.keyId,
      key_name: null,
      key_hint: hints.unnamed,
    });
    expect(await get<Named>(`/console/api/requests/${embedId}`)).toMatchObject({
      key_name: 'nightly reports',
      key_hint: hints.named,
    });

    // Tasks: the list and one task.
    const tasks = await get<{ data: (Named & { id: string })[] }>('/console/api/tasks');
    expect(tasks.data.find((row) => row.id === task.id)).toMatchObject({
      key_id: named.keyId,
      key_name: 'nightly reports',
    });
    expect(await get<Named>(`/console/api/tasks/${task.id}`)).toMatchObject({
      key_name: 'nightly reports',
      key_hint: hints.named,
    });

    // Spend per key: the embeddings charged under the named key.
    const spend = await get<{ data: (Named & { amount: number })[] }>('/console/api/usage/keys');
    expect(spend.data.find((row) => row.key_id === named.keyId)).toMatchObject({
      key_name: 'nightly reports',
      key_hint: hints.named,
    });

    // The account's shares: a key's share names its key.
    const shares = await get<{ data: Named[] }>('/console/api/shares');
    expect(shares.data).toEqual([
      expect.objectContaining({ key_id: member.keyId, key_name: null, key_hint: hints.unnamed }),
    ]);

    // `/v1` answers are the spec's: no names added.
    const own = await gateway.call('GET', `/v1/requests?limit=5`, { key: named.key });
    expect(own.statusCode).toBe(200);
    for (const row of own.json<{ data: Record<string, unknown>[] }>().data)
      expect(Object.keys(row)).not.toContain('key_name');
    const ownTask = await gateway.call('GET', `/v1/images/${task.id}`, { key: named.key });
    expect(Object.keys(ownTask.json<Record<string, unknown>>())).not.toContain('key_name');

    // The operator's queues name the account by its email and the key by its name.
    const operator = await consoleUser(gateway, `ops-${dialect.name}@example.test`, 'operator');
    const read = async <Answer>(url: string) => {
      const response = await operatorCall(gateway as TestGateway, operator, 'GET', url);
      expect(response.statusCode, response.body).toBe(200);
      return response.json<Answer>();
    };
    const review = await read<{ data: Record<string, unknown>[] }>(
      '/console/api/admin/shares?state=pending_review',
    );
    expect(review.data).toEqual([
      expect.objectContaining({
        account_id: member.accountId,
        account_email: accountEmail,
        key_name: null,
        key_hint: hints.unnamed,
        task_kind: null,
        task_model: null,
      }),
    ]);
    const unresolved = await read<{ data: Record<string, unknown>[] }>(
      '/console/api/admin/requests/unresolved',
    );
    expect(unresolved.data.find((row) => row['id'] === unknown)).toMatchObject({
      account_email: accountEmail,
      key_id: member.keyId,
      key_hint: hints.unnamed,
    });
    await operatorCall(
      gateway,
      operator,
      'POST',
      `/console/api/admin/requests/${unknown}/resolve`,
      {
        body: { action: 'release', reason: 'never ran' },
      },
    );
  });

  it('a shared task is named by its kind and model on the review card', async () => {
    gateway = await startGateway(dialect);
    const member = await signedInMember(gateway, 50_000_000);
    const accountEmail = await emailOf(gateway, member.accountId);
    const created = await gateway.call('POST', '/v1/images/generations', {
      key: member.key,
      body: { model: 'sim-image', prompt: 'a lighthouse', size: '256x256' },
    });
    const path = `/v1/images/${created.json<TaskBody>().id}`;
    const task = await finishedTask(gateway, member.key, path);
    const settled = await gateway.call('POST', `${path}/settle`, {
      key: member.key,
      body: {
        actual_amount: task.billing.actual_amount,
        price_version: task.billing.price_version,
        confirmation: 'settle_original_approved',
      },
    });
    expect(settled.statusCode, settled.body).toBe(200);
    const shared = await gateway.call('POST', '/v1/shares', {
      key: member.key,
      body: { task_id: task.id },
    });
    expect(shared.statusCode, shared.body).toBe(202);
    const operator = await consoleUser(
      gateway,
      `ops-task-${dialect.name}@example.test`,
      'operator',
    );
    const review = await operatorCall(
      gateway,
      operator,
      'GET',
      '/console/api/admin/shares?state=pending_review',
    );
    expect(review.json<{ data: Record<string, unknown>[] }>().data).toEqual([
      expect.objectContaining({
        task_id: task.id,
        task_kind: 'image',
        task_model: 'sim-image',
        account_email: accountEmail,
      }),
    ]);
  });
});
