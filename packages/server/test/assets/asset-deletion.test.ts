import { randomUUID } from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import type { RequestStatus } from '../../src/store/schema.js';
import { describeEachDialect } from '../helpers/dialects.js';
import {
  errorWithoutRequestId,
  startGateway,
  shortTimeoutsConfig,
  type TestGateway,
} from '../helpers/gateway.js';
import { png } from '../helpers/media.js';

const config = shortTimeoutsConfig();

describeEachDialect('asset deletion on $name', (dialect) => {
  let gateway: TestGateway;
  afterEach(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  async function setUp(balance = 1_000_000_000) {
    gateway = await startGateway(dialect, { config });
    const owner = await gateway.account(balance);
    const uploaded = await gateway.upload(owner.key, png(4, 4), 'image/png');
    expect(uploaded.statusCode, uploaded.body).toBe(201);
    return { owner, assetId: uploaded.json<{ data: { id: string } }>().data.id };
  }
  const remove = (key: string, assetId: string) =>
    gateway.call('DELETE', `/v1/assets/${assetId}`, { key });
  const chatWith = (
    key: string,
    assetId: string,
    text: string,
    idempotencyKey?: string,
    maxTokens?: number,
  ) =>
    gateway.call('POST', '/v1/chat/completions', {
      key,
      body: {
        model: 'sim-vision',
        messages: [{ role: 'user', content: text }],
        assetIds: [assetId],
        ...(maxTokens === undefined ? {} : { max_tokens: maxTokens }),
      },
      ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
    });
  const statusOf = async (key: string, response: { headers: Record<string, unknown> }) =>
    (
      await gateway.call(
        'GET',
        `/v1/requests/${String(response.headers['x-service-request-id'])}`,
        {
          key,
        },
      )
    ).json<{ status: string }>().status;

  it('deletes an own asset: gone from the list and its content, a second delete is a 404', async () => {
    const { owner, assetId } = await setUp();
    const deleted = await remove(owner.key, assetId);
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(deleted.json()).toEqual({ object: 'asset', id: assetId, deleted: true });
    const list = await gateway.call('GET', '/v1/assets', { key: owner.key });
    expect(list.json<{ data: unknown[] }>().data).toEqual([]);
    const content = await gateway.call('GET', `/v1/assets/${assetId}/content`, { key: owner.key });
    expect(content.statusCode).toBe(404);
    const again = await remove(owner.key, assetId);
    expect(again.statusCode).toBe(404);
    expect(again.json()).toMatchObject({ error: { code: 'NOT_FOUND' } });
    // A deleted asset is no longer a model input.
    const chat = await chatWith(owner.key, assetId, 'describe');
    expect(chat.statusCode).toBe(404);
  });

  it('lets no other account, service key or disabled key delete an asset, and keeps it', async () => {
    const { owner, assetId } = await setUp();
    const stranger = await gateway.account(0);
    const foreign = await remove(stranger.key, assetId);
    const missing = await remove(stranger.key, 'asset_does_not_exist');
    expect(foreign.statusCode).toBe(404);
    expect(errorWithoutRequestId(foreign)).toEqual(
      JSON.parse(
        JSON.stringify(errorWithoutRequestId(missing)).replace('asset_does_not_exist', assetId),
      ),
    );
    const service = await gateway.newKey(owner.accountId, { kind: 'service' });
    const byService = await remove(service.key, assetId);
    expect(byService.statusCode).toBe(403);
    expect(byService.json()).toMatchObject({ error: { code: 'PERMISSION_DENIED' } });
    const other = await gateway.newKey(owner.accountId);
    await gateway.admin('POST', `/admin/v1/keys/${other.keyId}/disable`);
    expect((await remove(other.key, assetId)).statusCode).toBe(401);
    const content = await gateway.call('GET', `/v1/assets/${assetId}/content`, { key: owner.key });
    expect(content.statusCode).toBe(200);
  });

  it('refuses to delete an asset a chat is still using (409 ASSET_IN_USE), and deletes it once the chat is done', async () => {
    const { owner, assetId } = await setUp();
    const running = chatWith(owner.key, assetId, 'slowly [sim:delay=400]');
    await waitForRecord(gateway, 'processing');
    const refused = await remove(owner.key, assetId);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ error: { code: 'ASSET_IN_USE' } });
    const content = await gateway.call('GET', `/v1/assets/${assetId}/content`, { key: owner.key });
    expect(content.statusCode).toBe(200);
    expect((await running).statusCode).toBe(200);
    expect((await remove(owner.key, assetId)).statusCode).toBe(200);
  });

  it('keeps an asset of a submission_unknown request until an operator resolves the request', async () => {
    const { owner, assetId } = await setUp();
    const unknown = await chatWith(owner.key, assetId, 'silence [sim:hang]');
    expect(unknown.statusCode).toBe(504);
    expect(await statusOf(owner.key, unknown)).toBe('submission_unknown');
    const refused = await remove(owner.key, assetId);
    expect(refused.statusCode).toBe(409);
    expect(refused.json<{ error: { message: string } }>().error.message).toContain(
      String(unknown.headers['x-service-request-id']),
    );
    await gateway.admin(
      'POST',
      `/admin/v1/requests/${String(unknown.headers['x-service-request-id'])}/resolve`,
      { action: 'release', reason: 'upstream confirmed it never ran' },
    );
    expect((await remove(owner.key, assetId)).statusCode).toBe(200);
  });

  it('keeps an asset of a result awaiting funds until the original is settled', async () => {
    gateway = await startGateway(dialect, { config });
    const rich = await gateway.account(1_000_000_000);
    // Input reported above the hold (the image's configured tokens plus text) but within the
    // credible bound: billed in full, so the small output cap leaves it awaiting funds.
    const text = 'long answer [sim:extra_prompt_tokens=2900]';
    const richAsset = await gateway.upload(rich.key, png(4, 4), 'image/png');
    const probe = await chatWith(
      rich.key,
      richAsset.json<{ data: { id: string } }>().data.id,
      text,
      undefined,
      5,
    );
    const reserve = (
      await gateway.call('GET', `/v1/requests/${String(probe.headers['x-service-request-id'])}`, {
        key: rich.key,
      })
    ).json<{ reserve: { amount: number } }>().reserve.amount;
    // Exactly the hold is available: the usage above it waits for a top-up.
    const owner = await gateway.account(reserve);
    const uploaded = await gateway.upload(owner.key, png(4, 4), 'image/png');
    const assetId = uploaded.json<{ data: { id: string } }>().data.id;
    const waiting = await chatWith(owner.key, assetId, text, undefined, 5);
    expect(waiting.statusCode).toBe(402);
    expect(await statusOf(owner.key, waiting)).toBe('awaiting_funds');
    expect((await remove(owner.key, assetId)).statusCode).toBe(409);
    await gateway.admin('POST', `/admin/v1/accounts/${owner.accountId}/topups`, {
      amount: 1_000_000_000,
      reference: randomUUID(),
    });
    const requestId = String(waiting.headers['x-service-request-id']);
    const settled = await gateway.call('POST', `/v1/requests/${requestId}/settle`, {
      key: owner.key,
    });
    expect(settled.statusCode, settled.body).toBe(200);
    expect((await remove(owner.key, assetId)).statusCode).toBe(200);
  });

  it('refuses, inside the claim, a use of an asset deleted after the request was read: no record, no hold', async () => {
    const { owner, assetId } = await setUp();
    expect((await remove(owner.key, assetId)).statusCode).toBe(200);
    const principal = await gateway.services.keys.authenticate(owner.key);
    const requestId = `req_${randomUUID()}`;
    const claim = await gateway.services.requests.claim(
      {
        requestId,
        principal,
        idempotencyKey: randomUUID(),
        fingerprint: 'f',
        method: 'POST',
        path: '/v1/chat/completions',
        model: 'sim-vision',
      },
      { amount: 1_000, priceVersion: 'sim-vision@1' },
      [assetId],
    );
    expect(claim).toMatchObject({ kind: 'refused', error: { code: 'NOT_FOUND' } });
    const record = await gateway.services.store.db
      .selectFrom('requests')
      .select('id')
      .where('id', '=', requestId)
      .executeTakeFirst();
    expect(record).toBeUndefined();
    expect((await gateway.balance(owner.accountId)).held).toBe(0);
  });

  it('never lets a deletion and new uses interleave: a chat after the delete is a 404 with no record and no hold', async () => {
    const { owner, assetId } = await setUp();
    // A first batch is in flight; more chats keep arriving while deletion is retried.
    const chats = Array.from({ length: 8 }, (_, index) =>
      chatWith(owner.key, assetId, `first ${index} [sim:delay=60]`),
    );
    await waitForRecord(gateway, 'processing');
    let refusals = 0;
    let deleted = false;
    for (let attempt = 0; attempt < 500 && !deleted; attempt += 1) {
      // New uses race the first attempts; later attempts wait for the chats to drain.
      if (attempt < 20) chats.push(chatWith(owner.key, assetId, `turn ${attempt} [sim:delay=2]`));
      else await new Promise((resolve) => setTimeout(resolve, 10));
      const answer = await remove(owner.key, assetId);
      if (answer.statusCode === 409) refusals += 1;
      else deleted = answer.statusCode === 200;
    }
    expect(deleted).toBe(true);
    expect(refusals).toBeGreaterThan(0);
    chats.push(chatWith(owner.key, assetId, 'after the delete'));
    const answers = await Promise.all(chats);
    for (const answer of answers) expect([200, 404]).toContain(answer.statusCode);
    expect(answers.at(-1)?.statusCode).toBe(404);
    const asset = await gateway.services.store.db
      .selectFrom('assets')
      .select('deleted_at')
      .where('id', '=', assetId)
      .executeTakeFirstOrThrow();
    const users = await gateway.services.store.db
      .selectFrom('asset_uses')
      .innerJoin('requests', 'requests.id', 'asset_uses.request_id')
      .select(['requests.status', 'requests.updated_at'])
      .where('asset_uses.asset_id', '=', assetId)
      .execute();
    // Every chat that used the asset had finished before it was deleted; every other got a 404
    // and left no record behind.
    expect(users.length).toBe(answers.filter((answer) => answer.statusCode === 200).length);
    for (const user of users) {
      expect(user.status).toBe('succeeded');
      expect(user.updated_at).toBeLessThanOrEqual(Number(asset.deleted_at));
    }
    const records = await gateway.services.store.db
      .selectFrom('requests')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('key_id', '=', owner.keyId)
      .where('path', '=', '/v1/chat/completions')
      .executeTakeFirstOrThrow();
    expect(Number(records.count)).toBe(users.length);
    expect((await gateway.balance(owner.accountId)).held).toBe(0);
  });
});

async function waitForRecord(gateway: TestGateway, status: RequestStatus): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const found = await gateway.services.store.db
      .selectFrom('requests')
      .select('id')
      .where('status', '=', status)
      .where('path', '=', '/v1/chat/completions')
      .executeTakeFirst();
    if (found !== undefined) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`no chat record became ${status}`);
}
