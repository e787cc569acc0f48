import { afterEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

describeEachDialect('price versions on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  it('creates a new version on a price change, and old records keep the version that priced them', async () => {
    gateway = await startGateway(dialect);
    const { key } = await gateway.account(10_000_000);
    const before = await gateway.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'priced before' },
    });
    const beforeId = String(before.headers['x-service-request-id']);

    const changed = await gateway.admin('PUT', '/admin/v1/models/sim-embed/prices', {
      input_per_million_tokens: 2_000_000,
    });
    expect(changed).toMatchObject({
      model: 'sim-embed',
      price_version: 'sim-embed@2',
      prices: { input_per_million_tokens: 2_000_000 },
    });

    const list = (await gateway.call('GET', '/v1/models', { key })).json<{
      data: { id: string; pricing: Record<string, unknown> }[];
    }>();
    expect(list.data.find((model) => model.id === 'sim-embed')?.pricing).toMatchObject({
      price_version: 'sim-embed@2',
      input_per_million_tokens: 2_000_000,
    });

    const after = await gateway.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'priced after' },
    });
    const afterRecord = (
      await gateway.call('GET', `/v1/requests/${String(after.headers['x-service-request-id'])}`, {
        key,
      })
    ).json<{ bill: { amount: number; price_version: string }; usage: { prompt_tokens: number } }>();
    expect(afterRecord.bill.price_version).toBe('sim-embed@2');
    expect(afterRecord.bill.amount).toBe(
      Math.ceil((afterRecord.usage.prompt_tokens * 2_000_000) / 1_000_000),
    );

    const beforeRecord = (await gateway.call('GET', `/v1/requests/${beforeId}`, { key })).json<{
      bill: { price_version: string };
    }>();
    expect(beforeRecord.bill.price_version).toBe('sim-embed@1');
    const history = await gateway.admin('GET', '/admin/v1/models/sim-embed/prices');
    expect(
      (history['data'] as { price_version: string }[]).map((entry) => entry.price_version),
    ).toEqual(['sim-embed@2', 'sim-embed@1']);
  });

  it('refuses a bad price naming the field, and keeps the current version', async () => {
    gateway = await startGateway(dialect);
    for (const body of [
      { input_per_million_tokens: 1.5 },
      { input_per_million_tokens: -1 },
      { input_per_milion_tokens: 5 },
    ]) {
      const response = await gateway.app.inject({
        method: 'PUT',
        url: '/admin/v1/models/sim-embed/prices',
        headers: { authorization: 'Bearer test-admin-token-0123456789' },
        payload: body,
      });
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json<{ error: { param: string } }>().error.param).toMatch(
        /input_per_mill?ion_tokens|body/,
      );
    }
    expect((await gateway.services.prices.currentFor('sim-embed')).priceVersion).toBe(
      'sim-embed@1',
    );
  });
});
