import { randomUUID } from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { embeddingsOnlyConfig, startGateway, type TestGateway } from '../helpers/gateway.js';
import { finishedTask, settleBodyOf, type TaskBody } from '../helpers/tasks.js';
import { consoleCall, signedInMember, type Signed } from './console-member.js';

type OwnerTask = TaskBody & { key_id: string };

/** A member whose account's key made an image task that now awaits settlement. */
async function memberWithPricedTask(gateway: TestGateway, balance = 100_000_000) {
  const member = await signedInMember(gateway, balance);
  const created = await gateway.call('POST', '/v1/images/generations', {
    key: member.key,
    body: { model: 'sim-image', prompt: 'a lighthouse', size: '256x256' },
  });
  expect(created.statusCode, created.body).toBe(202);
  const path = `/v1/images/${created.json<TaskBody>().id}`;
  const task = await finishedTask(gateway, member.key, path);
  expect(task.billing.settlement_pending).toBe(true);
  return { ...member, path, task };
}

function settleInConsole(
  gateway: TestGateway,
  signed: Signed,
  taskId: string,
  body: unknown,
  idempotencyKey: string | null = randomUUID(),
) {
  return consoleCall(gateway, 'POST', `/console/api/tasks/${taskId}/settle`, {
    signed,
    body,
    headers: idempotencyKey === null ? {} : { 'idempotency-key': idempotencyKey },
  });
}

