import { randomUUID } from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import { png } from '../helpers/media.js';

/**
 * Risk: one key with no money floods the review queue — 300 requests to share the same asset in
 * under a second all waited for a person to review them. A repeat for an asset already awaiting
 * review answers that share; an account's pending shares are capped (429 with Retry-After);
 * both hold when the requests race.
 */

interface Share {
  id: string;
  state: string;
  asset_id: string;
}

describeEachDialect('the review queue cannot be flooded, on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  async function start(pendingPerAccount = 20): Promise<TestGateway> {
    const config = testConfig();
    gateway = await startGateway(dialect, {
      config: {
        ...config,
        limits: { ...config.limits, pending_shares_per_account: pendingPerAccount },
      },
    });
    return gateway;
  }

  async function uploadedAsset(client: TestGateway, key: string, width: number): Promise<string> {
    const uploaded = await client.upload(key, png(width, 8), 'image/png');
    expect(uploaded.statusCode, uploaded.body).toBe(201);
    return uploaded.json<{ data: { id: string } }>().data.id;
  }

  function askToShare(client: TestGateway, key: string, assetId: string) {
    return client.call('POST', '/v1/shares', {
      key,
      body: { asset_id: assetId },
      idempotencyKey: randomUUID(),
    });
  }

  async function pendingInQueue(client: TestGateway): Promise<Share[]> {
    const listed = await client.admin('GET', '/admin/v1/shares?state=pending_review');
    return listed['data'] as Share[];
  }

  it('asking again for an asset already awaiting review answers that share (200), queueing nothing', async () => {
    const client = await start();
    const { key } = await client.account(0);
    const assetId = await uploadedAsset(client, key, 16);
    const first = await askToShare(client, key, assetId);
    expect(first.statusCode, first.body).toBe(202);
    const share = first.json<Share>();
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const again = await askToShare(client, key, assetId);
      expect(again.statusCode, again.body).toBe(200);
      expect(again.json<Share>()).toEqual(share);
    }
    expect((await pendingInQueue(client)).map((row) => row.id)).toEqual([share.id]);
    // Once decided, the asset may be asked for again: a new share, a new review.
    await client.admin('POST', `/admin/v1/shares/${share.id}/reject`, { reason: 'not today' });
    const afresh = await askToShare(client, key, assetId);
    expect(afresh.statusCode, afresh.body).toBe(202);
    expect(afresh.json<Share>().id).not.toBe(share.id);
  });

  it('many racing requests for the same asset leave exactly one share awaiting review', async () => {
    const client = await start();
    const { key } = await client.account(0);
    const assetId = await uploadedAsset(client, key, 16);
    const answers = await Promise.all(
      Array.from({ length: 30 }, () => askToShare(client, key, assetId)),
    );
    const statuses = answers.map((answer) => answer.statusCode).sort();
    expect(statuses.filter((status) => status === 202)).toHaveLength(1);
    expect(statuses.filter((status) => status === 200)).toHaveLength(29);
    const ids = new Set(answers.map((answer) => answer.json<Share>().id));
    expect(ids.size).toBe(1);
    expect(await pendingInQueue(client)).toHaveLength(1);
  });

  it('an account at its cap of pending shares is 429 RATE_LIMITED with Retry-After, recording nothing, even when racing', async () => {
    const client = await start(3);
    const { key } = await client.account(0);
    const assets: string[] = [];
    for (let width = 16; width < 26; width += 1)
      assets.push(await uploadedAsset(client, key, width));
    const answers = await Promise.all(assets.map((assetId) => askToShare(client, key, assetId)));
    const accepted = answers.filter((answer) => answer.statusCode === 202);
    const limited = answers.filter((answer) => answer.statusCode === 429);
    expect(accepted).toHaveLength(3);
    expect(limited).toHaveLength(7);
    for (const refused of limited) {
      expect(refused.json()).toMatchObject({ error: { code: 'RATE_LIMITED' } });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    }
    expect(await pendingInQueue(client)).toHaveLength(3);
    const records = await client.services.store.db
      .selectFrom('requests')
      .select('id')
      .where('path', '=', '/v1/shares')
      .execute();
    expect(records).toHaveLength(3);
    // Withdrawing one frees a place.
    const withdrawn = await client.call('DELETE', `/v1/shares/${accepted[0]?.json<Share>().id}`, {
      key,
    });
    expect(withdrawn.statusCode, withdrawn.body).toBe(200);
    const refusedAsset = assets.find(
      (assetId) => !accepted.some((answer) => answer.json<Share>().asset_id === assetId),
    );
    const now = await askToShare(client, key, refusedAsset ?? '');
    expect(now.statusCode, now.body).toBe(202);
  }, 60_000);
});