describeEachDialect('console tasks on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  it('the owner lists and reads its keys’ tasks, settles one with the exact body once, and previews the delivered image', async () => {
    gateway = await startGateway(dialect);
    const { signed, task, accountId, keyId, key } = await memberWithPricedTask(gateway);
    const listed = await consoleCall(gateway, 'GET', '/console/api/tasks?billing_state=pending', {
      signed,
    });
    expect(listed.statusCode).toBe(200);
    expect(listed.json<{ data: OwnerTask[] }>().data.map((row) => [row.id, row.key_id])).toEqual([
      [task.id, keyId],
    ]);
    const read = await consoleCall(gateway, 'GET', `/console/api/tasks/${task.id}`, { signed });
    expect(read.json<OwnerTask>()).toMatchObject({
      id: task.id,
      key_id: keyId,
      billing: task.billing,
      settlement: { url: `/v1/images/${task.id}/settle` },
    });
    expect(read.json<OwnerTask>().outputs).toBeUndefined();

    const before = await gateway.balance(accountId);
    const amount = task.billing.actual_amount ?? 0;
    const idempotencyKey = randomUUID();
    const settled = await settleInConsole(
      gateway,
      signed,
      task.id,
      settleBodyOf(task),
      idempotencyKey,
    );
    expect(settled.statusCode, settled.body).toBe(200);
    const outputs = settled.json<TaskBody>().outputs ?? [];
    expect(outputs).toHaveLength(1);
    const replay = await settleInConsole(
      gateway,
      signed,
      task.id,
      settleBodyOf(task),
      idempotencyKey,
    );
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(await gateway.balance(accountId)).toEqual({
      balance: before.balance - amount,
      held: 0,
      available: before.balance - amount,
    });

    const assetId = outputs[0]?.asset_id ?? '';
    const preview = await consoleCall(gateway, 'GET', `/console/api/assets/${assetId}/content`, {
      signed,
    });
    expect(preview.statusCode).toBe(200);
    expect(preview.headers['content-type']).toBe(outputs[0]?.media_type);
    expect(preview.rawPayload.length).toBeGreaterThan(0);
    // The settle is the creating key's business POST: the key reads the same delivered task.
    const byKey = await gateway.call('GET', `/v1/images/${task.id}`, { key });
    expect(byKey.json<TaskBody>().billing.state).toBe('settled');
  });

  it('a console settle breaking a rule is refused naming the field and charges nothing', async () => {
    gateway = await startGateway(dialect);
    const { signed, task, accountId } = await memberWithPricedTask(gateway);
    const good = settleBodyOf(task);
    const before = await gateway.balance(accountId);
    const cases: [string, Promise<{ statusCode: number; json: () => unknown }>, number, object][] =
      [
        [
          'no Idempotency-Key',
          settleInConsole(gateway, signed, task.id, good, null),
          400,
          { code: 'INVALID_INPUT', param: 'Idempotency-Key' },
        ],
        [
          'the H3 confirmation word on an image task',
          settleInConsole(gateway, signed, task.id, {
            ...good,
            confirmation: 'settle_original_h3',
          }),
          400,
          { code: 'INVALID_INPUT', param: 'confirmation' },
        ],
        [
          'a wrong amount',
          settleInConsole(gateway, signed, task.id, {
            ...good,
            actual_amount: (good.actual_amount ?? 0) + 1,
          }),
          409,
          { code: 'SETTLEMENT_MISMATCH', param: 'actual_amount' },
        ],
        [
          'an extra field',
          settleInConsole(gateway, signed, task.id, { ...good, model: 'sim-image' }),
          400,
          { code: 'INVALID_INPUT' },
        ],
        [
          'no CSRF token',
          consoleCall(gateway, 'POST', `/console/api/tasks/${task.id}/settle`, {
            signed,
            csrf: false,
            body: good,
            headers: { 'idempotency-key': randomUUID() },
          }),
          403,
          { code: 'PERMISSION_DENIED' },
        ],
      ];
    for (const [name, response, status, error] of cases) {
      const answer = await response;
      expect(answer.statusCode, name).toBe(status);
      expect(answer.json(), name).toMatchObject({ error });
    }
    expect(await gateway.balance(accountId)).toEqual(before);
    const still = await consoleCall(gateway, 'GET', `/console/api/tasks/${task.id}`, { signed });
    expect(still.json<OwnerTask>().billing.state).toBe('pending');
  });

  it('another account’s member gets 404 for the task, its settle and its files; no API key gains anything', async () => {
    gateway = await startGateway(dialect);
    const owner = await memberWithPricedTask(gateway);
    const settled = await settleInConsole(
      gateway,
      owner.signed,
      owner.task.id,
      settleBodyOf(owner.task),
    );
    const assetId = settled.json<TaskBody>().outputs?.[0]?.asset_id ?? '';
    const stranger = await signedInMember(gateway, 100_000_000);
    const before = await gateway.balance(owner.accountId);
    for (const [method, url] of [
      ['GET', `/console/api/tasks/${owner.task.id}`],
      ['POST', `/console/api/tasks/${owner.task.id}/settle`],
      ['GET', `/console/api/assets/${assetId}/content`],
      ['POST', `/console/api/requests/${owner.task.request_id}/settle`],
    ] as const) {
      const answer = await consoleCall(gateway, method, url, {
        signed: stranger.signed,
        ...(method === 'POST'
          ? {
              headers: { 'idempotency-key': randomUUID() },
              ...(url.includes('/tasks/') ? { body: settleBodyOf(owner.task) } : {}),
            }
          : {}),
      });
      expect(answer.statusCode, url).toBe(404);
    }
    const strangerList = await consoleCall(gateway, 'GET', '/console/api/tasks', {
      signed: stranger.signed,
    });
    expect(strangerList.json<{ data: unknown[] }>().data).toEqual([]);
    // Keys: the console's routes open nothing to a key, and a second key of the same account
    // still cannot read the first key's task through /v1.
    const keyOnConsole = await gateway.app.inject({
      method: 'GET',
      url: '/console/api/tasks',
      headers: { authorization: `Bearer ${owner.key}` },
    });
    expect(keyOnConsole.statusCode).toBe(401);
    const sibling = await gateway.newKey(owner.accountId);
    const siblingRead = await gateway.call('GET', owner.path, { key: sibling.key });
    expect(siblingRead.statusCode).toBe(404);
    expect(await gateway.balance(owner.accountId)).toEqual(before);
  });

  it('a bad filter is a 400 naming it', async () => {
    gateway = await startGateway(dialect);
    const { signed } = await signedInMember(gateway);
    const answer = await consoleCall(gateway, 'GET', '/console/api/tasks?status=done', { signed });
    expect(answer.statusCode).toBe(400);
    expect(answer.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param: 'status' } });
  });

  it('after a top-up the owner settles a record awaiting funds from the console, without regenerating', async () => {
    gateway = await startGateway(dialect, { config: embeddingsOnlyConfig(1_000_000) });
    const input = 'hello world [sim:extra_tokens=50]';
    const reserve = Buffer.byteLength(input) + 8;
    const member = await signedInMember(gateway, reserve);
    const first = await gateway.call('POST', '/v1/embeddings', {
      key: member.key,
      body: { model: 'sim-embed', input },
    });
    expect(first.statusCode).toBe(402);
    const requestId = String(first.headers['x-service-request-id']);
    const waiting = await consoleCall(
      gateway,
      'GET',
      '/console/api/requests?status=awaiting_funds',
      {
        signed: member.signed,
      },
    );
    const rows = waiting.json<{ data: { id: string; bill: { amount: number } }[] }>().data;
    expect(rows.map((row) => row.id)).toEqual([requestId]);
    const cost = rows[0]?.bill.amount ?? 0;
    await gateway.admin('POST', `/admin/v1/accounts/${member.accountId}/topups`, {
      amount: cost - reserve,
      reference: randomUUID(),
    });
    const settled = await consoleCall(
      gateway,
      'POST',
      `/console/api/requests/${requestId}/settle`,
      {
        signed: member.signed,
        headers: { 'idempotency-key': randomUUID() },
      },
    );
    expect(settled.statusCode, settled.body).toBe(200);
    expect(settled.json()).toMatchObject({ id: requestId, status: 'succeeded' });
    expect(await gateway.balance(member.accountId)).toEqual({ balance: 0, held: 0, available: 0 });
  });
});
